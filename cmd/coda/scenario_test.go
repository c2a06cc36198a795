package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

func input(v map[string]any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func TestReadAndRunBothProviders(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			dir := project(t, map[string]string{"hello.txt": "hello world\n"})
			srv.Enqueue(
				llmtest.Reply(llmtest.Text("Let me look."),
					llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, "hello.txt")})),
					llmtest.ToolCall("", "Bash", input(map[string]any{"command": "wc -c < hello.txt"}))),
				llmtest.Reply(llmtest.Text("The file says hello world and has 12 bytes.")),
			)
			var env []string
			args := []string{"-p", "what does hello.txt say?", "--output-format", "json", "--permission-mode", "bypassPermissions"}
			if provider == "openai" {
				env = []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + srv.OpenAIURL()}
				args = append(args, "--model", "openai/gpt-4.1")
			}
			r := coda(t, srv, dir, env, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			res := parseResult(t, r)
			if res.Type != "result" || res.Subtype != "success" || res.IsError || res.NumTurns != 2 ||
				res.Result != "The file says hello world and has 12 bytes." || res.SessionID == "" {
				t.Fatalf("result = %+v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if reqs[0].API != provider {
				t.Errorf("request went to %s", reqs[0].API)
			}
			results := reqs[1].LastUserText()
			if !strings.Contains(results, "hello world") || !strings.Contains(results, "12") {
				t.Errorf("tool results not sent back: %q", results)
			}
			noRejections(t, srv)
		})
	}
}

func TestParallelReads(t *testing.T) {
	srv := llmtest.NewServer(t)
	files := map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"}
	dir := project(t, files)
	var calls []llmtest.Block
	for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
		calls = append(calls, llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, n)})))
	}
	srv.Enqueue(llmtest.Reply(calls...), llmtest.Reply(llmtest.Text("read all three")))
	r := coda(t, srv, dir, nil, "-p", "read them", "--output-format", "json")
	if res := parseResult(t, r); res.Subtype != "success" {
		t.Fatalf("result = %+v, stderr %s", res, r.stderr)
	}
	text := srv.Requests()[1].LastUserText()
	ia, ib, ic := strings.Index(text, "alpha"), strings.Index(text, "bravo"), strings.Index(text, "charlie")
	if ia < 0 || ib < ia || ic < ib {
		t.Fatalf("results missing or out of order: %q", text)
	}
	noRejections(t, srv)
}

func TestRetriesThrough429And529(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"x": "x"})
	srv.Enqueue(llmtest.RateLimited(100*time.Millisecond), llmtest.Overloaded(), llmtest.Reply(llmtest.Text("made it")))
	home := t.TempDir()
	r := coda(t, srv, dir, []string{"HOME=" + home}, "-p", "hi", "--output-format", "stream-json", "--verbose")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var retries int
	var last map[string]any
	for _, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("line is not JSON: %q", l)
		}
		if obj["type"] == "system" && obj["subtype"] == "api_retry" {
			retries++
		}
		last = obj
	}
	if retries != 2 || last["type"] != "result" || last["result"] != "made it" {
		t.Fatalf("retries = %d, last = %v", retries, last)
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("%d requests, want 3", len(srv.Requests()))
	}
	// The raw error bodies go to the log file, not the terminal.
	log, err := os.ReadFile(filepath.Join(home, ".coda", "logs", "coda.log"))
	if err != nil || !strings.Contains(string(log), "rate_limit_error") || !strings.Contains(string(log), "overloaded_error") {
		t.Errorf("log lacks the raw error bodies: %v\n%s", err, log)
	}
	if strings.Contains(r.stderr, "rate_limit_error") {
		t.Errorf("raw error body written to the terminal: %s", r.stderr)
	}
}

