package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startBackground(t *testing.T, env *Env, command string) string {
	t.Helper()
	r := runBashCtx(t, context.Background(), env, map[string]any{"command": command, "run_in_background": true})
	if r.IsError {
		t.Fatalf("background start failed: %s", r.Text())
	}
	id := display(t, r).ShellID
	if id == "" || !strings.Contains(r.Text(), id) || !strings.Contains(r.Text(), "BashOutput") {
		t.Fatalf("no shell id in %q", r.Text())
	}
	return id
}

func bashOutput(t *testing.T, env *Env, in map[string]any) Result {
	t.Helper()
	return NewBashOutput().Run(context.Background(), Call{Input: input(t, in), Env: env})
}

// eventually polls cond, which watches a process outside the test's
// control, for a bounded time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readUntil collects a background shell's new output until it contains
// want.
func readUntil(t *testing.T, env *Env, id, want string) string {
	t.Helper()
	var seen strings.Builder
	eventually(t, fmt.Sprintf("%q from %s", want, id), func() bool {
		d := bashOutput(t, env, map[string]any{"bash_id": id}).Display.(BashOutputDisplay)
		seen.WriteString(d.Output)
		return strings.Contains(seen.String(), want)
	})
	return seen.String()
}

func TestBackgroundShellLifecycle(t *testing.T) {
	env := newShellEnv(t)
	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	id := startBackground(t, env, fmt.Sprintf("echo first; cat %q > /dev/null; echo second; exit 3", fifo))
	if id != "bash_1" {
		t.Errorf("first id = %q, want bash_1", id)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("starting in the background did not return at once")
	}
	readUntil(t, env, id, "first")

	r := bashOutput(t, env, map[string]any{"bash_id": id})
	if !strings.Contains(r.Text(), "running") || !strings.Contains(r.Text(), "(no new output)") || strings.Contains(r.Text(), "first") {
		t.Errorf("second read should be empty and running:\n%s", r.Text())
	}
	if rem := env.TakeReminders(); len(rem) != 0 {
		t.Errorf("reminders before exit: %q", rem)
	}

	// Let the command finish.
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reminders []string
	eventually(t, "the exit reminder", func() bool {
		reminders = append(reminders, env.TakeReminders()...)
		return len(reminders) > 0
	})
	if len(reminders) != 1 || !strings.Contains(reminders[0], "bash_1") || !strings.Contains(reminders[0], "exited with code 3") || !strings.Contains(reminders[0], "BashOutput") {
		t.Errorf("reminder %q", reminders)
	}
	r = bashOutput(t, env, map[string]any{"bash_id": id})
	if !strings.Contains(r.Text(), "exited with code 3") || !strings.Contains(r.Text(), "second") {
		t.Errorf("after exit:\n%s", r.Text())
	}
	if st := r.Display.(BashOutputDisplay).Status; st.State != ShellExited || st.ExitCode != 3 {
		t.Errorf("status %+v", st)
	}
	// Background commands leave the working directory alone.
	if env.Cwd() != env.ProjectDir {
		t.Errorf("cwd changed to %q", env.Cwd())
	}
}

func TestBackgroundShellFilter(t *testing.T) {
	env := newShellEnv(t)
	id := startBackground(t, env, `printf 'apple\nbanana\ncherry\n'`)
	eventually(t, "the shell to exit", func() bool { return len(env.TakeReminders()) > 0 })

	bad := bashOutput(t, env, map[string]any{"bash_id": id, "filter": "(unclosed"})
	if !bad.IsError || !strings.Contains(bad.Text(), "invalid filter") {
		t.Errorf("bad regex: %s", bad.Text())
	}
	r := bashOutput(t, env, map[string]any{"bash_id": id, "filter": "an|^ch"})
	if got := r.Display.(BashOutputDisplay).Output; got != "banana\ncherry" {
		t.Errorf("filtered output %q (the invalid filter must not have consumed it)", got)
	}
	r = bashOutput(t, env, map[string]any{"bash_id": id, "filter": "an"})
	if !strings.Contains(r.Text(), "no new output matching") {
		t.Errorf("filtered lines were not consumed:\n%s", r.Text())
	}
}

