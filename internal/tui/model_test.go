package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/llm/llmtest"
	"github.com/coda-cli/coda/internal/tools"
)

func jsonInput(v map[string]any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func TestPromptStreamsMarkdownIntoTheScrollback(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("Hello **there**.\n\n```go\nfmt.Println(1)\n```\n\nDone.")))
	h := newHarness(t, s.options())
	h.typeText("say hello")
	h.press("enter")
	h.idle()
	h.waitScreen("Done.")
	screen := h.screen()
	for _, want := range []string{"❯ say hello", "● Hello there.", "fmt.Println(1)", "Done."} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "**") || strings.Contains(screen, "```") {
		t.Errorf("markdown shown raw:\n%s", screen)
	}
	if strings.Contains(h.view(), "Hello there") {
		t.Errorf("a finished answer stays in the live area:\n%s", h.view())
	}
	if got := s.srv.Requests()[0].LastUserText(); got != "say hello" {
		t.Errorf("sent %q", got)
	}
}

func TestApprovalDialogAllowsOnceAfterTheGracePeriod(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", jsonInput(map[string]any{"command": "echo approved > out.txt"}))),
		llmtest.Reply(llmtest.Text("Wrote it.")),
	)
	h := newHarness(t, s.options())
	h.typeText("write the file")
	h.press("enter")
	h.waitFor("the approval dialog", func() bool { return h.m.dialog != nil })
	view := h.view()
	for _, want := range []string{"Run this command?", "echo approved > out.txt", "test gate",
		"1. Yes", "2. Yes, and don't ask again for Bash", "3. No", "4. No, and tell coda what to do differently"} {
		if !strings.Contains(view, want) {
			t.Errorf("dialog lacks %q:\n%s", want, view)
		}
	}
	// Typing that was under way when the dialog opened does not answer it.
	h.press("enter", "3", "esc")
	if h.m.dialog == nil {
		t.Fatal("keys in the grace period answered the dialog")
	}
	h.clock.advance(time.Second)
	h.press("x", "down", "up") // other keys do nothing
	if h.m.dialog == nil || h.m.dialog.sel != 0 {
		t.Fatal("the dialog moved or closed on stray keys")
	}
	h.press("1")
	h.idle()
	h.waitScreen("Wrote it.")
	if data, err := os.ReadFile(filepath.Join(s.dir, "out.txt")); err != nil || string(data) != "approved\n" {
		t.Fatalf("approved command did not run: %q %v", data, err)
	}
	if !strings.Contains(h.screen(), "Bash(echo approved > out.txt)") || !strings.Contains(h.screen(), "exit 0") {
		t.Errorf("tool line missing:\n%s", h.screen())
	}
}

func TestApprovalDenyWithMessageReachesTheModel(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", jsonInput(map[string]any{"command": "rm -rf build"}))),
		llmtest.Reply(llmtest.Text("OK, I will not.")),
	)
	h := newHarness(t, s.options())
	h.typeText("clean up")
	h.press("enter")
	h.waitFor("the approval dialog", func() bool { return h.m.dialog != nil })
	h.clock.advance(time.Second)
	h.press("down", "down", "down", "enter")
	if h.m.dialog == nil || h.m.dialog.feedback == nil {
		t.Fatal("choosing 4 should ask for the message")
	}
	h.typeText("keep the build folder")
	h.press("enter")
	h.idle()
	h.waitScreen("OK, I will not.")
	if got := s.srv.Requests()[1].LastUserText(); !strings.Contains(got, "keep the build folder") {
		t.Errorf("the model did not get the message: %q", got)
	}
}

func TestEscInterruptsKeepsPartialAnswerAndTypedText(t *testing.T) {
	s := newSession(t)
	long := strings.Repeat("word ", 400) + "FINAL"
	s.srv.Enqueue(llmtest.Reply(llmtest.Text(long)).WithDelay(30 * time.Millisecond))
	h := newHarness(t, s.options())
	h.typeText("go on")
	h.press("enter")
	h.waitScreen("word word")
	h.typeText("next idea")
	h.press("esc")
	h.idle()
	h.waitScreen("Interrupted")
	if strings.Contains(h.screen(), "FINAL") {
		t.Fatal("the answer went on after Esc")
	}
	if !strings.Contains(h.screen(), "● word word") {
		t.Errorf("the partial answer is gone:\n%s", h.screen())
	}
	if got := h.m.ed.String(); got != "next idea" {
		t.Errorf("input = %q, want what was typed", got)
	}
}

func TestInputTypedWhileBusyIsQueued(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.Text("first answer")).WithDelay(20*time.Millisecond),
		llmtest.Reply(llmtest.Text("second answer")),
	)
	h := newHarness(t, s.options())
	h.typeText("first")
	h.press("enter")
	h.typeText("second")
	h.press("enter")
	if !strings.Contains(h.view(), "queued: second") {
		t.Errorf("queued message not shown:\n%s", h.view())
	}
	h.waitScreen("second answer")
	h.idle()
	reqs := s.srv.Requests()
	if len(reqs) != 2 || reqs[1].LastUserText() != "second" {
		t.Fatalf("requests: %d, last %q", len(reqs), reqs[len(reqs)-1].LastUserText())
	}
}

