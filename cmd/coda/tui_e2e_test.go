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
	return startTerminalEnv(t, srv, dir, nil, args...)
}

// startTerminalEnv is startTerminal with more environment (HOME=...).
func startTerminalEnv(t *testing.T, srv *llmtest.Server, dir string, extra []string, args ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	term := &terminal{t: t, socket: fmt.Sprintf("coda-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	env := append(baseEnv(t, srv, extra), "TERM=screen-256color", "LANG=C.UTF-8")
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

// readFile is the content of a file the test needs.
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestTUIRewindRestoresCodeAndConversation(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"story.txt": "Once there was a line.\r\nIt ended without a newline"})
	story := filepath.Join(dir, "story.txt")
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Read", input(map[string]any{"file_path": story}))),
		llmtest.Reply(llmtest.ToolCall("", "Edit", input(map[string]any{"file_path": story, "old_string": "a line", "new_string": "a first edit"}))),
		llmtest.Reply(llmtest.Text("Edited once.")),
		llmtest.Reply(llmtest.ToolCall("", "Edit", input(map[string]any{"file_path": story, "old_string": "without a newline", "new_string": "after a second edit\n"}))),
		llmtest.Reply(llmtest.Text("Edited twice.")),
		llmtest.Reply(llmtest.Text("Starting over from the first edit.")),
	)
	term := startTerminal(t, srv, dir, "--permission-mode", "acceptEdits")
	term.waitFor("accept edits")

	term.text("make the first edit")
	term.keys("Enter")
	term.waitFor("Edited once.")
	afterFirst := readFile(t, story)
	if afterFirst != "Once there was a first edit.\r\nIt ended without a newline" {
		t.Fatalf("after the first prompt: %q", afterFirst)
	}
	term.text("make the second edit")
	term.keys("Enter")
	term.waitFor("Edited twice.")
	if got := readFile(t, story); got == afterFirst {
		t.Fatal("the second edit changed nothing")
	}

	term.text("/rewind")
	term.keys("Enter")
	s := term.waitFor("Rewind to before which prompt?")
	for _, want := range []string{"Bash commands are not tracked", "1. Edit your last prompt", "2. make the second edit", "3. make the first edit"} {
		if !strings.Contains(s, want) {
			t.Errorf("the rewind list lacks %q:\n%s", want, s)
		}
	}
	term.keys("2")
	term.waitFor("Restore code and conversation")
	term.keys("1")
	term.waitFor("the prompt is back in the input")
	// The rewound prompt comes back into the input box.
	s = term.waitFor("│ ❯ make the second edit")
	if got := readFile(t, story); got != afterFirst {
		t.Fatalf("the file was not restored to its state before the second prompt:\n got %q\nwant %q", got, afterFirst)
	}
	// The conversation is shown again under a new header, without the
	// turn rewound.
	if i := strings.LastIndex(s, "✻ coda"); i < 0 || strings.Contains(s[i:], "Edited twice.") || !strings.Contains(s[i:], "Edited once.") {
		t.Errorf("the conversation shown after the rewind:\n%s", s)
	}

	term.keys("C-u")
	term.text("what now?")
	term.keys("Enter")
	term.waitFor("Starting over from the first edit.")
	reqs := srv.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if strings.Contains(last, "make the second edit") || strings.Contains(last, "Edited twice.") {
		t.Errorf("the request after the rewind still carries the second prompt:\n%s", last)
	}
	if !strings.Contains(last, "make the first edit") || !strings.Contains(last, "what now?") {
		t.Errorf("the request after the rewind lost the first prompt or the new one:\n%s", last)
	}
	noRejections(t, srv)
}

func TestTUIResumeSwitchesSessionsAndForksALockedOne(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a\n"})
	home := t.TempDir()
	env := []string{"HOME=" + home}
	srv.Enqueue(llmtest.Reply(llmtest.Text("Noted: pelican.")))
	first := parseResult(t, coda(t, srv, dir, env, "-p", "remember the word pelican", "--output-format", "json")).SessionID

	// Another coda holds a second session.
	srv.Enqueue(llmtest.Reply(llmtest.Text("Noted: walrus.")))
	other := startTerminalEnv(t, srv, dir, env)
	other.waitFor("default mode")
	other.text("remember the word walrus")
	other.keys("Enter")
	other.waitFor("Noted: walrus.")

	term := startTerminalEnv(t, srv, dir, env)
	term.waitFor("default mode")
	term.text("/resume")
	term.keys("Enter")
	s := term.waitFor("Resume a session")
	for _, want := range []string{"remember the word pelican", "remember the word walrus", "2 messages · main"} {
		if !strings.Contains(s, want) {
			t.Errorf("the session picker lacks %q:\n%s", want, s)
		}
	}
	// The newest, held by the other coda, comes first: it offers a fork.
	term.keys("1")
	s = term.waitFor("Fork it")
	if !strings.Contains(s, "open in another coda process (pid") {
		t.Errorf("no word on who holds the session:\n%s", s)
	}
	term.keys("f")
	s = term.waitFor("into the new session")
	if !strings.Contains(s, "remember the word walrus") || !strings.Contains(s, "Noted: walrus.") {
		t.Errorf("the fork does not show the conversation it copied:\n%s", s)
	}

	// From the fork, back to the first session.
	term.text("/resume")
	term.keys("Enter")
	s = term.waitFor("Resume a session")
	if !strings.Contains(s, "2. remember the word pelican") {
		t.Fatalf("the picker from the fork:\n%s", s)
	}
	term.keys("2")
	s = term.waitFor("Resumed session " + first)
	if !strings.Contains(s, "remember the word pelican") || !strings.Contains(s, "Noted: pelican.") {
		t.Errorf("the resumed conversation is not shown:\n%s", s)
	}
	srv.Enqueue(llmtest.Reply(llmtest.Text("It was pelican.")))
	term.text("what was the word?")
	term.keys("Enter")
	term.waitFor("It was pelican.")
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "remember the word pelican") {
		t.Errorf("the request after /resume lacks the resumed conversation:\n%s", body)
	}
	// The resumed transcript got the new turn; the empty session the
	// terminal started with was removed, the fork kept.
	files, _ := filepath.Glob(filepath.Join(home, ".coda", "projects", "*", "sessions", first+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcript of %s: %v", first, files)
	}
	data := readFile(t, files[0])
	if !strings.Contains(data, "It was pelican.") {
		t.Error("the new turn went to another transcript")
	}
	if n := len(transcripts(t, home)); n != 3 {
		t.Errorf("%d transcripts, want 3: the first, the one held elsewhere and its fork", n)
	}
	noRejections(t, srv)
}