func TestKillShellKillsTheGroup(t *testing.T) {
	env := newShellEnv(t)
	id := startBackground(t, env, "sleep 1000 & echo child=$!; sleep 1000")
	out := readUntil(t, env, id, "child=")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "child=")))
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	r := NewKillShell().Run(context.Background(), Call{Input: input(t, map[string]any{"shell_id": id}), Env: env})
	if r.IsError || !strings.Contains(r.Text(), "Killed background shell "+id) {
		t.Fatalf("kill: %s", r.Text())
	}
	waitGone(t, pid)
	if st := r.Display.(ShellStatus); st.State != ShellKilled {
		t.Errorf("status after kill: %+v", st)
	}
	if r := bashOutput(t, env, map[string]any{"bash_id": id}); !strings.Contains(r.Text(), "killed") {
		t.Errorf("BashOutput after kill:\n%s", r.Text())
	}
	if rem := env.TakeReminders(); len(rem) != 0 {
		t.Errorf("a killed shell must not announce an exit: %q", rem)
	}
	// Killing it again is harmless.
	r = NewKillShell().Run(context.Background(), Call{Input: input(t, map[string]any{"shell_id": id}), Env: env})
	if r.IsError || !strings.Contains(r.Text(), "not running") {
		t.Errorf("second kill: %s", r.Text())
	}
}

func TestShellToolsUnknownID(t *testing.T) {
	env := newShellEnv(t)
	r := bashOutput(t, env, map[string]any{"bash_id": "bash_9"})
	if !r.IsError || !strings.Contains(r.Text(), "none has been started") {
		t.Errorf("no shells: %s", r.Text())
	}
	startBackground(t, env, "true")
	startBackground(t, env, "true")
	r = NewKillShell().Run(context.Background(), Call{Input: input(t, map[string]any{"shell_id": "bash_9"}), Env: env})
	if !r.IsError || !strings.Contains(r.Text(), "known shells: bash_1, bash_2") {
		t.Errorf("unknown id: %s", r.Text())
	}
}

func TestShellsCloseKillsEverything(t *testing.T) {
	env := NewEnv(t.TempDir())
	id := startBackground(t, env, "sleep 1000 & echo child=$!; sleep 1000")
	out := readUntil(t, env, id, "child=")
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "child=")))
	env.Close()
	waitGone(t, pid)
	list := env.Shells.List()
	if len(list) != 1 || list[0].State != ShellKilled || list[0].Command != "sleep 1000 & echo child=$!; sleep 1000" {
		t.Errorf("after Close: %+v", list)
	}
	r := runBashCtx(t, context.Background(), env, map[string]any{"command": "true", "run_in_background": true})
	if !r.IsError {
		t.Errorf("started a shell after Close: %s", r.Text())
	}
	// goleak in TestMain checks that no goroutine outlived Close.
}

func TestShellProcEscalatesToSIGKILL(t *testing.T) {
	out := signalWriter{ready: make(chan struct{})}
	p, err := startShell(shellCommand{
		Command:   "trap '' TERM; echo ready; sleep 1000",
		Dir:       t.TempDir(),
		KillGrace: 200 * time.Millisecond,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	<-out.ready // the trap is set
	start := time.Now()
	e := p.finish()
	if e.Signal != syscall.SIGKILL {
		t.Errorf("ended by %v (exit %d), want SIGKILL", e.Signal, e.Code)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Errorf("stopping took %s; want about the 200ms grace", d)
	}
	if e2 := p.finish(); e2.Code != e.Code {
		t.Errorf("second finish gave %+v", e2)
	}
}

func TestOutputRingKeepsTheLastMegabyte(t *testing.T) {
	var o outputRing
	chunk := []byte(strings.Repeat("x", 64<<10))
	for range 48 { // 3 MB
		o.Write(chunk)
	}
	text, dropped := o.readNew()
	if len(text) < shellOutputKeep || int64(len(text))+dropped != 48*64<<10 {
		t.Errorf("read %d bytes, dropped %d", len(text), dropped)
	}
	o.Write([]byte("tail"))
	if text, dropped := o.readNew(); text != "tail" || dropped != 0 {
		t.Errorf("next read %q dropped %d", text, dropped)
	}
}

// signalWriter closes ready at the first write.
type signalWriter struct {
	ready chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.ready) })
	return len(p), nil
}
