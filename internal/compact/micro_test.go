package compact

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

func results(msgs []llm.Message) []llm.ToolResult {
	var out []llm.ToolResult
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if r, ok := b.(llm.ToolResult); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestMicroWhenCacheIsCold(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, bounds := setup(t, f, nil)
	b := newBuilder(t, clk.Now()).user("go")
	b.round("Bash", map[string]any{"command": "echo tiny"}, 10) // too small to clear
	for i := 0; i < 9; i++ {
		b.round("Bash", map[string]any{"command": "go test ./..."}, 3000)
	}
	b.usage(30000)
	conv := b.conv()
	before := conv.Messages()

	// Warm cache: nothing changes.
	clk.advance(4 * time.Minute)
	if err := c.Compact(context.Background(), conv, false); err != nil {
		t.Fatal(err)
	}
	if len(*bounds) != 0 || conv.Messages()[2].Blocks[0].(llm.ToolResult).ToolUseID == "" {
		t.Fatal("changed while the cache was warm")
	}
	if got := results(conv.Messages()); textOf(got[0].Content[0]) != textOf(results(before)[0].Content[0]) {
		t.Fatal("a result changed while the cache was warm")
	}

	// Past the cache lifetime: all but the newest 5 results are cleared.
	clk.advance(2 * time.Minute)
	if err := c.Compact(context.Background(), conv, false); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 0 {
		t.Fatal("micro-compaction asked the model")
	}
	after := results(conv.Messages())
	orig := results(before)
	for i, r := range after {
		text := textOf(r.Content[0])
		switch {
		case i == 0:
			if cleared(r) {
				t.Fatal("a 10-byte result was replaced by a longer placeholder")
			}
		case i < 5:
			if !cleared(r) || !strings.Contains(text, `Bash {"command":"go test ./..."}`) || !strings.Contains(text, "Read that file") {
				t.Fatalf("result %d not cleared to a placeholder: %.200s", i, text)
			}
			path := persistedPath("<persisted-output>\nFull output saved to: " + between(text, "saved in ", " ("))
			saved, err := os.ReadFile(path)
			if err != nil || string(saved) != textOf(orig[i].Content[0]) {
				t.Fatalf("result %d: full output not readable at %q: %v", i, path, err)
			}
		default:
			if text != textOf(orig[i].Content[0]) {
				t.Fatalf("recent result %d changed", i)
			}
		}
		if r.ToolUseID != orig[i].ToolUseID {
			t.Fatal("ids changed")
		}
	}
	pairsIntact(t, conv.Messages())
	if len(*bounds) != 1 || !(*bounds)[0].Micro || (*bounds)[0].PostTokens >= (*bounds)[0].PreTokens {
		t.Fatalf("boundaries = %+v", *bounds)
	}
	for _, m := range conv.Messages() {
		if m.Meta.Usage != nil {
			t.Fatal("stale usage kept after rewriting old messages")
		}
	}

	// Running it again changes nothing.
	clk.advance(10 * time.Minute)
	if err := c.Compact(context.Background(), conv, false); err != nil || len(*bounds) != 1 {
		t.Fatalf("second pass: err %v, %d boundaries", err, len(*bounds))
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(rest, to)
	return out
}

func TestMicroBeforeFullSummary(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, bounds := setup(t, f, nil)
	// 30 results of 10 KB (2,500 tokens): over the threshold, and clearing
	// 25 of them frees about 60k, far below the micro target.
	b := newBuilder(t, clk.Now()).user("go")
	for i := 0; i < 30; i++ {
		b.round("Read", map[string]any{"file_path": "/src/big.go"}, 10000)
	}
	conv := b.usage(80000).conv()
	if err := c.Compact(context.Background(), conv, false); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 0 {
		t.Fatal("asked for a summary though clearing results was enough")
	}
	if len(*bounds) != 1 || !(*bounds)[0].Micro || (*bounds)[0].PostTokens > c.limits().microTarget {
		t.Fatalf("boundaries = %+v", *bounds)
	}
	if got := results(conv.Messages()); !cleared(got[0]) || cleared(got[len(got)-1]) {
		t.Fatal("wrong results cleared")
	}
}

func TestPlaceholderPointsAtPersistedFile(t *testing.T) {
	c, _, _ := setup(t, &fakeModel{}, nil)
	persisted := c.ProcessResults([]llm.ToolResult{textResult("toolu_p", filler("p", 200000))})[0]
	ph := c.placeholder(persisted, llm.ToolUse{ID: "toolu_p", Name: "Bash", Input: []byte(`{"command":"` + strings.Repeat("x", 500) + `"}`)})
	text := textOf(ph.Content[0])
	if !strings.Contains(text, persistedPath(textOf(persisted.Content[0]))) || len(text) > 600 || !strings.Contains(text, "…") {
		t.Fatalf("placeholder = %s", text)
	}
}