func TestEscTwiceEditsThePreviousPrompt(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("an answer")), llmtest.Reply(llmtest.Text("a better answer")))
	h := newHarness(t, s.options())
	h.typeText("first try")
	h.press("enter")
	h.idle()
	h.press("esc")
	if !h.m.ed.empty() {
		t.Fatal("one Esc changed the input")
	}
	h.press("esc")
	if got := h.m.ed.String(); got != "first try" {
		t.Fatalf("Esc twice: input %q", got)
	}
	if n := s.ag.Conversation().Len(); n != 0 {
		t.Fatalf("conversation not rewound: %d messages", n)
	}
	h.press("ctrl+e")
	h.typeText(", please")
	h.press("enter")
	h.idle()
	reqs := s.srv.Requests()
	if got := reqs[1].Messages(); len(got) != 1 {
		t.Errorf("the edited prompt was sent with %d messages, want only itself", len(got))
	}
	if got := reqs[1].LastUserText(); got != "first try, please" {
		t.Errorf("sent %q", got)
	}
}

func TestErrorLeavesTheSessionUsable(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.ServerError(), llmtest.ServerError(), llmtest.Reply(llmtest.Text("recovered")))
	h := newHarness(t, s.options())
	h.typeText("fail please")
	h.press("enter")
	h.idle()
	h.waitScreen("Error:")
	h.typeText("again")
	h.press("enter")
	h.idle()
	h.waitScreen("recovered")
}

func TestTodoListShowsAboveTheInputWithTheActiveForm(t *testing.T) {
	s := newSession(t)
	todos := []map[string]any{
		{"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
		{"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
		{"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
	}
	s.srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "TodoWrite", jsonInput(map[string]any{"todos": todos}))),
		llmtest.Reply(llmtest.Text("working on it")).WithDelay(200*time.Millisecond),
	)
	h := newHarness(t, s.options())
	h.typeText("fix it")
	h.press("enter")
	h.waitFor("the todo list", func() bool { return strings.Contains(h.view(), "☐ Run the tests") })
	view := h.view()
	for _, want := range []string{"Fixing the bug…", "☒ Read the code", "◼ Fix the bug", "esc to interrupt"} {
		if !strings.Contains(view, want) {
			t.Errorf("live area lacks %q:\n%s", want, view)
		}
	}
	h.idle()
}

func TestBangRunsAShellCommandAndTellsTheModel(t *testing.T) {
	s := newSession(t)
	o := s.options()
	var ran []string
	o.RunShell = func(ctx context.Context, command string) tools.Result {
		ran = append(ran, command)
		return tools.Result{Content: []llm.Block{llm.Text{Text: "v1.2.3\n"}},
			Display: tools.BashDisplay{Command: command, Output: "v1.2.3\n", Duration: 20 * time.Millisecond}}
	}
	h := newHarness(t, o)
	h.typeText("!git describe")
	h.press("enter")
	h.idle()
	h.waitScreen("exit 0")
	if len(ran) != 1 || ran[0] != "git describe" {
		t.Fatalf("ran %q", ran)
	}
	if !strings.Contains(h.screen(), "! git describe") || !strings.Contains(h.screen(), "v1.2.3") {
		t.Errorf("shell entry:\n%s", h.screen())
	}
	msgs := s.ag.Conversation().Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text(), "<bash-input>git describe</bash-input>") ||
		!strings.Contains(msgs[0].Text(), "v1.2.3") {
		t.Fatalf("conversation = %+v", msgs)
	}
}

func TestMentionCompletesAndAttachesTheFile(t *testing.T) {
	s := newSession(t)
	writeFile(t, filepath.Join(s.dir, "docs", "README.md"), "the secret word is pineapple\n")
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("It says pineapple.")))
	o := s.options()
	o.Files = func(context.Context) ([]string, error) { return []string{"docs/README.md", "main.go"}, nil }
	h := newHarness(t, o)
	h.typeText("explain @rdme")
	h.waitFor("the file list", func() bool { return h.m.pop.open() })
	if it, _ := h.m.pop.selected(); it.label != "docs/README.md" {
		t.Fatalf("selected %+v", it)
	}
	h.press("tab")
	if got := h.m.ed.String(); got != "explain @docs/README.md " {
		t.Fatalf("completed to %q", got)
	}
	h.press("enter")
	h.idle()
	if got := s.srv.Requests()[0].LastUserText(); !strings.Contains(got, "pineapple") || !strings.Contains(got, "explain @docs/README.md") {
		t.Errorf("attachment not sent: %q", got)
	}
	if !s.env.Files.Seen(filepath.Join(s.dir, "docs", "README.md")) {
		t.Error("an attached file should count as read")
	}
}

func TestResizeKeepsLinesWithinTheWidth(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text(strings.Repeat("a rather long sentence that wraps ", 20))))
	h := newHarness(t, s.options())
	h.typeText(strings.Repeat("typed ", 30))
	for _, size := range [][2]int{{80, 24}, {40, 12}, {120, 40}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(h.view(), "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := cols(l); w > size[0] {
				t.Errorf("%dx%d: line of %d columns: %q", size[0], size[1], w, l)
			}
		}
	}
}

