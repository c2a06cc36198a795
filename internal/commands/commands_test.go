package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
)

type fakeSession struct {
	cleared   int
	compactor agent.Compactor
	rules     [][2]string
	model     string
}

func (f *fakeSession) Info() Info {
	return Info{Version: "1.2.3", SessionID: "sess-1", Cwd: "/p", PermissionMode: "default"}
}
func (f *fakeSession) Models() []llm.ModelInfo {
	return []llm.ModelInfo{{Provider: "anthropic", ID: "claude-sonnet-4-5", ContextWindow: 200000, InputPrice: 3, OutputPrice: 15},
		{Provider: "anthropic", ID: "claude-haiku-4-5", ContextWindow: 200000}}
}
func (f *fakeSession) SetModel(name string) (llm.ModelInfo, error) {
	for _, m := range f.Models() {
		if m.Key() == name || m.ID == name {
			f.model = m.Key()
			return m, nil
		}
	}
	return llm.ModelInfo{}, errors.New("unknown model " + name)
}
func (f *fakeSession) AddRule(list, rule string) (string, error) {
	f.rules = append(f.rules, [2]string{list, rule})
	return ".coda/settings.local.json", nil
}
func (f *fakeSession) Compactor() agent.Compactor { return f.compactor }
func (f *fakeSession) Clear() error               { f.cleared++; return nil }
func (f *fakeSession) ContextParts() ContextParts {
	return ContextParts{System: strings.Repeat("s", 4000), Tools: []llm.ToolSpec{{Name: "Bash", Description: strings.Repeat("d", 796)}}}
}

type fakeUI struct {
	mode     string
	cleared  bool
	exited   bool
	reloaded bool
	input    *string
	title    string
	choices  []Choice
	then     func(context.Context, string) (Result, error)
}

func (u *fakeUI) Clear()                        { u.cleared = true }
func (u *fakeUI) PermissionMode() string        { return u.mode }
func (u *fakeUI) SetPermissionMode(mode string) { u.mode = mode }
func (u *fakeUI) Exit()                         { u.exited = true }
func (u *fakeUI) SetInput(text string)          { u.input = &text }
func (u *fakeUI) Reload()                       { u.reloaded = true }
func (u *fakeUI) Choose(title string, choices []Choice, then func(context.Context, string) (Result, error)) {
	u.title, u.choices, u.then = title, choices, then
}

// pick answers the open picker with value, as the UI would, and closes
// it first: the follow-up may open the next one.
func (u *fakeUI) pick(t *testing.T, value string) Result {
	t.Helper()
	if u.then == nil {
		t.Fatal("no picker is open")
	}
	then := u.then
	u.then, u.title, u.choices = nil, "", nil
	res, err := then(context.Background(), value)
	if err != nil {
		t.Fatalf("picking %q: %v", value, err)
	}
	return res
}

func testContext(ui UI) (Context, *fakeSession) {
	s := &fakeSession{}
	a := agent.New(agent.Config{Model: agent.Model{Info: llm.ModelInfo{Provider: "anthropic", ID: "claude-sonnet-4-5", ContextWindow: 200000}}})
	c := Context{Agent: a, Conv: a.Conversation(), Session: s, Commands: NewRegistry(Builtins()...)}
	if ui != nil {
		c.UI = ui
	}
	return c, s
}

func run(t *testing.T, c Context, line string) Outcome {
	t.Helper()
	out, err := Dispatch(context.Background(), line, c)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if !out.Handled {
		t.Fatalf("%s was not handled", line)
	}
	return out
}

func TestParse(t *testing.T) {
	cases := []struct {
		line, name, args string
		ok               bool
	}{
		{"/help", "help", "", true},
		{"/compact  keep the API notes ", "compact", "keep the API notes", true},
		{"/frontend:component x", "frontend:component", "x", true},
		{"/usr/bin/env is broken", "", "", false},
		{"hello /help", "", "", false},
		{"/", "", "", false},
		{"/model\nsonnet", "model", "sonnet", true},
	}
	for _, c := range cases {
		name, args, ok := Parse(c.line)
		if name != c.name || args != c.args || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %q, %v", c.line, name, args, ok)
		}
	}
}

