package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// buildCoda builds the binary once per benchmark binary run.
func buildCoda(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "coda")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/coda")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// measure runs cmd and returns its wall time and peak RSS in MB.
func measure(b *testing.B, cmd *exec.Cmd) (time.Duration, float64) {
	b.Helper()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Path, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, float64(ru.Maxrss) / 1024
}

func report(b *testing.B, walls []time.Duration, rss []float64) {
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Float64s(rss)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "ms-wall-median")
	b.ReportMetric(rss[len(rss)-1], "MB-peak-rss")
}

// BenchmarkVersion: `coda --version`. Target: at most 20 ms wall, 25 MB RSS.
func BenchmarkVersion(b *testing.B) { benchVersion(b, buildCoda(b)) }

func benchVersion(b *testing.B, bin string) {
	var walls []time.Duration
	var rss []float64
	b.ResetTimer()
	for range b.N {
		w, r := measure(b, exec.Command(bin, "--version"))
		walls, rss = append(walls, w), append(rss, r)
	}
	report(b, walls, rss)
}

// fiveToolScenario sets srv to play a run with five tool calls over four
// turns and returns the project directory it works in. Requests without
// tools (a harness's side requests: titles, quota checks) get a short text
// answer and do not advance the script.
func fiveToolScenario(b testing.TB, srv *llmtest.Server) string {
	dir := b.TempDir()
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	in := func(v map[string]any) string { d, _ := json.Marshal(v); return string(d) }
	script := []llmtest.Turn{
		llmtest.Reply(llmtest.Text("Reading."),
			llmtest.ToolCall("", "Read", in(map[string]any{"file_path": filepath.Join(dir, "f0.txt")})),
			llmtest.ToolCall("", "Read", in(map[string]any{"file_path": filepath.Join(dir, "f1.txt")}))),
		llmtest.Reply(llmtest.ToolCall("", "Glob", in(map[string]any{"pattern": "*.txt"})),
			llmtest.ToolCall("", "Grep", in(map[string]any{"pattern": "file", "path": dir}))),
		llmtest.Reply(llmtest.ToolCall("", "Bash", in(map[string]any{"command": "ls | wc -l"}))),
		llmtest.Reply(llmtest.Text("There are three files.")),
	}
	var mu sync.Mutex
	srv.SetHandler(func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		if len(r.ToolNames()) == 0 || len(script) == 0 {
			return llmtest.Reply(llmtest.Text("ok"))
		}
		t := script[0]
		script = script[1:]
		return t
	})
	return dir
}

// BenchmarkHeadlessRun: a whole `coda -p` run of a five-tool-call scenario
// against the local fake. Target: at most 0.3 s wall and 40 MB RSS.
func BenchmarkHeadlessRun(b *testing.B) { benchHeadless(b, buildCoda(b), nil) }

// benchHeadless runs bin -p over the five-tool scenario, with extra
// arguments and environment for the binary under test.
func benchHeadless(b *testing.B, bin string, extra []string, env ...string) {
	srv := llmtest.NewServer(b)
	var walls []time.Duration
	var rss []float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := fiveToolScenario(b, srv)
		args := append([]string{"-p", "how many files?", "--output-format", "json", "--permission-mode", "bypassPermissions"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append([]string{"HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=k",
			"ANTHROPIC_BASE_URL=" + srv.URL()}, env...)
		b.StartTimer()
		w, r := measure(b, cmd)
		walls, rss = append(walls, w), append(rss, r)
	}
	b.StopTimer()
	report(b, walls, rss)
	if r := srv.Rejections(); len(r) > 0 {
		b.Fatalf("fake rejected: %v", r)
	}
}

// claudeBin is Claude Code's binary when CLAUDE_BIN names it (bench/run
// sets it when a reference install exists); the reference benchmarks skip
// without it.
func claudeBin(b *testing.B) string {
	bin := os.Getenv("CLAUDE_BIN")
	if bin == "" {
		b.Skip("CLAUDE_BIN not set: no reference to measure")
	}
	return bin
}

// BenchmarkVersionClaudeCode: `claude --version`, the reference.
func BenchmarkVersionClaudeCode(b *testing.B) { benchVersion(b, claudeBin(b)) }

// BenchmarkHeadlessRunClaudeCode: the same five-tool scenario through
// `claude -p`, the reference (its side requests get short answers).
func BenchmarkHeadlessRunClaudeCode(b *testing.B) {
	benchHeadless(b, claudeBin(b), []string{"--model", "claude-sonnet-4-5"},
		"IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
}
