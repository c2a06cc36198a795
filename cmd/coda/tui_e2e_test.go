package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// terminal is coda running in a tmux pane of its own tmux server.
type terminal struct {
	t      *testing.T
	socket string
}

// startTerminal runs the coda binary in dir inside a 100x30 tmux pane.
func startTerminal(t *testing.T, srv *llmtest.Server, dir string, args ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	term := &terminal{t: t, socket: fmt.Sprintf("coda-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	env := append(baseEnv(t, srv, nil), "TERM=screen-256color", "LANG=C.UTF-8")
	cmd := append([]string{"env", "-i"}, env...)
	cmd = append(cmd, codaBin)
	cmd = append(cmd, args...)
	tmuxArgs := append([]string{"-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", "-c", dir}, cmd...)
	term.tmux(tmuxArgs...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
	return term
}

func (term *terminal) tmux(args ...string) string {
	term.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now.
func (term *terminal) screen() string {
	out, err := exec.Command("tmux", "-L", term.socket, "capture-pane", "-p", "-t", "0").CombinedOutput()
	if err != nil {
		return ""
	}
	return string(out)
}

// keys types into the pane; tmux key names (Enter, Escape, C-c) are keys.
func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	term.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

// text types literal text.
func (term *terminal) text(s string) {
	term.t.Helper()
	term.tmux("send-keys", "-t", "0", "-l", s)
}

// waitFor polls the screen until it contains want.
func (term *terminal) waitFor(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := term.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// until repeats an action until the screen satisfies cond.
func (term *terminal) until(action func(), cond func(string) bool, what string) {
	term.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond(term.screen()) {
		if time.Now().After(deadline) {
			term.t.Fatalf("%s never happened; the screen shows:\n%s", what, term.screen())
		}
		action()
		time.Sleep(300 * time.Millisecond)
	}
}

func (term *terminal) running() bool {
	return exec.Command("tmux", "-L", term.socket, "has-session").Run() == nil
}

func TestTUIApprovalInterruptAndCommands(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"README.md": "# demo\n"})
	story := strings.Repeat("Once upon a time a terminal waited for its agent. ", 60) + "THE-END-MARKER"
	srv.Enqueue(
		llmtest.Reply(llmtest.Text("Running the check."),
			llmtest.ToolCall("", "Bash", input(map[string]any{"command": "echo e2e-approved > approved.txt && cat approved.txt"}))),
		llmtest.Reply(llmtest.Text("The check **passed**.")),
		llmtest.Reply(llmtest.Text(story)).WithDelay(150*time.Millisecond),
		llmtest.Reply(llmtest.Text("Still here after the interruption.")),
	)
	// Without the OS sandbox, Bash commands ask first.
	term := startTerminal(t, srv, dir, "--settings", `{"sandbox":{"enabled":false}}`)
	term.waitFor("default mode")

	// A prompt whose Bash call needs approval.
	term.text("run the check")
	term.keys("Enter")
	term.waitFor("Run this command?")
	term.waitFor("echo e2e-approved > approved.txt")
	term.waitFor("don't ask again for")
	// Keys in the first moments of the dialog are ignored on purpose, so
	// answer until it closes.
	term.until(func() { term.keys("1") }, func(s string) bool { return !strings.Contains(s, "Run this command?") }, "approving the command")
	term.waitFor("The check passed.")
	if data, err := os.ReadFile(filepath.Join(dir, "approved.txt")); err != nil || strings.TrimSpace(string(data)) != "e2e-approved" {
		t.Fatalf("the approved command did not run: %q, %v", data, err)
	}
	if s := term.screen(); !strings.Contains(s, "Bash(echo e2e-approved") || !strings.Contains(s, "exit 0") {
		t.Errorf("the tool call's line is missing:\n%s", s)
	}

	// A long answer, interrupted with Esc while it streams; what was typed
	// meanwhile stays in the input.
	term.text("tell me a long story")
	term.keys("Enter")
	term.waitFor("Once upon a time")
	term.text("draft kept")
	term.keys("Escape")
	s := term.waitFor("Interrupted")
	if strings.Contains(s, "THE-END-MARKER") {
		t.Fatalf("the answer streamed to its end despite Esc:\n%s", s)
	}
	if !strings.Contains(s, "❯ draft kept") {
		t.Fatalf("the input lost what was typed:\n%s", s)
	}

	// A slash command, then the session still talks to the model.
	term.keys("C-u")
	term.text("/cost")
	term.keys("Enter")
	term.waitFor("Total cost")
	term.text("are you there?")
	term.keys("Enter")
	term.waitFor("Still here after the interruption.")

	// Ctrl+C twice leaves.
	term.keys("C-c")
	term.waitFor("Press Ctrl+C again to exit")
	term.keys("C-c")
	deadline := time.Now().Add(10 * time.Second)
	for term.running() {
		if time.Now().After(deadline) {
			t.Fatalf("coda did not exit after Ctrl+C twice:\n%s", term.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := reqs[1].LastUserText(); !strings.Contains(got, "e2e-approved") {
		t.Errorf("the command's output did not go back to the model: %q", got)
	}
	if got := reqs[3].LastUserText(); !strings.Contains(got, "are you there?") {
		t.Errorf("last request = %q", got)
	}
	noRejections(t, srv)
}
