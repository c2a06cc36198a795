package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed todowrite.md
var todoWriteDescription string

type todoWriteInput struct {
	Todos []Todo `json:"todos" jsonschema_description:"The whole updated todo list; it replaces the previous one."`
}

// TodoWrite replaces the agent's todo list.
type TodoWrite struct{}

// NewTodoWrite returns the TodoWrite tool.
func NewTodoWrite() *TodoWrite { return &TodoWrite{} }

func (*TodoWrite) Name() string                 { return "TodoWrite" }
func (*TodoWrite) Description() string          { return todoWriteDescription }
func (*TodoWrite) InputSchema() json.RawMessage { return SchemaFor[todoWriteInput]() }

// ReadOnly is true: the list is the agent's own state, nothing in the
// user's world changes, so plan mode allows it.
func (*TodoWrite) ReadOnly() bool                             { return true }
func (*TodoWrite) ConcurrencySafe(input json.RawMessage) bool { return false }

func (*TodoWrite) Run(ctx context.Context, call Call) Result {
	in, err := Decode[todoWriteInput](call.Input)
	if err != nil {
		return Errorf("TodoWrite: %v", err)
	}
	counts := map[string]int{}
	for i, t := range in.Todos {
		switch {
		case strings.TrimSpace(t.Content) == "":
			return Errorf("TodoWrite: todos[%d].content is empty; every todo needs a description of the task", i)
		case strings.TrimSpace(t.ActiveForm) == "":
			return Errorf("TodoWrite: todos[%d].activeForm is empty; give the present-continuous form of the task (e.g. \"Running tests\")", i)
		}
		switch t.Status {
		case "pending", "in_progress", "completed":
			counts[t.Status]++
		default:
			return Errorf("TodoWrite: todos[%d].status is %q; it must be one of pending, in_progress, completed", i, t.Status)
		}
	}
	if call.Env.Todos == nil {
		return Errorf("TodoWrite: no todo list is available here")
	}
	call.Env.Todos.Set(in.Todos)
	text := fmt.Sprintf("Todo list updated: %d pending, %d in progress, %d completed. Keep it current as you work: mark a task in_progress before starting it and completed as soon as it is done.",
		counts["pending"], counts["in_progress"], counts["completed"])
	if len(in.Todos) == 0 {
		text = "Todo list cleared."
	}
	return Result{Content: TextResult(text).Content, Display: call.Env.Todos.List()}
}
