package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func todoWrite(t *testing.T, env *Env, in string) Result {
	t.Helper()
	return NewTodoWrite().Run(context.Background(), Call{Input: json.RawMessage(in), Env: env})
}

func TestTodoWriteReplacesTheList(t *testing.T) {
	env := NewEnv(t.TempDir())
	env.Todos.Set([]Todo{{Content: "old", Status: "pending", ActiveForm: "Olding"}})
	r := todoWrite(t, env, `{"todos": [
		{"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
		{"content": "Fix bug", "status": "in_progress", "activeForm": "Fixing bug"},
		{"content": "Ship", "status": "pending", "activeForm": "Shipping"}]}`)
	if r.IsError || !strings.Contains(r.Text(), "1 pending, 1 in progress, 1 completed") {
		t.Fatalf("result: %s", r.Text())
	}
	list := env.Todos.List()
	if len(list) != 3 || list[1] != (Todo{Content: "Fix bug", Status: "in_progress", ActiveForm: "Fixing bug"}) {
		t.Errorf("list %+v", list)
	}
	if d, ok := r.Display.([]Todo); !ok || len(d) != 3 || d[0].Content != "Write tests" {
		t.Errorf("display %#v", r.Display)
	}
	if r := todoWrite(t, env, `{"todos": []}`); r.IsError || len(env.Todos.List()) != 0 || !strings.Contains(r.Text(), "cleared") {
		t.Errorf("clearing: %s, %v", r.Text(), env.Todos.List())
	}
}

func TestTodoWriteValidates(t *testing.T) {
	env := NewEnv(t.TempDir())
	keep := []Todo{{Content: "keep", Status: "pending", ActiveForm: "Keeping"}}
	env.Todos.Set(keep)
	for in, want := range map[string]string{
		`{}`: `missing required parameter "todos"`,
		`{"todos": [{"content": "x", "status": "done", "activeForm": "X-ing"}]}`:                                           `todos[0].status is "done"`,
		`{"todos": [{"content": " ", "status": "pending", "activeForm": "X-ing"}]}`:                                        "todos[0].content is empty",
		`{"todos": [{"content": "a", "status": "pending", "activeForm": "A-ing"}, {"content": "b", "status": "pending"}]}`: "todos[1].activeForm is empty",
		`{"todos": "write code"}`: `parameter "todos" must be an array`,
	} {
		r := todoWrite(t, env, in)
		if !r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("%s: got %q, want an error with %q", in, r.Text(), want)
		}
	}
	if got := env.Todos.List(); len(got) != 1 || got[0] != keep[0] {
		t.Errorf("an invalid call changed the list: %+v", got)
	}
}
