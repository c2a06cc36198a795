package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireBwrap skips the test when bwrap cannot run here at all.
func requireBwrap(t *testing.T) {
	t.Helper()
	if err := Probe(context.Background()); err != nil {
		t.Skipf("bwrap cannot run here, sandbox tests skipped: %v", err)
	}
}

// fixture is a home with secrets, a project inside it and a directory
// outside both. It lives under /var/tmp rather than t.TempDir(): the
// sandbox gives commands a private /tmp, so files under /tmp would be
// invisible inside it and every "cannot read" or "cannot write" would pass
// for the wrong reason.
type fixture struct {
	home, proj, outside string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "coda-sandbox-test-")
	if err != nil {
		base = t.TempDir()
		t.Logf("using %s: /var/tmp unusable: %v", base, err)
	} else {
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	f := fixture{home: filepath.Join(base, "home"), proj: filepath.Join(base, "home", "proj"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{f.proj, f.outside, filepath.Join(f.home, ".ssh"), filepath.Join(f.home, ".aws"), filepath.Join(f.proj, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(f.home, ".ssh", "id_rsa"):          "PRIVATE KEY\n",
		filepath.Join(f.home, ".aws", "credentials"):     "AWS SECRET\n",
		filepath.Join(f.home, ".netrc"):                  "machine x password NETRC\n",
		filepath.Join(f.home, "notes.txt"):               "just notes\n",
		filepath.Join(f.proj, ".git", "config"):          "[core]\n",
		filepath.Join(f.proj, ".git", "hooks", "pre-co"): "#!/bin/sh\n",
		filepath.Join(f.outside, "file.txt"):             "outside\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) options() Options {
	return Options{
		ProjectDir: f.proj,
		Home:       f.home,
		// The home is writable here only so that the secrets would be
		// readable, and writable, if hiding them failed.
		WritableDirs: []string{f.home},
		Protected:    []string{filepath.Join(f.proj, ".git", "hooks"), filepath.Join(f.proj, ".git", "config"), filepath.Join(f.proj, ".coda", "settings.json")},
	}
}

// run runs script with bash inside the sandbox, in the project directory.
func run(t *testing.T, opts Options, script string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := Wrap(opts, []string{"bash", "-c", script})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = opts.ProjectDir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestSecretsAreHidden(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	opts := f.options()
	out, err := run(t, opts, "cat ~/notes.txt", "HOME="+f.home)
	if err != nil || !strings.Contains(out, "just notes") {
		t.Fatalf("reading an ordinary home file failed (the test would prove nothing): %v: %s", err, out)
	}
	for _, secret := range []string{".ssh/id_rsa", ".aws/credentials", ".netrc"} {
		out, err := run(t, opts, "cat ~/"+secret, "HOME="+f.home)
		if err == nil && out != "" || strings.Contains(out, "PRIVATE") || strings.Contains(out, "SECRET") || strings.Contains(out, "NETRC") {
			t.Errorf("cat ~/%s inside the sandbox: err=%v output %q", secret, err, out)
		}
	}
	if out, err := run(t, opts, "echo x > ~/.ssh/authorized_keys", "HOME="+f.home); err == nil {
		t.Errorf("writing ~/.ssh/authorized_keys succeeded: %s", out)
	}
	if _, err := os.Stat(filepath.Join(f.home, ".ssh", "authorized_keys")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("~/.ssh/authorized_keys appeared on the host: %v", err)
	}
}

func TestWritesOutsideTheProjectFail(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	opts := f.options()
	opts.WritableDirs = nil
	target := filepath.Join(f.outside, "file.txt")
	out, err := run(t, opts, "echo changed > "+target)
	if err == nil {
		t.Errorf("writing %s succeeded: %s", target, out)
	} else if !strings.Contains(out, "Read-only file system") {
		t.Errorf("writing outside failed for another reason than a read-only file system: %s", out)
	}
	if b, _ := os.ReadFile(target); string(b) != "outside\n" {
		t.Errorf("%s changed on the host: %q", target, b)
	}
	out, err = run(t, opts, "echo x > ~/new.txt", "HOME="+f.home)
	if err == nil {
		t.Errorf("writing to the home directory succeeded: %s", out)
	}
}

func TestProtectedFilesInsideTheProjectAreReadOnly(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	for _, script := range []string{
		"echo evil > .git/hooks/pre-commit",
		"echo evil >> .git/hooks/pre-co",
		"echo '[core] hooksPath=/x' >> .git/config",
		"rm -f .git/config",
	} {
		if out, err := run(t, f.options(), script); err == nil {
			t.Errorf("%q succeeded inside the sandbox: %s", script, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.proj, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.proj, ".git", "hooks", "pre-commit")); err == nil {
		t.Error(".git/hooks/pre-commit was created")
	}
}

func TestProjectIsWritableAndTmpIsPrivate(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	marker := fmt.Sprintf("coda-sandbox-%d", time.Now().UnixNano())
	out, err := run(t, f.options(), "echo ok > made.txt && mkdir -p sub && echo tmp > /tmp/"+marker+" && cat /tmp/"+marker+" && echo $TMPDIR")
	if err != nil {
		t.Fatalf("writing inside the project failed: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(f.proj, "made.txt")); string(b) != "ok\n" {
		t.Errorf("made.txt on the host = %q", b)
	}
	if !strings.Contains(out, "tmp\n/tmp") {
		t.Errorf("private /tmp not usable: %q", out)
	}
	if _, err := os.Stat(filepath.Join("/tmp", marker)); err == nil {
		t.Errorf("/tmp/%s leaked to the host", marker)
	}
}

func TestNoNetworkUnlessAllowed(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	defer func() {
		ln.Close()
		<-done
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)

	out, err := run(t, f.options(), connect)
	if err == nil || strings.Contains(out, "connected") {
		t.Errorf("connected to the host's 127.0.0.1:%d from the sandbox: %s", port, out)
	}
	opts := f.options()
	opts.Network = true
	out, err = run(t, opts, connect)
	if err != nil || !strings.Contains(out, "connected") {
		t.Fatalf("with Network the connection failed (the test would prove nothing): %v: %s", err, out)
	}
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Error("the listener never saw the allowed connection")
	}
}

func TestGoBuildInsideTheSandbox(t *testing.T) {
	requireBwrap(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	f := newFixture(t)
	files := map[string]string{
		"go.mod": "module example.com/hello\n\ngo 1.21\n",
		// No imports: on a cold build cache only the runtime compiles.
		"main.go": "package main\n\nfunc main() { println(\"hello from the sandbox\") }\n",
	}
	for name, c := range files {
		if err := os.WriteFile(filepath.Join(f.proj, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The host's build cache, made writable as coda does for real builds,
	// keeps the test fast; GOPATH gets a directory of its own.
	cacheOut, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(cacheOut))
	gopath := filepath.Join(filepath.Dir(f.home), "gopath")
	for _, d := range []string{cache, gopath} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := f.options()
	opts.WritableDirs = []string{cache, gopath}
	out, err := run(t, opts, goBin+" build -o hello . && ./hello",
		"HOME="+f.home, "GOCACHE="+cache, "GOPATH="+gopath,
		"GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "GOPROXY=off")
	if err != nil || !strings.Contains(out, "hello from the sandbox") {
		t.Fatalf("go build in the sandbox: %v: %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(f.proj, "hello")); err != nil {
		t.Errorf("the binary is not in the project on the host: %v", err)
	}
}

// TestKillingTheProcessGroupEndsTheSandbox checks that --new-session does
// not break stopping a command: killing the group bwrap leads ends every
// process inside, background ones included.
func TestKillingTheProcessGroupEndsTheSandbox(t *testing.T) {
	requireBwrap(t)
	f := newFixture(t)
	tag := fmt.Sprintf("%d.%03d", 900+time.Now().UnixNano()%99, time.Now().UnixNano()%1000)
	argv := Wrap(f.options(), []string{"bash", "-c", "sleep " + tag + " & sleep " + tag + " & echo ready; wait"})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = f.proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("sandboxed command did not start: %q", line)
	}
	// Both sleeps are forked; wait, boundedly, until both have exec'ed.
	for deadline := time.Now().Add(5 * time.Second); countProcesses(t, "sleep "+tag) != 2; {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("%d sleeps running before the kill, want 2", countProcesses(t, "sleep "+tag))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the sandbox did not exit after its process group was killed")
	}
	// The kernel tears the PID namespace down asynchronously; give it a
	// bounded moment.
	deadline := time.Now().Add(5 * time.Second)
	for countProcesses(t, "sleep "+tag) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("processes inside the sandbox outlived the killed process group")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countProcesses counts host processes whose command line is cmdline.
func countProcesses(t *testing.T, cmdline string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(cmdline, " ", "\x00") + "\x00"
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == want {
			n++
		}
	}
	return n
}

func TestWrapArguments(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := Wrap(Options{ProjectDir: dir, Protected: []string{existing, filepath.Join(dir, "missing")}}, []string{"echo", "--", "hi"})
	joined := strings.Join(argv, " ")
	for _, want := range []string{"--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--bind " + dir + " " + dir, "--ro-bind " + existing + " " + existing} {
		if !strings.Contains(joined, want) {
			t.Errorf("Wrap lacks %q: %s", want, joined)
		}
	}
	if strings.Contains(joined, "missing") {
		t.Errorf("Wrap binds a missing protected path: %s", joined)
	}
	if i := slices.Index(argv, "--"); i < 0 || !slices.Equal(argv[i+1:], []string{"echo", "--", "hi"}) {
		t.Errorf("the command is not passed through after --: %q", argv)
	}
	if slices.Contains(Wrap(Options{ProjectDir: dir, Network: true}, []string{"true"}), "--unshare-net") {
		t.Error("Network: true still unshares the network")
	}
}

func TestProbeWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("Probe without bwrap = %v, want an error naming bubblewrap", err)
	}
}
