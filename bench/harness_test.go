package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/llm/anthropic"
	"github.com/coda-cli/coda/internal/llm/llmtest"
	"github.com/coda-cli/coda/internal/tools"
)

// BenchmarkHarnessOverhead measures the time from the last SSE event of an
// answer asking for three Reads of small files to the arrival of the next
// request, with 200 messages of history: parsing, tool dispatch, the reads,
// request encoding and sending. Target: median at most 5 ms.
func BenchmarkHarnessOverhead(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("f%d.go", i))
		os.WriteFile(p, []byte("package main\n\nfunc main() {}\n"), 0o644)
		paths = append(paths, p)
	}
	srv := llmtest.NewServer(b)
	history := make([]llm.Message, 0, 200)
	for i := range 100 {
		history = append(history,
			llm.UserText(fmt.Sprintf("question %d: what does function number %d in the package do?", i, i)),
			llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: fmt.Sprintf("answer %d: it parses the input, checks the bounds and returns the result.", i)}}})
	}
	provider := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k"})
	model := agent.Model{Provider: provider, Info: llm.ModelInfo{Provider: "anthropic", ID: "claude-sonnet-4-5", ContextWindow: 200000, MaxOutputTokens: 64000}}
	var overheads []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		env := tools.NewEnv(dir)
		a := agent.New(agent.Config{Model: model, Tools: tools.NewRegistry(tools.FileTools()...), Env: env,
			Conv: llm.NewConversation(history...)})
		var calls []llmtest.Block
		for _, p := range paths {
			in, _ := json.Marshal(map[string]string{"file_path": p})
			calls = append(calls, llmtest.ToolCall("", "Read", string(in)))
		}
		first := len(srv.Requests())
		srv.Enqueue(llmtest.Reply(calls...), llmtest.Reply(llmtest.Text("ok")))
		b.StartTimer()
		for range a.Submit(context.Background(), "read the three files") {
		}
		b.StopTimer()
		reqs := srv.Requests()
		if len(reqs) != first+2 {
			b.Fatalf("expected 2 requests, got %d", len(reqs)-first)
		}
		overheads = append(overheads, reqs[first+1].Arrived.Sub(srv.LastEventAt(first)))
		env.Close()
	}
	sort.Slice(overheads, func(i, j int) bool { return overheads[i] < overheads[j] })
	b.ReportMetric(float64(overheads[len(overheads)/2].Microseconds())/1000, "ms-overhead-median")
	if r := srv.Rejections(); len(r) > 0 {
		b.Fatalf("fake rejected: %v", r)
	}
}
