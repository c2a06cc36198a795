package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// codaBin is the binary under test, built once by TestMain.
var codaBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coda-e2e")
	if err != nil {
		panic(err)
	}
	codaBin = filepath.Join(dir, "coda")
	build := exec.Command("go", "build", "-o", codaBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("build coda: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// project is a temporary git repository with a few files.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-qm", "initial")
	return dir
}

// run is one invocation of the binary.
type run struct {
	code   int
	stdout string
	stderr string
}

// coda runs the binary in dir with a clean HOME and the fake as the API.
func coda(t *testing.T, srv *llmtest.Server, dir string, env []string, args ...string) run {
	t.Helper()
	return codaCtx(context.Background(), t, srv, dir, env, args...)
}

func codaCtx(ctx context.Context, t *testing.T, srv *llmtest.Server, dir string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, codaBin, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv(t, srv, env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run coda: %v", err)
	}
	return run{code: code, stdout: out.String(), stderr: errOut.String()}
}

func baseEnv(t *testing.T, srv *llmtest.Server, extra []string) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	if srv != nil {
		env = append(env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL())
	}
	return append(env, extra...)
}

// result is the --output-format json object.
type result struct {
	Type              string  `json:"type"`
	Subtype           string  `json:"subtype"`
	IsError           bool    `json:"is_error"`
	Result            string  `json:"result"`
	SessionID         string  `json:"session_id"`
	NumTurns          int     `json:"num_turns"`
	DurationMS        int64   `json:"duration_ms"`
	TotalCostUSD      float64 `json:"total_cost_usd"`
	Errors            []string
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
	Usage struct {
		InputTokens          int `json:"input_tokens"`
		OutputTokens         int `json:"output_tokens"`
		CacheReadInputTokens int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func parseResult(t *testing.T, r run) result {
	t.Helper()
	var res result
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\nstdout: %s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return res
}

func noRejections(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the fake API rejected requests: %v", r)
	}
}
