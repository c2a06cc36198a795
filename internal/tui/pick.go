package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/commands"
)

// PickOptions describe a picker shown on its own, before a session starts.
type PickOptions struct {
	Title   string // first line heads it; further lines are a note
	Choices []commands.Choice
	In      io.Reader
	Out     io.Writer
	// Terminal draws the picker with the keyboard; otherwise the choices
	// are listed and a number is read from In.
	Terminal bool
	Env      []string
	Profile  colorprofile.Profile
}

// Pick asks the user to choose one of o.Choices (coda --resume without an
// id) and returns its value, or "" when the user cancelled.
func Pick(ctx context.Context, o PickOptions) (string, error) {
	if !o.Terminal {
		return pickPlain(o)
	}
	m := &pickModel{p: newPicker(o.Title, o.Choices, nil), th: newTheme(), width: 80}
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(o.In),
		tea.WithOutput(o.Out),
		tea.WithEnvironment(o.Env),
		tea.WithColorProfile(o.Profile),
	)
	if _, err := p.Run(); err != nil {
		if ctx.Err() != nil {
			return "", nil
		}
		return "", fmt.Errorf("terminal UI: %w", err)
	}
	return m.chosen, nil
}

// pickModel is the bubbletea program of Pick.
type pickModel struct {
	p      *picker
	th     theme
	width  int
	chosen string
	done   bool
}

func (m *pickModel) Init() tea.Cmd { return nil }

func (m *pickModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = max(msg.Width, 20)
	case tea.KeyPressMsg:
		if value, done := m.p.key(msg); done {
			m.chosen, m.done = value, true
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *pickModel) View() tea.View {
	if m.done {
		return tea.NewView("")
	}
	return tea.NewView(m.p.view(&m.th, m.width))
}

// pickPlain lists the choices and reads a number (or a choice's key).
func pickPlain(o PickOptions) (string, error) {
	fmt.Fprintln(o.Out, o.Title)
	for i, c := range o.Choices {
		line := fmt.Sprintf("  %d. %s", i+1, c.Label)
		if c.Detail != "" {
			line += "  (" + c.Detail + ")"
		}
		fmt.Fprintln(o.Out, line)
	}
	fmt.Fprint(o.Out, "Number (Enter to cancel): ")
	line, err := ReadRawLine(o.In)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the choice: %w", err)
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", nil
	}
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(o.Choices) {
		return o.Choices[n-1].Value, nil
	}
	for _, c := range o.Choices {
		if c.Value == line || (c.Key != "" && strings.EqualFold(c.Key, line)) {
			return c.Value, nil
		}
	}
	return "", fmt.Errorf("no choice %q", line)
}

// ReadRawLine reads up to a newline one byte at a time: what follows stays
// unread for whoever reads r next (the session's own input).
func ReadRawLine(r io.Reader) (string, error) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := r.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(c[0])
			continue
		}
		if err != nil {
			return b.String(), err
		}
	}
}