func TestDispatchLeavesPromptsAlone(t *testing.T) {
	c, _ := testContext(nil)
	out, err := Dispatch(context.Background(), "fix /usr/local/bin/tool", c)
	if err != nil || out.Handled {
		t.Fatalf("a prompt was handled: %+v %v", out, err)
	}
}

func TestUnknownCommandSuggestsTheNearest(t *testing.T) {
	c, _ := testContext(nil)
	for line, want := range map[string]string{
		"/hlep":    "Unknown command /hlep. Did you mean /help?",
		"/stauts":  "Did you mean /status?",
		"/modle x": "Did you mean /model?",
		"/qwerty":  "Unknown command /qwerty. Type /help for the list.",
	} {
		_, err := Dispatch(context.Background(), line, c)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

func TestMissingArgumentShowsTheHint(t *testing.T) {
	c, _ := testContext(nil)
	c.Commands.Register(&Command{Name: "rename", ArgHint: "<name>", ArgRequired: true,
		Run: func(context.Context, *Context) (Result, error) { return Result{}, nil }})
	_, err := Dispatch(context.Background(), "/rename", c)
	if err == nil || err.Error() != "/rename needs an argument: /rename <name>" {
		t.Fatalf("err = %v", err)
	}
}

func TestAliasesAndHiddenCommands(t *testing.T) {
	c, _ := testContext(&fakeUI{})
	c.Commands.Register(&Command{Name: "secret", Hidden: true,
		Run: func(context.Context, *Context) (Result, error) { return Result{Output: "shh"}, nil }})
	if out := run(t, c, "/quit"); out.Command.Name != "exit" {
		t.Errorf("/quit ran %s", out.Command.Name)
	}
	if out := run(t, c, "/secret"); out.Output != "shh" {
		t.Error("a hidden command does not run")
	}
	if strings.Contains(run(t, c, "/help").Output, "secret") {
		t.Error("/help lists a hidden command")
	}
	for _, name := range c.Commands.Names() {
		if name == "secret" {
			t.Error("Names lists a hidden command")
		}
	}
}

func TestHelpListsCommandsWithHints(t *testing.T) {
	c, _ := testContext(nil)
	out := run(t, c, "/help").Output
	for _, want := range []string{"/compact [instructions]", "/model [name]", "/init", "Start a new conversation"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Shift+Tab") {
		t.Error("help without a UI lists keys")
	}
}

func TestClearStartsANewConversation(t *testing.T) {
	ui := &fakeUI{}
	c, _ := testContext(ui)
	c.Conv.Append(llm.UserText("old"))
	run(t, c, "/clear")
	if c.Conv.Len() != 0 || !ui.cleared {
		t.Fatalf("conversation %d messages, cleared=%v", c.Conv.Len(), ui.cleared)
	}
}

type recordingCompactor struct{ instructions string }

func (r *recordingCompactor) Compact(_ context.Context, conv *llm.Conversation, _ bool) error {
	conv.Replace([]llm.Message{llm.UserText("summary")})
	return nil
}

func (r *recordingCompactor) CompactWith(ctx context.Context, conv *llm.Conversation, instructions string) error {
	r.instructions = instructions
	return r.Compact(ctx, conv, true)
}

func TestCompact(t *testing.T) {
	c, s := testContext(nil)
	if out := run(t, c, "/compact"); !strings.Contains(out.Output, "not available") {
		t.Errorf("without a compactor: %q", out.Output)
	}
	comp := &recordingCompactor{}
	s.compactor = comp
	c.Conv.Append(llm.UserText("a"), llm.UserText("b"), llm.UserText("c"))
	out := run(t, c, "/compact keep the test names")
	if comp.instructions != "keep the test names" || !strings.Contains(out.Output, "3 messages -> 1") {
		t.Errorf("compact: %q, instructions %q", out.Output, comp.instructions)
	}
}

func TestModelSwitchesByNameOrPicker(t *testing.T) {
	c, s := testContext(nil)
	if out := run(t, c, "/model claude-haiku-4-5"); out.Output != "Model set to anthropic/claude-haiku-4-5." || s.model != "anthropic/claude-haiku-4-5" {
		t.Errorf("by name: %q", out.Output)
	}
	if _, err := Dispatch(context.Background(), "/model nope", c); err == nil {
		t.Error("an unknown model was accepted")
	}
	list := run(t, c, "/model").Output
	if !strings.Contains(list, "* anthropic/claude-sonnet-4-5") || !strings.Contains(list, "anthropic/claude-haiku-4-5") {
		t.Errorf("without a UI /model lists:\n%s", list)
	}
	ui := &fakeUI{}
	c.UI = ui
	run(t, c, "/model")
	if len(ui.choices) != 2 || !ui.choices[0].Current || ui.then == nil {
		t.Fatalf("picker choices: %+v", ui.choices)
	}
	res, err := ui.then(context.Background(), "anthropic/claude-haiku-4-5")
	if err != nil || !strings.Contains(res.Output, "claude-haiku-4-5") {
		t.Errorf("picking: %q %v", res.Output, err)
	}
}

func TestPlanTogglesAndSendsItsPrompt(t *testing.T) {
	ui := &fakeUI{mode: "default"}
	c, _ := testContext(ui)
	run(t, c, "/plan")
	if ui.mode != "plan" {
		t.Fatalf("mode = %s", ui.mode)
	}
	run(t, c, "/plan")
	if ui.mode != "default" {
		t.Fatalf("mode = %s", ui.mode)
	}
	if out := run(t, c, "/plan add caching to the API"); ui.mode != "plan" || out.Prompt != "add caching to the API" {
		t.Errorf("plan with a prompt: mode %s, prompt %q", ui.mode, out.Prompt)
	}
	c.UI = nil
	if _, err := Dispatch(context.Background(), "/plan", c); err == nil {
		t.Error("/plan without a UI should explain itself")
	}
}

func TestStatusShowsVersionModelAndSettingsFiles(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".coda", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions":{"allow":["Bash(npm test)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := config.Load(config.Options{ProjectDir: dir, ManagedDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := testContext(&fakeUI{mode: "acceptEdits"})
	c.Settings = loaded
	out := run(t, c, "/status").Output
	for _, want := range []string{"coda 1.2.3", "sess-1", "anthropic/claude-sonnet-4-5", "acceptEdits", settings} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	perms := run(t, c, "/permissions").Output
	if !strings.Contains(perms, "Allow:\n  Bash(npm test)  (project: "+settings+")") || !strings.Contains(perms, "Permission mode: acceptEdits") {
		t.Errorf("permissions:\n%s", perms)
	}
}

func TestPermissionsAddsRules(t *testing.T) {
	c, s := testContext(nil)
	out := run(t, c, "/permissions allow Bash(npm run test *)")
	if len(s.rules) != 1 || s.rules[0] != [2]string{"allow", "Bash(npm run test *)"} || !strings.Contains(out.Output, ".coda/settings.local.json") {
		t.Fatalf("rules %v, output %q", s.rules, out.Output)
	}
	for _, bad := range []string{"/permissions maybe Bash", "/permissions deny"} {
		if _, err := Dispatch(context.Background(), bad, c); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestCostAndContext(t *testing.T) {
	c, _ := testContext(nil)
	if out := run(t, c, "/cost").Output; !strings.Contains(out, "Total cost:    $0.0000") {
		t.Errorf("cost:\n%s", out)
	}
	c.Conv.Append(llm.UserText(strings.Repeat("m", 8000)))
	out := run(t, c, "/context").Output
	for _, want := range []string{"200k tokens window", "System prompt        1k    0.5%", "Tools               200", "Messages             2k", "Free             196.8k"} {
		if !strings.Contains(out, want) {
			t.Errorf("context lacks %q:\n%s", want, out)
		}
	}
}

func TestInitIsAPrompt(t *testing.T) {
	c, _ := testContext(nil)
	out := run(t, c, "/init")
	if out.Command.Kind != Prompt || !strings.Contains(out.Prompt, "AGENTS.md") || out.Output != "" {
		t.Errorf("init = %+v", out)
	}
}

func TestExit(t *testing.T) {
	ui := &fakeUI{}
	c, _ := testContext(ui)
	run(t, c, "/exit")
	if !ui.exited {
		t.Error("/exit did not exit")
	}
}
