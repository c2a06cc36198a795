package tui

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/llm/anthropic"
	"github.com/coda-cli/coda/internal/llm/llmtest"
	"github.com/coda-cli/coda/internal/tools"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata")

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness drives a Model the way bubbletea does: each message goes
// through Update, the commands it returns run on goroutines, and their
// messages come back in order. Printed text is the scrollback.
type harness struct {
	t        *testing.T
	m        *Model
	clock    *clock
	msgs     chan tea.Msg
	printed  strings.Builder
	quit     bool
	modes    []string
	shellRun []string
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	return newHarnessSize(t, o, 100, 30)
}

// newHarnessSize starts the UI in a terminal of the given size.
func newHarnessSize(t *testing.T, o Options, width, height int) *harness {
	t.Helper()
	c := &clock{now: time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)}
	h := &harness{t: t, clock: c, msgs: make(chan tea.Msg, 4096)}
	o.Now = c.Now
	if o.Commands == nil {
		o.Commands = commands.NewRegistry(commands.Builtins()...)
	}
	if o.Version == "" {
		o.Version = "test"
	}
	if o.SetMode == nil {
		o.SetMode = func(mode string) { h.modes = append(h.modes, mode) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.m = New(ctx, o)
	h.m.profile = colorprofile.NoTTY
	h.m.printer = func(s string) tea.Cmd {
		h.printed.WriteString(stripANSI(s) + "\n")
		return func() tea.Msg { return printedMsg{} }
	}
	t.Cleanup(func() {
		h.m.Close()
		cancel()
	})
	h.send(tea.WindowSizeMsg{Width: width, Height: height})
	h.exec(h.m.Init())
	return h
}

func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.msgs <- cmd() }()
}

func (h *harness) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.exec(c)
		}
	case tea.QuitMsg:
		h.quit = true
	default:
		h.send(msg)
	}
}

// settle handles messages until cond holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.handle(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, h.screen())
		}
	}
}

// waitScreen waits until the screen contains want.
func (h *harness) waitScreen(want string) {
	h.t.Helper()
	h.waitFor("the screen to show "+want, func() bool { return strings.Contains(h.screen(), want) })
}

// idle waits until nothing runs.
func (h *harness) idle() {
	h.t.Helper()
	h.waitFor("the run to end", func() bool { return !h.m.isBusy() })
}

// view is the live part of the screen, without colours.
func (h *harness) view() string { return stripANSI(h.m.View().Content) }

// screen is the scrollback and the live part.
func (h *harness) screen() string { return h.printed.String() + h.view() }

// press sends keys by name: "enter", "ctrl+c", "shift+tab", "a".
func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

// typeText types s one key at a time.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	var mod tea.KeyMod
	base := name
	for {
		switch {
		case strings.HasPrefix(base, "ctrl+"):
			mod |= tea.ModCtrl
			base = base[5:]
			continue
		case strings.HasPrefix(base, "shift+"):
			mod |= tea.ModShift
			base = base[6:]
			continue
		case strings.HasPrefix(base, "alt+"):
			mod |= tea.ModAlt
			base = base[4:]
			continue
		}
		break
	}
	codes := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"backspace": tea.KeyBackspace, "home": tea.KeyHome, "end": tea.KeyEnd, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown}
	if c, ok := codes[base]; ok {
		return tea.KeyPressMsg{Code: c, Mod: mod}
	}
	r := []rune(base)[0]
	if mod == 0 {
		return tea.KeyPressMsg{Code: r, Text: base}
	}
	return tea.KeyPressMsg{Code: r, Mod: mod}
}

// askingGate asks before every tool that changes something.
type askingGate struct{}

func (askingGate) Check(_ context.Context, t tools.Tool, use llm.ToolUse) agent.Verdict {
	if t.ReadOnly() {
		return agent.Verdict{Behavior: agent.Allow}
	}
	return agent.Verdict{Behavior: agent.Ask, Reason: "test gate", Suggestions: []string{use.Name}}
}

func (askingGate) Remember(llm.ToolUse, agent.Verdict, agent.Approval) {}

// session is an agent talking to the wire fake, in a temporary project.
type session struct {
	srv *llmtest.Server
	dir string
	env *tools.Env
	ag  *agent.Agent
}

func newSession(t *testing.T) *session {
	t.Helper()
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	env := tools.NewEnv(dir)
	t.Cleanup(env.Close)
	reg := tools.NewRegistry(tools.NewBash(), tools.NewTodoWrite())
	p := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "test-key"})
	a := agent.New(agent.Config{
		Model: agent.Model{Provider: p, Info: llm.ModelInfo{Provider: "anthropic", ID: "claude-sonnet-4-5",
			ContextWindow: 200000, MaxOutputTokens: 32000, InputPrice: 3, OutputPrice: 15}},
		Tools: reg, Env: env, Gate: askingGate{},
		Retry: agent.RetryPolicy{MaxAttempts: 2, Base: time.Millisecond, Max: time.Millisecond},
	})
	return &session{srv: srv, dir: dir, env: env, ag: a}
}

func (s *session) options() Options {
	return Options{Agent: s.ag, Env: s.env, ProjectDir: s.dir}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeSession is the app side of commands, recording what was asked.
type fakeSession struct {
	models []llm.ModelInfo
	set    string
}

func (f *fakeSession) Info() commands.Info     { return commands.Info{Version: "test"} }
func (f *fakeSession) Models() []llm.ModelInfo { return f.models }
func (f *fakeSession) SetModel(name string) (llm.ModelInfo, error) {
	f.set = name
	for _, m := range f.models {
		if m.Key() == name {
			return m, nil
		}
	}
	return llm.ModelInfo{}, fmt.Errorf("unknown model %q", name)
}
func (f *fakeSession) AddRule(list, rule string) (string, error) {
	return ".coda/settings.local.json", nil
}
func (f *fakeSession) Compactor() agent.Compactor          { return nil }
func (f *fakeSession) Clear() error                        { return nil }
func (f *fakeSession) ContextParts() commands.ContextParts { return commands.ContextParts{} }

// newRegistryWith is the built-ins plus a command that needs an argument.
func newRegistryWith(t *testing.T, name, hint string) *commands.Registry {
	t.Helper()
	reg := commands.NewRegistry(commands.Builtins()...)
	reg.Register(&commands.Command{Name: name, ArgHint: hint, ArgRequired: true, Description: "test",
		Run: func(context.Context, *commands.Context) (commands.Result, error) {
			return commands.Result{Output: "ran"}, nil
		}})
	return reg
}

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
