package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// TestEveryTool drives one session through every built-in tool against
// real files, a real shell and a local web page.
func TestEveryTool(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><main><h1>Release notes</h1><p>Version <b>2.0</b> adds pelicans.</p></main></body></html>`)
	}))
	defer page.Close()
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{
		"main.go":       "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"notes/todo.md": "- write tests\n",
		"ignored.log":   "secret\n",
		".gitignore":    "*.log\n",
	})
	main := filepath.Join(dir, "main.go")
	srv.Enqueue(
		llmtest.Reply(
			llmtest.ToolCall("", "TodoWrite", input(map[string]any{"todos": []map[string]string{
				{"content": "Look around", "status": "in_progress", "activeForm": "Looking around"},
				{"content": "Change greeting", "status": "pending", "activeForm": "Changing greeting"}}})),
			llmtest.ToolCall("", "Glob", input(map[string]any{"pattern": "**/*"})),
			llmtest.ToolCall("", "Grep", input(map[string]any{"pattern": "println", "output_mode": "content"})),
			llmtest.ToolCall("", "Read", input(map[string]any{"file_path": main})),
			llmtest.ToolCall("", "WebFetch", input(map[string]any{"url": page.URL, "prompt": "what is new?"}))),
		llmtest.Reply(
			llmtest.ToolCall("", "Edit", input(map[string]any{"file_path": main, "old_string": `println("hello")`, "new_string": `println("hello, pelican")`})),
			llmtest.ToolCall("", "Write", input(map[string]any{"file_path": filepath.Join(dir, "docs", "NOTES.md"), "content": "pelicans\n"})),
			llmtest.ToolCall("bg", "Bash", input(map[string]any{"command": "sleep 0.2; echo background-done", "run_in_background": true}))),
		llmtest.Reply(
			llmtest.ToolCall("", "Bash", input(map[string]any{"command": "go run main.go 2>&1; sleep 0.5"})),
			llmtest.ToolCall("", "BashOutput", input(map[string]any{"bash_id": "bash_1"}))),
		llmtest.Reply(
			llmtest.ToolCall("", "Bash", input(map[string]any{"command": "sleep 60", "run_in_background": true}))),
		llmtest.Reply(llmtest.ToolCall("", "KillShell", input(map[string]any{"shell_id": "bash_2"}))),
		llmtest.Reply(llmtest.Text("All done.")),
	)
	gocache := filepath.Join(t.TempDir(), "gocache")
	r := coda(t, srv, dir, []string{"GOCACHE=" + gocache, "GOPATH=" + filepath.Join(t.TempDir(), "gopath")},
		"-p", "use every tool", "--output-format", "json", "--permission-mode", "bypassPermissions")
	res := parseResult(t, r)
	if res.Subtype != "success" || res.NumTurns != 6 {
		t.Fatalf("result %+v\nstderr %s", res, r.stderr)
	}
	reqs := srv.Requests()
	look := reqs[1].LastUserText()
	for _, want := range []string{"main.go", "notes/todo.md", `println("hello")`, "Release notes", "pelicans"} {
		if !strings.Contains(look, want) {
			t.Errorf("first round of results lacks %q:\n%s", want, look)
		}
	}
	if strings.Contains(look, "ignored.log") {
		t.Errorf("Glob listed a git-ignored file")
	}
	changes := reqs[2].LastUserText()
	if !strings.Contains(changes, "bash_1") {
		t.Errorf("background shell id missing: %s", changes)
	}
	run := reqs[3].LastUserText()
	if !strings.Contains(run, "hello, pelican") || !strings.Contains(run, "background-done") {
		t.Errorf("edited program output or background output missing:\n%s", run)
	}
	if !strings.Contains(reqs[5].LastUserText(), "bash_2") {
		t.Errorf("KillShell result: %s", reqs[5].LastUserText())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "docs", "NOTES.md")); string(data) != "pelicans\n" {
		t.Errorf("Write did not create the file: %q", data)
	}
	if out, err := exec.Command("bash", "-c", "ps -ef | grep \"sleep 60\" | grep -v grep").Output(); err == nil && len(out) > 0 {
		t.Errorf("killed background shell still running: %s", out)
	}
	noRejections(t, srv)
}

// TestSandboxedBashInDefaultMode: with bubblewrap available, shell commands
// run without asking in default mode, inside the sandbox: the project is
// writable, home secrets are hidden.
func TestSandboxedBashInDefaultMode(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	// The sandbox gives commands a private /tmp, so the fake home must
	// live elsewhere for the secret to be visible outside the sandbox.
	home, err := os.MkdirTemp("/var/tmp", "coda-home")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("PRIVATE-KEY-MATERIAL"), 0o600)
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a\n"})
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Bash", input(map[string]any{"command": "echo made > made.txt && cat made.txt"})),
			llmtest.ToolCall("", "Bash", input(map[string]any{"command": "cat " + filepath.Join(home, ".ssh", "id_rsa")}))),
		llmtest.Reply(llmtest.Text("ok")),
	)
	r := coda(t, srv, dir, []string{"HOME=" + home}, "-p", "x", "--output-format", "json")
	res := parseResult(t, r)
	if res.Subtype != "success" || len(res.PermissionDenials) != 0 {
		t.Fatalf("result %+v\n%s", res, r.stderr)
	}
	out := srv.Requests()[1].LastUserText()
	if !strings.Contains(out, "made") {
		t.Errorf("write inside the project failed in the sandbox: %s", out)
	}
	if strings.Contains(out, "PRIVATE-KEY-MATERIAL") {
		t.Fatalf("sandboxed command read ~/.ssh/id_rsa: %s", out)
	}
}

// TestWebFetchSummarisesWithSmallModel: with a small model configured,
// WebFetch answers through one tool-less request to it.
func TestWebFetchSummarisesWithSmallModel(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><p>The launch date is March 3.</p></body></html>`)
	}))
	defer page.Close()
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{".coda/settings.json": `{"smallModel": "anthropic/claude-haiku-4-5"}`})
	srv.SetHandler(func(r *llmtest.Request) llmtest.Turn {
		if len(r.ToolNames()) == 0 {
			return llmtest.Reply(llmtest.Text("It launches on March 3."))
		}
		if len(srv.Requests()) == 1 {
			return llmtest.Reply(llmtest.ToolCall("", "WebFetch", input(map[string]any{"url": page.URL, "prompt": "when is the launch?"})))
		}
		return llmtest.Reply(llmtest.Text("done"))
	})
	r := coda(t, srv, dir, nil, "-p", "check the page", "--output-format", "json", "--allowedTools", "WebFetch")
	if res := parseResult(t, r); res.Subtype != "success" {
		t.Fatalf("result %+v\n%s", res, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[1].JSON()["model"] != "claude-haiku-4-5" || !strings.Contains(string(reqs[1].Body), "March 3") {
		t.Fatalf("no summary request to the small model (%d requests)", len(reqs))
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "It launches on March 3.") {
		t.Fatalf("WebFetch result is not the summary: %q", got)
	}
}