func TestPagerShowsExpandedToolOutput(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", jsonInput(map[string]any{"command": "seq 1 40"}))),
		llmtest.Reply(llmtest.Text("counted")),
	)
	h := newHarness(t, s.options())
	h.typeText("count")
	h.press("enter")
	h.waitFor("the approval dialog", func() bool { return h.m.dialog != nil })
	h.clock.advance(time.Second)
	h.press("1")
	h.idle()
	h.waitScreen("counted")
	if strings.Contains(h.screen(), "\n        12\n") {
		t.Fatal("collapsed output shows everything")
	}
	h.press("ctrl+o")
	v := h.m.View()
	if !v.AltScreen {
		t.Fatal("the transcript is not on the alternate screen")
	}
	h.press("g")
	for i := 0; i < 40 && !strings.Contains(stripANSI(h.m.View().Content), "\n     12\n"); i++ {
		h.press("down")
	}
	if !strings.Contains(stripANSI(h.m.View().Content), "\n     12\n") {
		t.Errorf("expanded output lacks line 12:\n%s", stripANSI(h.m.View().Content))
	}
	h.press("esc")
	if h.m.pager != nil || h.m.View().AltScreen {
		t.Fatal("Esc did not close the transcript")
	}
}

func TestModelPickerSwitchesTheModel(t *testing.T) {
	sess := &fakeSession{models: []llm.ModelInfo{
		{Provider: "anthropic", ID: "claude-sonnet-4-5", ContextWindow: 200000},
		{Provider: "anthropic", ID: "claude-haiku-4-5", ContextWindow: 200000},
	}}
	h := newHarness(t, Options{Session: sess})
	h.typeText("/model")
	h.press("esc", "enter")
	h.waitFor("the picker", func() bool { return h.m.picker != nil })
	if !strings.Contains(h.view(), "Select a model") || !strings.Contains(h.view(), "claude-haiku-4-5") {
		t.Fatalf("picker:\n%s", h.view())
	}
	h.press("down", "enter")
	h.waitScreen("Model set to anthropic/claude-haiku-4-5.")
	if sess.set != "anthropic/claude-haiku-4-5" {
		t.Errorf("SetModel(%q)", sess.set)
	}
}

func TestNoColorWritesNoColourCodes(t *testing.T) {
	h := newHarness(t, Options{})
	var got strings.Builder
	h.m.profile = 2 // colorprofile.ASCII: what NO_COLOR gives
	h.m.printer = func(s string) tea.Cmd {
		got.WriteString(s)
		return func() tea.Msg { return printedMsg{} }
	}
	h.typeText("/cost")
	h.press("esc", "enter")
	h.waitFor("output", func() bool { return strings.Contains(got.String(), "No usage yet") })
	if strings.Contains(got.String(), "38;5;") || strings.Contains(got.String(), "\x1b[3") {
		t.Errorf("colour codes under NO_COLOR: %q", got.String())
	}
}

func TestPlanApprovalChoosesTheNextMode(t *testing.T) {
	h := newHarness(t, Options{Mode: "plan"})
	r := fakeRun(h)
	reply := make(chan agent.Approval, 1)
	h.m.onEvent(r, agent.ApprovalRequest{ID: "p1", Tool: "ExitPlanMode",
		Input: raw(map[string]any{"plan": "# Plan\n\n1. Add the flag\n2. Test it"}), Reply: reply})
	view := h.view()
	for _, want := range []string{"coda's plan is ready", "Add the flag", "1. Yes, and auto-accept edits", "2. Yes, and approve each edit", "3. No, keep planning"} {
		if !strings.Contains(view, want) {
			t.Errorf("plan dialog lacks %q:\n%s", want, view)
		}
	}
	h.clock.advance(time.Second)
	h.press("1")
	if got := <-reply; !got.Allow || got.Mode != "acceptEdits" {
		t.Fatalf("answer = %+v", got)
	}
	h.m.onEvent(r, agent.ToolFinished{ID: "p1", Name: "ExitPlanMode", Result: tools.Result{
		Content: []llm.Block{llm.Text{Text: "approved"}}, Display: tools.PlanDisplay{Plan: "# Plan", Mode: "acceptEdits"}}})
	if !strings.Contains(h.view(), "accept edits") {
		t.Errorf("status does not follow the approved mode:\n%s", h.view())
	}
}

func TestClearStartsOver(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("first")))
	h := newHarness(t, s.options())
	h.typeText("hello")
	h.press("enter")
	h.idle()
	s.env.Todos.Set([]tools.Todo{{Content: "x", Status: "pending", ActiveForm: "x"}})
	h.m.refreshTodos()
	h.typeText("/clear")
	h.press("esc", "enter")
	h.waitScreen("Started a new conversation.")
	if n := s.ag.Conversation().Len(); n != 0 {
		t.Errorf("conversation has %d messages", n)
	}
	if len(s.env.Todos.List()) != 0 || strings.Contains(h.view(), "☐ x") {
		t.Error("the todo list survived /clear")
	}
}
