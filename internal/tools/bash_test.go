package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newShellEnv is an Env rooted at a fresh directory whose background
// shells are closed when the test ends.
func newShellEnv(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t.TempDir())
	t.Cleanup(env.Close)
	return env
}

func input(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runBash(t *testing.T, env *Env, command string) Result {
	t.Helper()
	return runBashCtx(t, context.Background(), env, map[string]any{"command": command})
}

func runBashCtx(t *testing.T, ctx context.Context, env *Env, in map[string]any) Result {
	t.Helper()
	return NewBash().Run(ctx, Call{ID: "t", Input: input(t, in), Env: env})
}

// output is the command output part of a Bash result (before the exit
// code line).
func output(r Result) string {
	text := r.Text()
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		return text[:i]
	}
	return text
}

func display(t *testing.T, r Result) BashDisplay {
	t.Helper()
	d, ok := r.Display.(BashDisplay)
	if !ok {
		t.Fatalf("Display is %T, want BashDisplay", r.Display)
	}
	return d
}

func TestBashExitCodes(t *testing.T) {
	env := newShellEnv(t)
	tests := []struct {
		command string
		code    int
		isError bool
	}{
		{"echo ok", 0, false},
		{"grep -q nothing /dev/null", 1, false}, // "no match" is an answer
		{"ls /does/not/exist", 2, true},
		{"exit 7", 7, true},
	}
	for _, tt := range tests {
		r := runBash(t, env, tt.command)
		d := display(t, r)
		if d.ExitCode != tt.code || r.IsError != tt.isError {
			t.Errorf("%q: exit %d, IsError %v; want %d, %v\n%s", tt.command, d.ExitCode, r.IsError, tt.code, tt.isError, r.Text())
		}
		if want := fmt.Sprintf("Exit code: %d", tt.code); !strings.Contains(r.Text(), want) {
			t.Errorf("%q: result does not report %q:\n%s", tt.command, want, r.Text())
		}
	}
}

func TestBashMergesStdoutAndStderrInOrder(t *testing.T) {
	env := newShellEnv(t)
	r := runBash(t, env, "echo out1; echo err1 >&2; echo out2; echo err2 >&2")
	if got, want := output(r), "out1\nerr1\nout2\nerr2"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestBashNoOutput(t *testing.T) {
	r := runBash(t, newShellEnv(t), "true")
	if !strings.HasPrefix(r.Text(), "(no output)") {
		t.Errorf("got %q", r.Text())
	}
}

func TestBashTruncatesLongOutputKeepingHeadAndTail(t *testing.T) {
	env := newShellEnv(t)
	r := runBash(t, env, "seq 1 40000")
	out := output(r)
	var full strings.Builder
	for i := 1; i <= 40000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	total := full.Len()

	m := regexp.MustCompile(`\n\n\.\.\. \[(\d+) characters \((\d+) lines\) truncated\] \.\.\.\n\n`).FindStringSubmatchIndex(out)
	if m == nil {
		t.Fatalf("no truncation marker in %d characters of output", len(out))
	}
	head, tail := out[:m[0]], out[m[1]:]
	if !strings.HasPrefix(head, "1\n2\n3\n") || !strings.HasSuffix(tail, "39999\n40000") {
		t.Errorf("head or tail missing: head starts %q, tail ends %q", head[:10], tail[len(tail)-12:])
	}
	cutChars, _ := strconv.Atoi(out[m[2]:m[3]])
	cutLines, _ := strconv.Atoi(out[m[4]:m[5]])
	// The tail lost its final newline to TrimRight; count it back.
	if shown := len(head) + len(tail) + 1; shown+cutChars != total {
		t.Errorf("shown %d + cut %d characters != total %d", shown, cutChars, total)
	}
	if shownLines := strings.Count(head, "\n") + strings.Count(tail, "\n") + 1; shownLines+cutLines != 40000 {
		t.Errorf("shown %d + cut %d lines != 40000", shownLines, cutLines)
	}
	if len(head)+len(tail) > bashMaxOutput {
		t.Errorf("kept %d characters, more than %d", len(head)+len(tail), bashMaxOutput)
	}
}

func TestTruncateOutputCountsCharactersNotBytes(t *testing.T) {
	s := strings.Repeat("é", bashMaxOutput) // 2 bytes each, exactly at the limit
	if got := truncateOutput(s); got != s {
		t.Errorf("output at the limit was changed (len %d -> %d)", len(s), len(got))
	}
	long := strings.Repeat("日本語\n", 40000)
	got := truncateOutput(long)
	if !strings.Contains(got, "characters (") || !strings.HasPrefix(got, "日本語\n") || !strings.HasSuffix(got, "日本語\n") {
		t.Errorf("multi-byte output not cut cleanly: %q...", got[:40])
	}
	if !strings.Contains(got, fmt.Sprintf("[%d characters", 40000*4-bashMaxOutput)) {
		t.Errorf("wrong cut count in %q", regexp.MustCompile(`\[.*truncated\]`).FindString(got))
	}
}

// processGone reports whether pid has ended (a zombie waiting for a reaper
// has ended too).
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z") || strings.HasPrefix(after, "X")
}

