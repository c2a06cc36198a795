package app

import (
	"context"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/compact"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/prompt"
	"github.com/coda-cli/coda/internal/tools"
)

// contextFeatures are the context-engineering seams of the agent: project
// instructions and other reminders, tool-result budgeting, compaction.
type contextFeatures struct {
	Compactor      agent.Compactor
	ProcessResults func([]llm.ToolResult) []llm.ToolResult
	Reminders      func() []string

	// Compact is the same compactor, for /compact (CompactNow) and the
	// estimate /context shows.
	Compact *compact.Compactor
	// Project holds the loaded instructions: /context lists them, /clear
	// calls Reset so a new conversation gets them again.
	Project *prompt.Project
	// Registry takes further reminder sources (plan mode, hooks, background
	// results) under their names.
	Registry *prompt.Reminders
}

// contextInput is what building the features may use.
type contextInput struct {
	Cwd        string
	Home       string
	Settings   config.Settings
	SessionDir string             // where tool results are persisted
	Model      func() agent.Model // the model in use (changes on fallback or /model)
	Env        *tools.Env         // the agent's tool environment

	// System and Tools are what the agent sends with every request. The
	// summary request sends the same, so the provider's cached prefix
	// (tools, system prompt) still serves it.
	System string
	Tools  *tools.Registry
	// Conversation is what a resumed session already holds.
	Conversation []llm.Message
	// OnBoundary is told of each compaction (stream-json compact_boundary,
	// the session transcript). nil drops them.
	OnBoundary func(compact.Boundary)
}

// Reminder source names, in the order they are asked.
const (
	reminderInstructions = "instructions"
	reminderTouched      = "touched-files"
	reminderChanged      = "changed-files"
	reminderTodos        = "todos"
)

func newContextFeatures(_ context.Context, in contextInput) (contextFeatures, error) {
	project := prompt.LoadProject(in.Home, in.Cwd)
	project.AlreadySent(in.Conversation)
	reg := prompt.NewReminders()
	reg.Register(reminderInstructions, project.StartReminder())
	if in.Env != nil {
		reg.Register(reminderTouched, project.TouchReminder(in.Env.Files))
		reg.Register(reminderChanged, prompt.ChangedFiles(in.Env.Files))
		reg.Register(reminderTodos, prompt.TodoNudge(in.Env.Todos, prompt.DefaultTodoNudgeAfter))
	}
	var specs func() []llm.ToolSpec
	if in.Tools != nil {
		specs = in.Tools.Specs
	}
	c := compact.New(compact.Options{
		Model: func() (llm.Provider, llm.ModelInfo) {
			m := in.Model()
			return m.Provider, m.Info
		},
		System:       in.System,
		Tools:        specs,
		Dir:          in.SessionDir,
		Env:          in.Env,
		Instructions: project.Loaded,
		OnBoundary:   in.OnBoundary,
	})
	return contextFeatures{
		Compactor:      c,
		ProcessResults: c.ProcessResults,
		Reminders:      reg.Collect,
		Compact:        c,
		Project:        project,
		Registry:       reg,
	}, nil
}
