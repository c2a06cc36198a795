package prompt

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestSystemIsStableAndSorted(t *testing.T) {
	env := Environment{Cwd: "/p", Platform: "linux/amd64", Shell: "bash", Date: "2026-11-30"}
	a := System(Options{Env: env, Tools: []string{"Read", "Bash", "Edit"}})
	b := System(Options{Env: env, Tools: []string{"Edit", "Read", "Bash"}})
	if a != b {
		t.Fatal("system prompt depends on tool order")
	}
	if !strings.Contains(a, "Bash, Edit, Read") {
		t.Error("tools not listed sorted")
	}
	for _, want := range []string{"use Read, not cat", "use Edit, not sed", "Working directory: /p", "path:line", "prompt injection"} {
		if !strings.Contains(a, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
}

func TestOverrideAndAppend(t *testing.T) {
	got := System(Options{Override: "You are a pirate.", Append: "Answer in French."})
	if got != "You are a pirate.\n\nAnswer in French." {
		t.Fatalf("override: %q", got)
	}
	got = System(Options{Append: "Answer in French.", NoEnviron: true})
	if !strings.HasSuffix(got, "Answer in French.") || !strings.HasPrefix(got, "You are coda") {
		t.Fatalf("append: %q", got)
	}
}

func TestDetectGitRepository(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(dir+"/a.txt", []byte("a"), 0o644)
	run("add", ".")
	run("commit", "-qm", "first commit")
	os.WriteFile(dir+"/b.txt", []byte("b"), 0o644)
	e := Detect(context.Background(), dir, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	if !e.IsGitRepo || e.Branch != "main" || e.MainBranch != "main" || !strings.Contains(e.Commits, "first commit") || !strings.Contains(e.Status, "b.txt") {
		t.Fatalf("environment = %+v", e)
	}
	s := e.Section()
	for _, want := range []string{"Today's date: 2026-11-30", "Current branch: main", "?? b.txt"} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	if plain := Detect(context.Background(), t.TempDir(), time.Now()); plain.IsGitRepo {
		t.Error("a plain folder reported as a git repository")
	}
}