func TestStreamJSONShape(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "alpha\n"})
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, "a.txt")}))),
		llmtest.Reply(llmtest.Text("alpha it is")),
	)
	r := coda(t, srv, dir, nil, "-p", "read", "--output-format", "stream-json", "--verbose")
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var obj struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			SessionID string `json:"session_id"`
			Tools     []string
			Message   struct {
				Role    string           `json:"role"`
				Content []map[string]any `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("bad line %q", l)
		}
		if obj.SessionID == "" {
			t.Errorf("line without session_id: %s", l)
		}
		k := obj.Type
		if obj.Subtype != "" {
			k += "/" + obj.Subtype
		}
		if obj.Type == "user" && len(obj.Message.Content) > 0 {
			k += ":" + obj.Message.Content[0]["type"].(string)
		}
		kinds = append(kinds, k)
	}
	want := "system/init user:text assistant user:tool_result assistant result/success"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("stream-json lines:\n got %s\nwant %s", got, want)
	}
	// Without --verbose Claude Code refuses stream-json; so does coda.
	r = coda(t, srv, dir, nil, "-p", "read", "--output-format", "stream-json")
	if r.code != 1 || !strings.Contains(r.stderr, "requires --verbose") {
		t.Errorf("stream-json without --verbose: exit %d, %s", r.code, r.stderr)
	}
}

func TestThinkingRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "alpha\n"})
	srv.Enqueue(
		llmtest.Reply(llmtest.Thinking("I should read a.txt first."),
			llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, "a.txt")}))),
		llmtest.Reply(llmtest.Thinking("It says alpha."), llmtest.Text("alpha")),
	)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".coda"), 0o755)
	os.WriteFile(filepath.Join(home, ".coda", "settings.json"), []byte(`{"alwaysThinkingEnabled": true}`), 0o644)
	r := coda(t, srv, dir, []string{"HOME=" + home}, "-p", "read", "--output-format", "json", "--model", "anthropic/claude-sonnet-4-5")
	if res := parseResult(t, r); res.Subtype != "success" || res.Result != "alpha" {
		t.Fatalf("result = %+v, stderr %s", res, r.stderr)
	}
	body := srv.Requests()[1].JSON()
	if _, ok := body["thinking"]; !ok {
		t.Error("thinking not enabled in the request")
	}
	msgs := srv.Requests()[1].Messages()
	asst := msgs[len(msgs)-2]["content"].([]any)
	first := asst[0].(map[string]any)
	if first["type"] != "thinking" || first["thinking"] != "I should read a.txt first." || first["signature"] == "" {
		t.Fatalf("thinking block not passed back first and unchanged: %v", first)
	}
	noRejections(t, srv)
}

func TestInterruptWithSignal(t *testing.T) {
	for sig, code := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		srv := llmtest.NewServer(t)
		dir := project(t, map[string]string{"x": "x"})
		srv.Enqueue(llmtest.Reply(llmtest.Text(strings.Repeat("slow words ", 50))).WithDelay(100 * time.Millisecond))
		cmd := newCmd(t, srv, dir, "-p", "talk", "--output-format", "json")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(srv.Requests()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		cmd.Process.Signal(sig)
		cmd.Wait()
		out := cmd.Stdout.(*strings.Builder).String()
		if got := cmd.ProcessState.ExitCode(); got != code {
			t.Errorf("%v: exit code %d, want %d", sig, got, code)
		}
		var res result
		if json.Unmarshal([]byte(out), &res) != nil || !res.IsError || res.Subtype != "error_during_execution" {
			t.Fatalf("%v: result after interrupt: %q", sig, out)
		}
	}
}

func newCmd(t *testing.T, srv *llmtest.Server, dir string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(codaBin, args...)
	c.Dir = dir
	c.Env = baseEnv(t, srv, nil)
	c.Stdout = &strings.Builder{}
	c.Stderr = &strings.Builder{}
	t.Cleanup(func() {
		if c.ProcessState == nil && c.Process != nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	return c
}

func TestMaxTurns(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a"})
	read := func() llmtest.Turn {
		return llmtest.Reply(llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, "a.txt")})))
	}
	srv.Enqueue(read(), read(), read(), read())
	r := coda(t, srv, dir, nil, "-p", "loop", "--output-format", "json", "--max-turns", "2")
	res := parseResult(t, r)
	if r.code != 1 || res.Subtype != "error_max_turns" || !res.IsError || res.NumTurns != 2 || len(srv.Requests()) != 2 {
		t.Fatalf("exit %d, result %+v, %d requests", r.code, res, len(srv.Requests()))
	}
}

func TestUnknownToolGoesBackToModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a"})
	srv.Enqueue(
		llmtest.Reply(llmtest.ToolCall("", "Teleport", `{"to":"mars"}`)),
		llmtest.Reply(llmtest.Text("sorry, no teleport")),
	)
	r := coda(t, srv, dir, nil, "-p", "go", "--output-format", "json")
	if res := parseResult(t, r); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	text := srv.Requests()[1].LastUserText()
	if !strings.Contains(text, "No such tool: Teleport") || !strings.Contains(text, "Read") {
		t.Fatalf("unknown tool result: %q", text)
	}
	noRejections(t, srv)
}

func TestHeadlessDeniesEditWithoutPermission(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "old\n"})
	path := filepath.Join(dir, "a.txt")
	turns := func() {
		srv.Enqueue(
			llmtest.Reply(llmtest.ToolCall("", "Read", input(map[string]any{"file_path": path}))),
			llmtest.Reply(llmtest.ToolCall("", "Edit", input(map[string]any{"file_path": path, "old_string": "old", "new_string": "new"}))),
			llmtest.Reply(llmtest.Text("done")),
		)
	}
	turns()
	r := coda(t, srv, dir, nil, "-p", "edit", "--output-format", "json")
	res := parseResult(t, r)
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Edit" {
		t.Fatalf("denials = %+v", res.PermissionDenials)
	}
	if got := srv.Requests()[2].LastUserText(); !strings.Contains(got, "--allowedTools") {
		t.Errorf("denial does not tell how to allow: %q", got)
	}
	if data, _ := os.ReadFile(path); string(data) != "old\n" {
		t.Fatalf("file changed despite denial: %q", data)
	}
	turns()
	r = coda(t, srv, dir, nil, "-p", "edit", "--output-format", "json", "--allowedTools", "Edit")
	if res := parseResult(t, r); res.Subtype != "success" || len(res.PermissionDenials) != 0 {
		t.Fatalf("with --allowedTools: %+v", res)
	}
	if data, _ := os.ReadFile(path); string(data) != "new\n" {
		t.Fatalf("file not edited: %q", data)
	}
}

func TestNoAPIKey(t *testing.T) {
	dir := project(t, map[string]string{"x": "x"})
	r := coda(t, nil, dir, nil, "-p", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestMalformedSettingsRefuseToStart(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{".coda/settings.json": "{\n  \"model\": \"x\",\n}\n"})
	r := coda(t, srv, dir, nil, "-p", "hi")
	want := filepath.Join(dir, ".coda", "settings.json") + ":3:"
	if r.code != 2 || !strings.Contains(r.stderr, want) || len(srv.Requests()) != 0 {
		t.Fatalf("exit %d, stderr %q (want %q)", r.code, r.stderr, want)
	}
}

func TestVersionAndHelp(t *testing.T) {
	r := coda(t, nil, t.TempDir(), nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "coda ") {
		t.Fatalf("--version: %d %q", r.code, r.stdout)
	}
	r = coda(t, nil, t.TempDir(), nil, "--help")
	for _, flag := range []string{"--print", "--output-format", "--max-turns", "--max-budget-usd", "--allowedTools", "--permission-mode"} {
		if !strings.Contains(r.stdout, flag) {
			t.Errorf("--help lacks %s", flag)
		}
	}
}

func TestCacheReadsDominateLongSession(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": strings.Repeat("some file content\n", 50)})
	for i := range 19 {
		srv.Enqueue(llmtest.Reply(llmtest.Text(fmt.Sprintf("step %d", i)),
			llmtest.ToolCall("", "Read", input(map[string]any{"file_path": filepath.Join(dir, "a.txt")}))))
	}
	srv.Enqueue(llmtest.Reply(llmtest.Text("finished")))
	r := coda(t, srv, dir, nil, "-p", "go", "--output-format", "json")
	if res := parseResult(t, r); res.Subtype != "success" || res.NumTurns != 20 {
		t.Fatalf("result %+v, stderr %s", res, r.stderr)
	}
	var input, read int
	for _, req := range srv.Requests()[1:] {
		u := req.Usage
		input += u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		read += u.CacheReadInputTokens
	}
	ratio := float64(read) / float64(input)
	t.Logf("cache reads %d of %d input tokens after the first turn: %.1f%%", read, input, 100*ratio)
	if ratio < 0.90 {
		t.Fatalf("cache read ratio %.1f%% < 90%%", 100*ratio)
	}
	noRejections(t, srv)
}

func TestSlashCommandsInPrintMode(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a"})
	r := coda(t, srv, dir, nil, "-p", "/help", "--output-format", "json")
	res := parseResult(t, r)
	if res.Subtype != "success" || !strings.Contains(res.Result, "/compact") || len(srv.Requests()) != 0 {
		t.Fatalf("/help: %+v (%d requests)", res, len(srv.Requests()))
	}
	r = coda(t, srv, dir, nil, "-p", "/hepl")
	if r.code != 1 || !strings.Contains(r.stderr, "/help") {
		t.Fatalf("unknown command: exit %d, %q", r.code, r.stderr)
	}
	srv.Enqueue(llmtest.Reply(llmtest.Text("wrote it")))
	r = coda(t, srv, dir, nil, "-p", "/init", "--output-format", "json")
	if res := parseResult(t, r); res.Result != "wrote it" || len(srv.Requests()) != 1 {
		t.Fatalf("/init: %+v", res)
	}
	if got := srv.Requests()[0].LastUserText(); !strings.Contains(got, "AGENTS.md") || strings.HasPrefix(got, "/init") {
		t.Errorf("/init did not expand to its prompt: %q", got)
	}
}