// waitGone waits a bounded time for the kernel to finish ending pid.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	env := newShellEnv(t)
	start := time.Now()
	r := runBashCtx(t, context.Background(), env, map[string]any{
		"command": "sleep 1000 & echo $!; sleep 1000",
		"timeout": 300,
	})
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("timeout of 300ms took %s", elapsed)
	}
	d := display(t, r)
	if !d.TimedOut || !r.IsError || !strings.Contains(r.Text(), "timed out after 300ms") {
		t.Fatalf("want a timeout error, got %+v:\n%s", d, r.Text())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(output(r)))
	if err != nil {
		t.Fatalf("no pid in output %q", output(r))
	}
	waitGone(t, pid)
}

func TestBashCancellationKillsTheProcessGroup(t *testing.T) {
	env := newShellEnv(t)
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids := make(chan int, 1)
	go func() {
		// Opening blocks until the command opens the fifo to write.
		b, _ := os.ReadFile(fifo)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pids <- pid
		cancel()
	}()
	r := runBashCtx(t, ctx, env, map[string]any{"command": fmt.Sprintf("sleep 1000 & echo $! > %q; wait", fifo)})
	d := display(t, r)
	if !d.Interrupted || d.TimedOut || !r.IsError || !strings.Contains(r.Text(), "interrupted") {
		t.Fatalf("want an interruption, got %+v:\n%s", d, r.Text())
	}
	waitGone(t, <-pids)
}

func TestBashStopsBackgroundedLeftoversWhenDone(t *testing.T) {
	env := newShellEnv(t)
	r := runBash(t, env, "sleep 1000 > /dev/null 2>&1 & echo $!")
	if r.IsError {
		t.Fatal(r.Text())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(output(r)))
	if err != nil {
		t.Fatalf("no pid in %q", output(r))
	}
	waitGone(t, pid)
}

func TestBashSignal(t *testing.T) {
	r := runBash(t, newShellEnv(t), "kill -KILL $$")
	d := display(t, r)
	if d.ExitCode != 137 || !r.IsError || !strings.Contains(r.Text(), "signal") {
		t.Errorf("got exit %d, IsError %v:\n%s", d.ExitCode, r.IsError, r.Text())
	}
}

func TestBashWorkingDirectoryPersists(t *testing.T) {
	env := newShellEnv(t)
	sub := filepath.Join(env.ProjectDir, "sub dir")
	if r := runBash(t, env, `mkdir "sub dir" && cd "sub dir"`); r.IsError {
		t.Fatal(r.Text())
	}
	if env.Cwd() != sub {
		t.Fatalf("cwd = %q, want %q", env.Cwd(), sub)
	}
	if got := output(runBash(t, env, "pwd")); got != sub {
		t.Errorf("next command ran in %q, want %q", got, sub)
	}
	// The directory is learnt even when the command exits early.
	r := runBash(t, env, "cd .. && exit 3")
	if display(t, r).ExitCode != 3 || env.Cwd() != env.ProjectDir {
		t.Errorf("exit %d, cwd %q; want 3, %q", display(t, r).ExitCode, env.Cwd(), env.ProjectDir)
	}
}

func TestBashWorkingDirectoryResetOutsideRoots(t *testing.T) {
	env := newShellEnv(t)
	outside := t.TempDir()
	r := runBash(t, env, fmt.Sprintf("cd %q", outside))
	if !strings.Contains(r.Text(), "cwd reset to "+env.ProjectDir) {
		t.Errorf("no reset note:\n%s", r.Text())
	}
	if env.Cwd() != env.ProjectDir {
		t.Errorf("cwd moved to %q", env.Cwd())
	}
	if got := output(runBash(t, env, "pwd")); got != env.ProjectDir {
		t.Errorf("next command ran in %q", got)
	}
}

func TestBashWorkingDirectoryInAnExtraRoot(t *testing.T) {
	extra := t.TempDir()
	env := NewEnv(t.TempDir(), extra)
	t.Cleanup(env.Close)
	runBash(t, env, fmt.Sprintf("cd %q", extra))
	if env.Cwd() != extra {
		t.Errorf("cwd = %q, want the extra root %q", env.Cwd(), extra)
	}
}

func TestBashWorkingDirectoryThroughSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	if err := os.Mkdir(filepath.Join(real, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "project")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := NewEnv(link)
	t.Cleanup(env.Close)
	runBash(t, env, "cd pkg")
	if want := filepath.Join(link, "pkg"); env.Cwd() != want {
		t.Errorf("cwd = %q, want %q (the root as configured)", env.Cwd(), want)
	}
}

func TestBashWorkingDirectoryRemoved(t *testing.T) {
	env := newShellEnv(t)
	gone := filepath.Join(env.ProjectDir, "gone")
	os.Mkdir(gone, 0o755)
	env.SetCwd(gone)
	os.Remove(gone)
	r := runBash(t, env, "pwd")
	if !strings.HasPrefix(output(r), env.ProjectDir) || !strings.Contains(r.Text(), "no longer exists") {
		t.Errorf("got:\n%s", r.Text())
	}
}

func TestBashEnvironment(t *testing.T) {
	env := newShellEnv(t)
	runBash(t, env, "export CODA_TEST_VAR=set")
	if got := output(runBash(t, env, `echo "${CODA_TEST_VAR-unset}"`)); got != "unset" {
		t.Errorf("variable persisted between calls: %q", got)
	}
	got := output(runBash(t, env, `echo "$CODA $GIT_EDITOR $PAGER"; cat; echo "stdin done"`))
	if got != "1 true cat\nstdin done" {
		t.Errorf("environment or stdin wrong: %q", got)
	}
}

func TestBashWrapShell(t *testing.T) {
	env := newShellEnv(t)
	var seen []string
	env.WrapShell = func(argv []string) []string {
		seen = argv
		return append([]string{"env", "WRAPPED=yes"}, argv...)
	}
	r := runBash(t, env, "echo $WRAPPED")
	if output(r) != "yes" {
		t.Errorf("wrapper not applied: %q", r.Text())
	}
	if len(seen) != 3 || seen[0] != "bash" || seen[1] != "-c" || !strings.HasSuffix(seen[2], "echo $WRAPPED") {
		t.Errorf("wrapper saw %q", seen)
	}
}

func TestBashRejectsBadInput(t *testing.T) {
	env := newShellEnv(t)
	for _, in := range []string{`{}`, `{"command": "  "}`, `{"command": "ls", "timeout": "soon"}`, `{"command": "ls", "cwd": "/"}`} {
		r := NewBash().Run(context.Background(), Call{Input: json.RawMessage(in), Env: env})
		if !r.IsError {
			t.Errorf("%s: not an error: %s", in, r.Text())
		}
	}
}

func TestBashTimeoutBounds(t *testing.T) {
	for ms, want := range map[int]time.Duration{0: 2 * time.Minute, -5: 2 * time.Minute, 5000: 5 * time.Second, 600000: 10 * time.Minute, 3600000: 10 * time.Minute} {
		if got := bashTimeout(ms); got != want {
			t.Errorf("bashTimeout(%d) = %s, want %s", ms, got, want)
		}
	}
}

func TestShellToolsContract(t *testing.T) {
	tools := append(ShellTools(), NewTodoWrite(), NewWebFetch(WebFetchOptions{}))
	want := []string{"Bash", "BashOutput", "KillShell", "TodoWrite", "WebFetch"}
	reg := NewRegistry(tools...)
	if got := reg.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names %v, want %v", got, want)
	}
	for _, tool := range tools {
		if n := len(regexp.MustCompile(`[.!?](\s|$)`).FindAllString(tool.Description(), -1)); n < 3 {
			t.Errorf("%s: description has %d sentences", tool.Name(), n)
		}
		var schema struct {
			Type     string
			Required []string
		}
		if err := json.Unmarshal(tool.InputSchema(), &schema); err != nil || schema.Type != "object" || len(schema.Required) == 0 {
			t.Errorf("%s: bad schema %s (%v)", tool.Name(), tool.InputSchema(), err)
		}
	}
	desc := NewBash().Description()
	for _, s := range []string{"Read", "Edit", "Glob", "Grep", "cat", "sed", "find", "grep", "spaces", "absolute", "run_in_background", "BashOutput"} {
		if !strings.Contains(desc, s) {
			t.Errorf("Bash description does not mention %q", s)
		}
	}
	flags := map[string][2]bool{ // ReadOnly, ConcurrencySafe
		"Bash": {false, false}, "BashOutput": {true, true}, "KillShell": {false, false},
		"TodoWrite": {true, false}, "WebFetch": {true, true},
	}
	for _, tool := range tools {
		f := flags[tool.Name()]
		if tool.ReadOnly() != f[0] || tool.ConcurrencySafe(nil) != f[1] {
			t.Errorf("%s: ReadOnly %v ConcurrencySafe %v, want %v", tool.Name(), tool.ReadOnly(), tool.ConcurrencySafe(nil), f)
		}
	}
}
