// Package commands is the slash-command framework: a registry of commands
// (built-ins now, custom and plugin commands later), the parsing of a
// "/name args" line, and Dispatch, which runs a line the same way for the
// terminal UI and for `coda -p`. A command line never reaches the model as
// typed: a command either answers here or expands to a prompt.
package commands

import (
	"context"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
)

// Kind says what running a command does.
type Kind int

const (
	// Local runs here and prints its output.
	Local Kind = iota
	// LocalUI changes the UI or session state (mode, model, screen).
	LocalUI
	// Prompt expands to a prompt that is sent to the model.
	Prompt
)

// String names the kind as /help shows it.
func (k Kind) String() string {
	switch k {
	case LocalUI:
		return "local-ui"
	case Prompt:
		return "prompt"
	}
	return "local"
}

// Command is one slash command.
type Command struct {
	Name        string // without the slash
	Aliases     []string
	Description string
	// ArgHint shows after the name in the palette: "<name>" for a required
	// argument, "[instructions]" for an optional one.
	ArgHint     string
	ArgRequired bool
	Kind        Kind
	Hidden      bool // runs, but is not listed
	// WhileBusy lets the command run while the model is working; other
	// commands typed then wait for the turn to end, like queued prompts.
	WhileBusy bool
	Run       func(ctx context.Context, c *Context) (Result, error)
}

// Result is what a command produced.
type Result struct {
	Output string // text for the user
	Prompt string // text to send to the model; "" sends nothing
}

// Context is everything a command may use. UI is nil when no one is
// looking at a terminal (`coda -p`); commands then fall back to text.
type Context struct {
	Args     string // the text after the name, trimmed
	Agent    *agent.Agent
	Conv     *llm.Conversation
	Session  Session
	UI       UI
	Settings *config.Loaded // nil when unknown
	Commands *Registry
	// Now is the clock pickers show ages by; nil is time.Now.
	Now func() time.Time
}

func (c *Context) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// UI is the part of the terminal UI a command may drive. Calls made while a
// command runs take effect when it returns.
type UI interface {
	// Clear starts a fresh screen for a new conversation.
	Clear()
	PermissionMode() string
	SetPermissionMode(mode string)
	// Choose opens a picker. The title's first line heads it; any further
	// lines are a note shown under it. When the user picks, then runs with
	// the chosen value and its result is shown like a command's; then may
	// open the next picker (a question that follows from the answer).
	Choose(title string, choices []Choice, then func(ctx context.Context, value string) (Result, error))
	// SetInput puts text in the input box, to be edited and sent.
	SetInput(text string)
	// Reload shows the conversation again from its start: a command
	// replaced the agent's messages (/rewind).
	Reload()
	// Exit ends the session.
	Exit()
}

// Choice is one entry of a picker.
type Choice struct {
	Value   string
	Label   string
	Detail  string
	Current bool
	// Key picks the choice with one key press ("y", "n") besides its
	// number.
	Key string
}

// Session is the app's side of a running session.
type Session interface {
	Info() Info
	// Models lists the models the user may switch to.
	Models() []llm.ModelInfo
	// SetModel switches the agent to the named model.
	SetModel(name string) (llm.ModelInfo, error)
	// AddRule saves a permission rule ("allow", "ask" or "deny") to the
	// project's local settings and applies it now; it returns the file.
	AddRule(list, rule string) (string, error)
	// Compactor is nil until compaction exists.
	Compactor() agent.Compactor
	// Clear starts a new conversation: the messages go (in the transcript
	// too), and project instructions will be sent again.
	Clear() error
	// ContextParts is what every request carries besides the messages.
	ContextParts() ContextParts
}

// Info describes the session for /status.
type Info struct {
	Version        string
	SessionID      string
	Cwd            string
	PermissionMode string // the mode at start; the UI knows the current one
}

// ContextParts is the fixed part of every request, for /context.
type ContextParts struct {
	System string
	Tools  []llm.ToolSpec
	// Instructions are the project instructions (AGENTS.md) when they are
	// sent apart from System.
	Instructions string
}

// ManualCompactor is a Compactor that takes the user's instructions for
// what the summary must keep (/compact <instructions>).
type ManualCompactor interface {
	CompactWith(ctx context.Context, conv *llm.Conversation, instructions string) error
}
