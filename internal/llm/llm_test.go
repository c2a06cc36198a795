package llm

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func text(role Role, s string) Message { return Message{Role: role, Blocks: []Block{Text{Text: s}}} }

func TestNormalizeMergesAndStartsWithUser(t *testing.T) {
	in := []Message{
		text(RoleAssistant, "hello"),
		text(RoleUser, "a"),
		text(RoleUser, "b"),
		{Role: RoleUser, Blocks: []Block{Text{Text: ""}}},
		text(RoleAssistant, "c"),
	}
	got := Normalize(in)
	if len(got) != 4 || got[0].Role != RoleUser || got[1].Role != RoleAssistant {
		t.Fatalf("shape: %+v", got)
	}
	if got[2].Text() != "ab" {
		t.Errorf("adjacent user messages not merged: %q", got[2].Text())
	}
	if len(in[1].Blocks) != 1 {
		t.Error("Normalize modified its input")
	}
}

func TestNormalizePairsToolUses(t *testing.T) {
	use := func(id string) ToolUse { return ToolUse{ID: id, Name: "Read", Input: json.RawMessage(`{}`)} }
	res := func(id string) ToolResult { return ToolResult{ToolUseID: id, Content: []Block{Text{Text: "r" + id}}} }
	in := []Message{
		text(RoleUser, "go"),
		{Role: RoleAssistant, Blocks: []Block{use("1"), use("2")}},
		// Text before the results, result 2 missing, an orphan result.
		{Role: RoleUser, Blocks: []Block{Text{Text: "note"}, res("1"), res("9")}},
		{Role: RoleAssistant, Blocks: []Block{use("3")}},
	}
	got := Normalize(in)
	if len(got) != 5 {
		t.Fatalf("%d messages: %+v", len(got), got)
	}
	b := got[2].Blocks
	r1, ok1 := b[0].(ToolResult)
	r2, ok2 := b[1].(ToolResult)
	if !ok1 || !ok2 || r1.ToolUseID != "1" || r2.ToolUseID != "2" || !r2.IsError || len(b) != 3 {
		t.Fatalf("results not first, missing one not synthesized, or orphan kept: %+v", b)
	}
	if last := got[4]; last.Role != RoleUser || last.Blocks[0].(ToolResult).ToolUseID != "3" {
		t.Fatalf("trailing tool_use not answered: %+v", last)
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	m := Message{ID: "msg_1", Role: RoleAssistant, Blocks: []Block{
		Thinking{Thinking: "hmm", Signature: "sig"},
		RedactedThinking{Data: "xyz"},
		Text{Text: "hi"},
		ToolUse{ID: "t1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)},
	}, Meta: Meta{Model: "m", Status: StatusComplete, Usage: &Usage{InputTokens: 3}}}
	u := Message{ID: "msg_2", Role: RoleUser, Blocks: []Block{
		ToolResult{ToolUseID: "t1", IsError: true, Content: []Block{Text{Text: "no"}, Image{MediaType: "image/png", Data: "AAAA"}}},
	}, Meta: Meta{Reminder: true}}
	for _, want := range []Message{m, u} {
		data, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var got Message
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
	}
	var bad Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"hologram"}]}`), &bad); err == nil {
		t.Error("unknown block type accepted")
	}
}

func TestCatalogResolve(t *testing.T) {
	c := NewCatalog()
	for name, key := range map[string]string{
		"sonnet":                  "anthropic/claude-sonnet-4-5",
		"gpt-4.1":                 "openai/gpt-4.1",
		"openai/gpt-4.1":          "openai/gpt-4.1",
		"anthropic/claude-next-9": "anthropic/claude-next-9",
		"claude-unknown":          "anthropic/claude-unknown",
	} {
		m, err := c.Resolve(name)
		if err != nil || m.Key() != key {
			t.Errorf("Resolve(%q) = %s, %v; want %s", name, m.Key(), err, key)
		}
	}
	if _, err := c.Resolve("qwen3-coder"); err == nil || !strings.Contains(err.Error(), "provider/model") {
		t.Errorf("bare unknown name: %v", err)
	}
	c.AddProvider("ollama")
	window := 32768
	price := 0.0
	if err := c.Override("ollama/qwen3-coder", ModelOverride{ContextWindow: &window, InputPrice: &price}); err != nil {
		t.Fatal(err)
	}
	m, err := c.Resolve("ollama/qwen3-coder")
	if err != nil || m.Provider != "ollama" || m.ContextWindow != 32768 {
		t.Fatalf("override: %+v %v", m, err)
	}
	if err := c.Override("nonsense", ModelOverride{}); err == nil {
		t.Error("override without provider accepted")
	}
}

func TestCost(t *testing.T) {
	m := ModelInfo{InputPrice: 3, OutputPrice: 15, CacheReadPrice: 0.3, CacheWritePrice: 3.75}
	got := m.Cost(Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheReadInputTokens: 1e6, CacheCreationInputTokens: 1e6})
	if math.Abs(got-22.05) > 1e-9 {
		t.Fatalf("cost = %v", got)
	}
}

func TestConversationSnapshotIsIndependent(t *testing.T) {
	c := NewConversation(text(RoleUser, "a"))
	snap := c.Messages()
	c.Append(text(RoleAssistant, "b"))
	if len(snap) != 1 || c.Len() != 2 {
		t.Fatal("snapshot changed with the conversation")
	}
	m := c.Messages()[1]
	m.Blocks = []Block{Text{Text: "c"}}
	if !c.Update(Message{ID: m.ID, Role: m.Role, Blocks: m.Blocks}) {
		t.Fatal("update by id failed")
	}
}
