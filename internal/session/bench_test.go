package session

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

// benchTurn is turn k of a typical agent session as four records: a
// prompt, an answer with a tool call, the tool's output, the usage.
func benchTurn(k int) []Record {
	id := fmt.Sprint(k)
	output := strings.Repeat(fmt.Sprintf("%6d\tfunc handler%d(w http.ResponseWriter, r *http.Request) {\n", k, k), 1+k%30)
	return []Record{
		{Type: TypeMessage, Message: &llm.Message{ID: "u" + id, Role: llm.RoleUser, Blocks: []llm.Block{
			llm.Text{Text: "Please look at the handler " + id + " and fix the error handling there, then run the tests."},
		}}},
		{Type: TypeMessage, Message: &llm.Message{ID: "a" + id, Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Text{Text: "I'll read the file first to see how errors are returned today."},
			llm.ToolUse{ID: "toolu_" + id, Name: "Read", Input: json.RawMessage(`{"file_path":"/home/user/project/internal/server/handler_` + id + `.go","offset":1,"limit":200}`)},
		}, Meta: llm.Meta{Model: "claude-sonnet", StopReason: llm.StopToolUse, Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 80}}}},
		{Type: TypeMessage, Message: &llm.Message{ID: "r" + id, Role: llm.RoleUser, Blocks: []llm.Block{
			llm.ToolResult{ToolUseID: "toolu_" + id, Content: []llm.Block{llm.Text{Text: output}}},
		}}},
		{Type: TypeUsage, Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadInputTokens: 30000}},
	}
}

// BenchmarkResume100k opens a session of 100,000 records (about 50 MB)
// and loads it into a conversation ready to continue.
func BenchmarkResume100k(b *testing.B) {
	home, project := b.TempDir(), b.TempDir()
	st := NewStore(home, project)
	sess, err := st.Create()
	if err != nil {
		b.Fatal(err)
	}
	for k := range 25_000 {
		for _, rec := range benchTurn(k) {
			if err := sess.Append(rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := sess.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(sess.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		s, l, err := st.Open(sess.ID())
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Messages) != 75_000 {
			b.Fatalf("%d messages", len(l.Messages))
		}
		s.Close()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkAppend appends one typical message, without fsync.
func BenchmarkAppend(b *testing.B) {
	st := NewStore(b.TempDir(), b.TempDir())
	sess, err := st.Create()
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	turn := benchTurn(7)
	b.ReportAllocs()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		if err := sess.Append(turn[i%3]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}
