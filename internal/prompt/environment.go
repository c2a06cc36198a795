package prompt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Environment is what the model should know about where it runs. It is
// computed once per session so the system prompt stays byte-identical.
type Environment struct {
	Cwd        string
	Platform   string
	OSVersion  string
	Shell      string
	Date       string // YYYY-MM-DD, the session's start day
	IsGitRepo  bool
	Branch     string
	MainBranch string
	Status     string // short git status, capped
	Commits    string // recent commits, one line each
}

// Detect gathers the environment of cwd. git is asked with a short
// timeout; a missing git just leaves the git fields empty.
func Detect(ctx context.Context, cwd string, now time.Time) Environment {
	e := Environment{
		Cwd:      cwd,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Shell:    filepath.Base(os.Getenv("SHELL")),
		Date:     now.Format("2006-01-02"),
	}
	if e.Shell == "." || e.Shell == "" {
		e.Shell = "bash"
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.OSVersion = "Linux " + strings.TrimSpace(string(data))
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = cwd
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if git("rev-parse", "--is-inside-work-tree") != "true" {
		return e
	}
	e.IsGitRepo = true
	e.Branch = git("branch", "--show-current")
	e.MainBranch = mainBranch(git)
	e.Status = capLines(git("status", "--short"), 20)
	e.Commits = git("log", "--oneline", "-n", "5")
	return e
}

func mainBranch(git func(...string) string) string {
	if ref := git("symbolic-ref", "--short", "refs/remotes/origin/HEAD"); ref != "" {
		return strings.TrimPrefix(ref, "origin/")
	}
	for _, b := range []string{"main", "master"} {
		if git("rev-parse", "--verify", "--quiet", "refs/heads/"+b) != "" {
			return b
		}
	}
	return ""
}

func capLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... and %d more", len(lines)-n)
}

// Section renders the environment for the system prompt.
func (e Environment) Section() string {
	var b strings.Builder
	b.WriteString("# Environment\n")
	fmt.Fprintf(&b, "Working directory: %s\n", e.Cwd)
	fmt.Fprintf(&b, "Platform: %s\n", e.Platform)
	if e.OSVersion != "" {
		fmt.Fprintf(&b, "OS version: %s\n", e.OSVersion)
	}
	fmt.Fprintf(&b, "Shell: %s\n", e.Shell)
	fmt.Fprintf(&b, "Today's date: %s\n", e.Date)
	fmt.Fprintf(&b, "Git repository: %v\n", e.IsGitRepo)
	if e.IsGitRepo {
		if e.Branch != "" {
			fmt.Fprintf(&b, "Current branch: %s\n", e.Branch)
		}
		if e.MainBranch != "" {
			fmt.Fprintf(&b, "Main branch (for pull requests): %s\n", e.MainBranch)
		}
		status := e.Status
		if status == "" {
			status = "(clean)"
		}
		fmt.Fprintf(&b, "Status at session start:\n%s\n", status)
		if e.Commits != "" {
			fmt.Fprintf(&b, "Recent commits:\n%s\n", e.Commits)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
