package tui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// goldenModel is a UI with an agent that is never asked anything, in a
// fixed place and time, so frames are the same on every machine.
func goldenModel(t *testing.T, width, height int) (*harness, *tools.Env) {
	t.Helper()
	env := tools.NewEnv("/home/dev/project")
	a := agent.New(agent.Config{Model: agent.Model{Info: llm.ModelInfo{Provider: "anthropic", ID: "claude-sonnet-4-5",
		ContextWindow: 200000}}, Env: env})
	h := newHarnessSize(t, Options{Agent: a, Env: env, ProjectDir: "/home/dev/project", Version: "0.1.0"}, width, height)
	h.m.branch = "main"
	// Print at once: golden frames are taken without pumping messages.
	print := h.m.printer
	h.m.printer = func(s string) tea.Cmd {
		print(s)
		h.m.printing = false
		return nil
	}
	h.m.printing = false
	h.send(teaSize(width, height))
	return h, env
}

// fakeRun puts the model in the middle of a run without an agent behind it.
func fakeRun(h *harness) *runState {
	r := &runState{cancel: func() {}, started: h.clock.Now().Add(-12 * time.Second), tools: map[string]*toolEntry{}}
	h.m.run = r
	return r
}

func raw(v any) json.RawMessage {
	data, _ := json.Marshal(v)
	return data
}

// frame is the scrollback and the live screen, without colours.
func frame(h *harness) string {
	return "=== scrollback ===\n" + h.printed.String() + "=== screen ===\n" + h.view() + "\n"
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("frame %s differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

func TestGoldenIdle(t *testing.T) {
	h, _ := goldenModel(t, 80, 24)
	checkGolden(t, "idle", frame(h))
}

func TestGoldenWorking(t *testing.T) {
	h, env := goldenModel(t, 80, 30)
	m := h.m
	m.tr.add(&userEntry{text: "fix the failing test in parse.go"})
	r := fakeRun(h)
	m.onEvent(r, agent.ThinkingDelta{Text: "The test fails on empty input.\nLet me look."})
	m.onEvent(r, agent.TextDelta{Text: "The parser **panics** on empty input. Here is the fix:\n\n"})
	m.onEvent(r, agent.MessageAppended{Message: llm.Message{Role: llm.RoleAssistant}})
	edit := raw(map[string]any{"file_path": "/home/dev/project/parse.go", "old_string": "x", "new_string": "y"})
	m.onEvent(r, agent.ToolStarted{ID: "t1", Name: "Edit", Input: edit})
	m.onEvent(r, agent.ToolFinished{ID: "t1", Name: "Edit", Input: edit, Duration: 40 * time.Millisecond,
		Result: tools.Result{Content: []llm.Block{llm.Text{Text: "ok"}},
			Display: tools.NewFileDiff("/home/dev/project/parse.go", "func parse(s string) {\n\treturn s[0]\n}\n",
				"func parse(s string) {\n\tif s == \"\" {\n\t\treturn 0\n\t}\n\treturn s[0]\n}\n", false)}})
	todos := []tools.Todo{
		{Content: "Fix the parser", Status: "completed", ActiveForm: "Fixing the parser"},
		{Content: "Run the tests", Status: "in_progress", ActiveForm: "Running the tests"},
		{Content: "Update the changelog", Status: "pending", ActiveForm: "Updating the changelog"},
	}
	env.Todos.Set(todos)
	m.onEvent(r, agent.ToolFinished{ID: "t2", Name: "TodoWrite", Input: raw(map[string]any{"todos": todos}),
		Result: tools.Result{Content: []llm.Block{llm.Text{Text: "ok"}}, Display: todos}})
	bash := raw(map[string]any{"command": "go test ./..."})
	m.onEvent(r, agent.ToolStarted{ID: "t3", Name: "Bash", Input: bash})
	m.onEvent(r, agent.UsageUpdate{Total: llm.Usage{InputTokens: 12000, OutputTokens: 800}, CostUSD: 0.0481, ContextTokens: 24000})
	h.clock.advance(3 * time.Second)
	m.queue = []string{"then commit it"}
	h.send(teaSize(80, 30))
	checkGolden(t, "working", frame(h))
}

func TestGoldenApproval(t *testing.T) {
	h, _ := goldenModel(t, 80, 30)
	m := h.m
	m.tr.add(&userEntry{text: "rename the flag"})
	r := fakeRun(h)
	m.onEvent(r, agent.ApprovalRequest{ID: "t1", Tool: "Edit",
		Input: raw(map[string]any{"file_path": "/home/dev/project/main.go",
			"old_string": "flag.Bool(\"v\", false, \"verbose\")", "new_string": "flag.Bool(\"verbose\", false, \"more output\")"}),
		Reason: "Edit of main.go needs approval", Suggestions: []string{"Edit(/main.go)"}, Reply: make(chan agent.Approval, 1)})
	h.send(teaSize(80, 30))
	checkGolden(t, "approval", frame(h))
}

func TestGoldenPalette(t *testing.T) {
	h, _ := goldenModel(t, 80, 24)
	h.typeText("/c")
	checkGolden(t, "palette", frame(h))
}

func TestGoldenNarrow(t *testing.T) {
	h, _ := goldenModel(t, 40, 20)
	h.m.tr.add(&userEntry{text: "a prompt long enough to wrap around a narrow terminal window"})
	h.m.tr.add(newAssistant("An answer with a list:\n\n- first item that is long enough to wrap\n- second"))
	h.typeText("typing in a narrow window wraps the input as well")
	checkGolden(t, "narrow", frame(h))
}

func TestFramesAreDeterministic(t *testing.T) {
	a, _ := goldenModel(t, 80, 24)
	b, _ := goldenModel(t, 80, 24)
	for _, h := range []*harness{a, b} {
		h.m.tr.add(newAssistant(strings.Repeat("Same text. ", 30)))
		h.send(teaSize(80, 24))
	}
	if frame(a) != frame(b) {
		t.Fatalf("two identical models drew different frames:\n%s\n%s", frame(a), frame(b))
	}
}
