package anthropic

import (
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

// send streams req against a fake API and returns the decoded request body
// the API received.
func send(t *testing.T, req llm.Request) map[string]any {
	t.Helper()
	f := serveSSE(t, messageStart("msg_r")+textBlock(0, "ok")+messageEnd("end_turn", 2))
	s, err := f.provider(Config{}).Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	if _, err := collect(t, s); err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	return f.lastBody(t)
}

// at walks a decoded JSON value by object keys and array indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", path, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: no index %d in %v", path, k, v)
			}
			v = a[k]
		}
	}
	return v
}

// cacheMarks lists the JSON paths of every cache_control in v.
func cacheMarks(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "cache_control" {
				out = append(out, path)
				continue
			}
			out = append(out, cacheMarks(c, path+"."+k)...)
		}
	case []any:
		for i, c := range x {
			out = append(out, cacheMarks(c, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON %s: %v", want, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

const thinkingText = "I should read <main.go> & check \"quotes\", tabs\t and ünïcödé 🚀\n"
const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/Y=="

// conversation is a tool-use turn with every block type.
func conversation() []llm.Message {
	return []llm.Message{
		llm.UserText("Fix the bug"),
		{Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Thinking{Thinking: thinkingText, Signature: signature},
			llm.RedactedThinking{Data: "EmwKAhgBEgy3va3pzix"},
			llm.Text{Text: "Reading."},
			llm.ToolUse{ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"path": "main.go", "limit": 10}`)},
			llm.ToolUse{ID: "toolu_2", Name: "Bash", Input: json.RawMessage(`{"command": "ls`)},
		}},
		// The text comes before the results here; the wire needs results first.
		{Role: llm.RoleUser, Blocks: []llm.Block{
			llm.Text{Text: "<system-reminder>todo list is empty</system-reminder>"},
			llm.ToolResult{ToolUseID: "toolu_2", IsError: true, Content: []llm.Block{llm.Text{Text: "bad input"}}},
			llm.ToolResult{ToolUseID: "toolu_1", Content: []llm.Block{
				llm.Text{Text: "package main"},
				llm.Text{Text: ""},
				llm.Image{MediaType: "image/png", Data: "iVBORw0KGgo="},
			}},
		}},
	}
}

var tools = []llm.ToolSpec{
	{Name: "Bash", Description: "Run a command.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
	{Name: "Read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)},
}

func TestRequestConversation(t *testing.T) {
	body := send(t, llm.Request{Model: "claude-test", System: "You are coda.", MaxTokens: 2000, Tools: tools, Messages: conversation()})

	if body["model"] != "claude-test" || body["max_tokens"] != 2000.0 {
		t.Errorf("model/max_tokens = %v/%v", body["model"], body["max_tokens"])
	}
	jsonEqual(t, body["system"], `[{"type":"text","text":"You are coda."}]`)
	jsonEqual(t, body["tools"], `[
		{"name":"Bash","description":"Run a command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}},
		{"name":"Read","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}}]`)
	if _, ok := body["tool_choice"]; ok {
		t.Errorf("tool_choice sent without NoTools: %v", body["tool_choice"])
	}
	if _, ok := body["thinking"]; ok {
		t.Errorf("thinking sent without a config: %v", body["thinking"])
	}
	jsonEqual(t, body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"Fix the bug"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":`+mustJSON(thinkingText)+`,"signature":"`+signature+`"},
			{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"},
			{"type":"text","text":"Reading."},
			{"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"main.go","limit":10}},
			{"type":"tool_use","id":"toolu_2","name":"Bash","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","content":[
				{"type":"text","text":"package main"},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
			{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"bad input"}]},
			{"type":"text","text":"<system-reminder>todo list is empty</system-reminder>"}]}]`)
	if marks := cacheMarks(body, ""); len(marks) != 0 {
		t.Errorf("cache_control without Cache: %v", marks)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRequestThinkingBlocksByteIdentical(t *testing.T) {
	f := serveSSE(t, messageStart("m")+messageEnd("end_turn", 1))
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", MaxTokens: 100, Messages: conversation()})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var body struct {
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
				Data      string `json:"data"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(f.requests()[0].body, &body); err != nil {
		t.Fatal(err)
	}
	got := body.Messages[1].Content
	if got[0].Type != "thinking" || got[0].Thinking != thinkingText || got[0].Signature != signature {
		t.Errorf("thinking block altered: %+v", got[0])
	}
	if got[1].Type != "redacted_thinking" || got[1].Data != "EmwKAhgBEgy3va3pzix" {
		t.Errorf("redacted_thinking block altered: %+v", got[1])
	}
}

func TestRequestCacheBreakpoints(t *testing.T) {
	body := send(t, llm.Request{Model: "m", System: "sys", MaxTokens: 100, Tools: tools, Messages: conversation(), Cache: true})
	marks := cacheMarks(body, "")
	if len(marks) > 4 {
		t.Fatalf("%d cache_control markers, the API allows 4: %v", len(marks), marks)
	}
	want := map[string]bool{
		".tools[1]":               true, // last tool
		".system[0]":              true,
		".messages[2].content[2]": true, // last block of the newest message
	}
	if len(marks) != len(want) {
		t.Errorf("cache_control at %v, want %v", marks, want)
	}
	for _, m := range marks {
		if !want[m] {
			t.Errorf("unexpected cache_control at %s", m)
		}
	}
	jsonEqual(t, at(t, body, "system", 0, "cache_control"), `{"type":"ephemeral"}`)
}

func TestRequestCacheSkipsThinkingAtEnd(t *testing.T) {
	// A trailing assistant message ending in a thinking block: the block
	// cannot carry cache_control, the text before it takes the mark.
	msgs := []llm.Message{
		llm.UserText("hi"),
		{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "partial"}, llm.Thinking{Thinking: "t", Signature: "s"}}},
	}
	body := send(t, llm.Request{Model: "m", MaxTokens: 100, Messages: msgs, Cache: true})
	marks := cacheMarks(body, "")
	if !reflect.DeepEqual(marks, []string{".messages[1].content[0]"}) {
		t.Errorf("cache_control at %v", marks)
	}
}

func TestRequestNoTools(t *testing.T) {
	body := send(t, llm.Request{Model: "m", MaxTokens: 100, Tools: tools, NoTools: true, Messages: []llm.Message{llm.UserText("summarize")}})
	jsonEqual(t, body["tool_choice"], `{"type":"none"}`)
	if n := len(body["tools"].([]any)); n != 2 {
		t.Errorf("NoTools sent %d tools, want the definitions kept", n)
	}

	body = send(t, llm.Request{Model: "m", MaxTokens: 100, NoTools: true, Messages: []llm.Message{llm.UserText("summarize")}})
	if _, ok := body["tool_choice"]; ok {
		t.Error("tool_choice sent without tools, which the API rejects")
	}
}

func TestRequestThinking(t *testing.T) {
	cases := []struct {
		name      string
		cfg       llm.ThinkingConfig
		maxTokens int
		want      string
		wantMax   float64
	}{
		{"adaptive", llm.ThinkingConfig{Adaptive: true}, 32000, `{"type":"adaptive"}`, 32000},
		{"budget", llm.ThinkingConfig{BudgetTokens: 10000}, 32000, `{"type":"enabled","budget_tokens":10000}`, 32000},
		{"budget over max", llm.ThinkingConfig{BudgetTokens: 40000}, 32000, `{"type":"enabled","budget_tokens":31999}`, 32000},
		{"budget under minimum", llm.ThinkingConfig{BudgetTokens: 10}, 32000, `{"type":"enabled","budget_tokens":1024}`, 32000},
		{"tiny max", llm.ThinkingConfig{BudgetTokens: 2000}, 500, `{"type":"enabled","budget_tokens":2000}`, 2001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			body := send(t, llm.Request{Model: "m", MaxTokens: c.maxTokens, Thinking: &cfg, Messages: []llm.Message{llm.UserText("think")}})
			jsonEqual(t, body["thinking"], c.want)
			if body["max_tokens"] != c.wantMax {
				t.Errorf("max_tokens = %v, want %v", body["max_tokens"], c.wantMax)
			}
		})
	}
}

func TestRequestDefaultsAndRepairs(t *testing.T) {
	msgs := []llm.Message{
		llm.UserText("hi"),
		// An interrupted stream left a thinking block with no signature; the
		// tool_use never got its result.
		{Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Thinking{Thinking: "half a thought"},
			llm.ToolUse{ID: "toolu_x", Name: "Bash", Input: json.RawMessage(`[1,2]`)},
		}},
	}
	body := send(t, llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "Bash"}}, Messages: msgs})
	if body["max_tokens"] != float64(defaultMaxTokens) {
		t.Errorf("max_tokens = %v, want the default %d", body["max_tokens"], defaultMaxTokens)
	}
	jsonEqual(t, body["tools"], `[{"name":"Bash","input_schema":{"type":"object"}}]`)
	jsonEqual(t, body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"hi"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_x","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","is_error":true,"content":[{"type":"text","text":`+mustJSON(llm.InterruptedResult)+`}]}]}]`)
	if _, ok := body["system"]; ok {
		t.Error("empty system prompt sent")
	}
}

func TestRequestSchemaKeyOrderStable(t *testing.T) {
	// The prompt cache sees the tool definitions byte for byte.
	schema := `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"},"m":{"type":"string"}},"required":["z"],"$defs":{"b":{},"a":{}}}`
	var first string
	for i := range 5 {
		f := serveSSE(t, messageStart("m")+messageEnd("end_turn", 1))
		s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "T", InputSchema: json.RawMessage(schema)}}, Messages: []llm.Message{llm.UserText("x")}})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		raw := string(f.requests()[0].body)
		start := strings.Index(raw, `"input_schema":`)
		got := raw[start : start+len(`"input_schema":`)+len(schema)]
		if got != `"input_schema":`+schema {
			t.Fatalf("schema re-encoded: %s", got)
		}
		if i == 0 {
			first = raw
		} else if raw != first {
			t.Fatalf("request %d differs from the first:\n%s\n%s", i, raw, first)
		}
	}
}
