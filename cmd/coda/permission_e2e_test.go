package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// TestPlanModeRoundTrip: in plan mode the model may read and write its
// plan file but not edit the project; ExitPlanMode (allowed by rule, since
// nobody can be asked headless) leaves plan mode and the edit then runs.
func TestPlanModeRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "old\n"})
	path := filepath.Join(dir, "a.txt")
	planPath := regexp.MustCompile(`plan file (\S+\.md)`)
	edit := input(map[string]any{"file_path": path, "old_string": "old", "new_string": "new"})
	var planFile string
	step := 0
	srv.SetHandler(func(r *llmtest.Request) llmtest.Turn {
		step++
		switch step {
		case 1:
			m := planPath.FindStringSubmatch(string(r.Body))
			if m == nil {
				return llmtest.Reply(llmtest.Text("no plan reminder"))
			}
			planFile = m[1]
			return llmtest.Reply(llmtest.ToolCall("", "Read", input(map[string]any{"file_path": path})),
				llmtest.ToolCall("", "Write", input(map[string]any{"file_path": planFile, "content": "1. replace old with new\n"})))
		case 2:
			return llmtest.Reply(llmtest.ToolCall("", "Edit", edit))
		case 3:
			return llmtest.Reply(llmtest.ToolCall("", "ExitPlanMode", input(map[string]any{"plan": "1. replace old with new"})))
		case 4:
			return llmtest.Reply(llmtest.ToolCall("", "Edit", edit))
		}
		return llmtest.Reply(llmtest.Text("done"))
	})
	r := coda(t, srv, dir, nil, "-p", "plan then do it", "--output-format", "json",
		"--permission-mode", "plan", "--allowedTools", "ExitPlanMode,Edit")
	res := parseResult(t, r)
	if res.Subtype != "success" || planFile == "" {
		t.Fatalf("result %+v (plan file %q), stderr %s", res, planFile, r.stderr)
	}
	reqs := srv.Requests()
	if got := reqs[1].LastUserText(); strings.Contains(got, "denied") || strings.Contains(got, "Error") {
		t.Errorf("Read or the plan file write was refused in plan mode: %q", got)
	}
	if data, _ := os.ReadFile(planFile); !strings.Contains(string(data), "replace old") {
		t.Errorf("plan file not written: %q", data)
	}
	if strings.HasPrefix(planFile, dir) {
		t.Errorf("plan file %s lies inside the repository", planFile)
	}
	if got := reqs[2].LastUserText(); !strings.Contains(strings.ToLower(got), "plan mode") {
		t.Errorf("edit in plan mode was not refused for plan mode: %q", got)
	}
	if got := reqs[3].LastUserText(); !strings.Contains(got, "approved your plan") {
		t.Errorf("ExitPlanMode result: %q", got)
	}
	if data, _ := os.ReadFile(path); string(data) != "new\n" {
		t.Fatalf("edit after leaving plan mode did not land: %q (last result %q)", data, reqs[4].LastUserText())
	}
	noRejections(t, srv)
}

// TestDontAskAndHardDeny: dontAsk refuses what would ask; a catastrophic
// command is refused even in bypassPermissions.
func TestDontAskAndHardDeny(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a\n"})
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", input(map[string]any{"command": "rm -rf / --no-preserve-root"}))),
		llmtest.Reply(llmtest.Text("ok")),
	)
	r := coda(t, srv, dir, nil, "-p", "x", "--output-format", "json", "--permission-mode", "bypassPermissions")
	if res := parseResult(t, r); len(res.PermissionDenials) != 1 {
		t.Fatalf("rm -rf / not denied in bypass mode: %+v", res)
	}
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Write", input(map[string]any{"file_path": filepath.Join(dir, "b.txt"), "content": "b"}))),
		llmtest.Reply(llmtest.Text("ok")),
	)
	r = coda(t, srv, dir, nil, "-p", "x", "--output-format", "json", "--permission-mode", "dontAsk")
	if res := parseResult(t, r); len(res.PermissionDenials) != 1 {
		t.Fatalf("write not denied in dontAsk: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err == nil {
		t.Fatal("file written in dontAsk mode")
	}
}
