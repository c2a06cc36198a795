// Package tui is coda's interactive terminal UI. It consumes the agent's
// events and answers its approval requests; it never calls the model. The
// conversation scrolls by in the terminal's own scrollback (finished
// entries are printed once), while the bottom of the screen is redrawn:
// the answer being streamed, running tool calls, the todo list, the
// input, and a status line.
//
// The screen is split into components, each with its own file: the
// transcript and its entries, the markdown renderer, the input editor and
// its history, the completion popup, the approval dialog, the picker, the
// transcript pager and the status line. plain.go is the line-by-line
// fallback used when standard output is not a terminal.
package tui

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/tools"
)

// Options wire the UI to a session.
type Options struct {
	Agent    *agent.Agent
	Env      *tools.Env // the agent's: todos, background shells, files
	Commands *commands.Registry
	Session  commands.Session
	// Settings returns the settings in effect (reloaded, so rules saved
	// during the session show); nil when unknown.
	Settings func() *config.Loaded

	ProjectDir string
	Version    string
	// HistoryPath is the prompt history file (JSON lines); "" keeps the
	// history for this session only.
	HistoryPath string

	// Mode is the permission mode at start. SetMode is told every change
	// (Shift+Tab, /plan); nil keeps the mode as UI state only.
	Mode    string
	SetMode func(mode string)

	// Notes are shown once at the start (a resumed session's repairs,
	// permission warnings).
	Notes []string
	// Info is shown once at the start, after the conversation so far
	// (which session /resume switched to).
	Info []string
	// Save makes the session transcript durable; it is called after each
	// turn, off the UI goroutine.
	Save func() error

	// RunShell runs a "!" line through the Bash tool. nil disables "!".
	RunShell func(ctx context.Context, command string) tools.Result
	// Files lists project files for @ completion, relative to ProjectDir;
	// nil asks git (and walks the directory outside a repository).
	Files func(ctx context.Context) ([]string, error)

	// Profile is the terminal's colour profile; colorprofile.NoTTY draws
	// without any escape sequences (NO_COLOR gives ASCII: no colours).
	Profile colorprofile.Profile
	// Now is the clock (tests set it); nil is time.Now.
	Now func() time.Time
}

// Run shows the UI on the terminal at in/out until the user leaves. It
// returns once the agent's run (if any) has stopped.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer, env []string) error {
	m := New(ctx, o)
	defer m.Close()
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(out),
		tea.WithEnvironment(env),
		tea.WithColorProfile(o.Profile),
	)
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
