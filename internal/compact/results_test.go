package compact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

func textResult(id, text string) llm.ToolResult {
	return llm.ToolResult{ToolUseID: id, Content: []llm.Block{llm.Text{Text: text}}}
}

func TestLargeResultGoesToDisk(t *testing.T) {
	c, _, _ := setup(t, &fakeModel{}, nil)
	big := filler("big", 30000*4) // over the 25,000-token limit
	in := []llm.ToolResult{
		textResult("toolu_small", "ok"),
		{ToolUseID: "toolu_big", IsError: true, Content: []llm.Block{llm.Text{Text: big}, llm.Image{MediaType: "image/png", Data: "AAAA"}}},
	}
	out := c.ProcessResults(in)
	if textOf(in[1].Content[0]) != big {
		t.Fatal("the input slice was modified")
	}
	if len(out) != 2 || textOf(out[0].Content[0]) != "ok" {
		t.Fatalf("small result changed: %+v", out[0])
	}
	r := out[1]
	if r.ToolUseID != "toolu_big" || !r.IsError || len(r.Content) != 2 {
		t.Fatalf("persisted result lost its id, error flag or image: %+v", r)
	}
	if _, ok := r.Content[1].(llm.Image); !ok {
		t.Fatal("image not kept")
	}
	text := textOf(r.Content[0])
	path := filepath.Join(c.o.Dir, "tool-results", "toolu_big.txt")
	for _, want := range []string{"<persisted-output>", "Full output saved to: " + path, "120.0 KB", "about 30000 tokens", "big line 0 of output", "</persisted-output>"} {
		if !strings.Contains(text, want) {
			t.Errorf("block lacks %q:\n%s", want, text)
		}
	}
	if len(text) > previewBytes+600 {
		t.Errorf("block is %d bytes; the preview should be about 2 KB", len(text))
	}
	saved, err := os.ReadFile(path)
	if err != nil || string(saved) != big {
		t.Fatalf("saved file: %v (%d bytes)", err, len(saved))
	}
	if persistedPath(text) != path {
		t.Errorf("persistedPath = %q", persistedPath(text))
	}
}

func TestSingleResultLimitUnderTheMessageBudget(t *testing.T) {
	f := &fakeModel{}
	big := llm.ModelInfo{ID: "big", ContextWindow: 200000, MaxOutputTokens: 64000}
	c, _, _ := setup(t, f, func(o *Options) { o.Model = func() (llm.Provider, llm.ModelInfo) { return f, big } })
	// 30k tokens: within the 50k message budget, over the 25k result limit.
	out := c.ProcessResults([]llm.ToolResult{textResult("one", filler("one", 30000*4)), textResult("two", filler("two", 5000*4))})
	if !strings.HasPrefix(textOf(out[0].Content[0]), "<persisted-output>") || strings.HasPrefix(textOf(out[1].Content[0]), "<persisted-output>") {
		t.Fatal("want only the result over the single-result limit persisted")
	}
}

func TestMessageBudgetPersistsLargestFirst(t *testing.T) {
	c, _, _ := setup(t, &fakeModel{}, nil)
	// The budget is a quarter of the 100k window: 25,000 tokens. Four
	// results of 8k, 12k, 4k and 9k tokens (33k) must lose the 12k one.
	sizes := map[string]int{"a": 8000, "b": 12000, "c": 4000, "d": 9000}
	var in []llm.ToolResult
	for _, id := range []string{"a", "b", "c", "d"} {
		in = append(in, textResult(id, filler(id, sizes[id]*4)))
	}
	out := c.ProcessResults(in)
	for i, id := range []string{"a", "b", "c", "d"} {
		persisted := strings.HasPrefix(textOf(out[i].Content[0]), "<persisted-output>")
		if persisted != (id == "b") {
			t.Errorf("result %s persisted = %v", id, persisted)
		}
	}
	// Five of 7k (35k): the two first in order of size (ties by position).
	in = nil
	for _, id := range []string{"p", "q", "r", "s", "t"} {
		in = append(in, textResult(id, filler(id, 7000*4)))
	}
	out = c.ProcessResults(in)
	var got []string
	total := 0
	for _, r := range out {
		if strings.HasPrefix(textOf(r.Content[0]), "<persisted-output>") {
			got = append(got, r.ToolUseID)
		}
		total += blockTokens(r)
	}
	if strings.Join(got, ",") != "p,q" || total > 25000 {
		t.Errorf("persisted %v, total %d tokens", got, total)
	}
}

func TestResultCutWhenItCannotBeSaved(t *testing.T) {
	c, _, _ := setup(t, &fakeModel{}, func(o *Options) { o.Dir = "" })
	out := c.ProcessResults([]llm.ToolResult{textResult("x", filler("x", 200000))})
	text := textOf(out[0].Content[0])
	if !strings.Contains(text, "could not be saved") || len(text) > previewBytes+600 {
		t.Fatalf("result not cut with a note (%d bytes):\n%.300s", len(text), text)
	}
}

func TestSafeNameAndPreview(t *testing.T) {
	if got := safeName("../../etc/passwd"); strings.ContainsAny(got, "./") {
		t.Errorf("safeName kept a path: %q", got)
	}
	if safeName("") != "result" {
		t.Error("empty id")
	}
	p := preview(strings.Repeat("é", 3000))
	if !strings.HasSuffix(p, "\n...") || len(p) > previewBytes+4 || !strings.HasPrefix(p, "é") || strings.Contains(p, "\uFFFD") {
		t.Errorf("preview cut badly: %d bytes", len(p))
	}
}
