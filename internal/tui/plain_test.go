package tui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/llm/llmtest"
	"github.com/coda-cli/coda/internal/tools"
)

func TestPlainREPLRunsPromptsApprovalsCommandsAndShell(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.Text("Checking."), llmtest.ToolCall("", "Bash", jsonInput(map[string]any{"command": "echo plain-ok"}))),
		llmtest.Reply(llmtest.Text("All **done**.")),
	)
	o := s.options()
	o.Commands = commands.NewRegistry(commands.Builtins()...)
	o.RunShell = func(ctx context.Context, command string) tools.Result {
		return tools.Result{Content: []llm.Block{llm.Text{Text: "shell says hi"}},
			Display: tools.BashDisplay{Command: command, Output: "shell says hi\n"}}
	}
	in := strings.NewReader("run the check\ny\n/cost\n!echo hi\n/nope\n")
	var out bytes.Buffer
	if err := RunPlain(context.Background(), o, in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Checking.", "Allow Bash(echo plain-ok)?", "● Bash(echo plain-ok)", "plain-ok",
		"All **done**.", "Total cost", "shell says hi", "exit 0", "Unknown command /nope."} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b[") {
		t.Errorf("escape sequences in plain output: %q", got)
	}
	if n := len(s.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestPlainREPLDeniesWhenInputEnds(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", jsonInput(map[string]any{"command": "touch nope"}))),
		llmtest.Reply(llmtest.Text("fine")),
	)
	var out bytes.Buffer
	if err := RunPlain(context.Background(), s.options(), strings.NewReader("do it\n"), &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "nope")); err == nil {
		t.Errorf("the call ran without an answer:\n%s", out.String())
	}
	if got := s.srv.Requests()[1].LastUserText(); !strings.Contains(got, "The user denied this tool call.") {
		t.Errorf("the model was told %q", got)
	}
}

func TestPlainREPLRewindsThroughItsQuestions(t *testing.T) {
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	r := &rewinder{ag: s.ag, dir: s.dir, conflicts: []string{filepath.Join(s.dir, "a.txt")}}
	o := s.options()
	o.Commands = commands.NewRegistry(commands.Builtins()...)
	o.Session = r
	// Rewind to before the second prompt, code and conversation, then
	// confirm the overwrite with its key.
	in := strings.NewReader("first\nsecond\n/rewind\n2\n1\ny\n")
	var out bytes.Buffer
	if err := RunPlain(context.Background(), o, in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Rewind to before which prompt?", "Bash commands are not tracked", "Restore code only",
		"These files changed since coda edited them:", "Yes, overwrite them [y]", "Restored a.txt.", "Your prompt was:\nsecond"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := s.ag.Conversation().Len(); n != 2 || len(r.codeCalls) != 2 || !r.codeCalls[1] {
		t.Errorf("%d messages left, code calls %v", n, r.codeCalls)
	}
}
