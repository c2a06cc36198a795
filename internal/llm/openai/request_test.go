package openai

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

// okStream is a minimal successful answer.
var okStream = []string{deltaChunk(`{"content":"ok"}`, `"stop"`)}

func TestRequestConversation(t *testing.T) {
	f := newFakeServer(t, sse(okStream...))
	req := llm.Request{
		Model:     "deepseek-chat",
		System:    "You are coda.",
		MaxTokens: 1000,
		Messages: []llm.Message{
			llm.UserText("list and read"),
			{Role: llm.RoleAssistant, Blocks: []llm.Block{
				llm.Thinking{Thinking: "I should list ", Signature: "sig-must-not-leak"},
				llm.RedactedThinking{Data: "opaque-must-not-leak"},
				llm.Thinking{Thinking: "first."},
				llm.Text{Text: "Listing."},
				llm.ToolUse{ID: "call_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				llm.ToolUse{ID: "call_2", Name: "Read", Input: json.RawMessage(`{"file_path":"a.png"}`)},
				llm.ToolUse{ID: "call_3", Name: "Bash", Input: json.RawMessage(`not json`)},
			}},
			{Role: llm.RoleUser, Blocks: []llm.Block{
				llm.Text{Text: "also check b"},
				// Out of order on purpose: the wire wants call order.
				llm.ToolResult{ToolUseID: "call_2", Content: []llm.Block{llm.Text{Text: "image file"}, llm.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}}},
				llm.ToolResult{ToolUseID: "call_1", Content: []llm.Block{llm.Text{Text: "a.png\nb.go"}}},
				// call_3 has no result: Normalize supplies one.
			}},
			{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "Done."}}},
			{Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "look"}, llm.Image{MediaType: "image/jpeg", Data: "/9j/"}}},
		},
	}
	if _, err := run(t, f.provider(Config{}), req); err != nil {
		t.Fatal(err)
	}
	rec, body := f.request(t)
	if rec.method != http.MethodPost || rec.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", rec.method, rec.path)
	}
	if strings.Contains(string(rec.body), "must-not-leak") {
		t.Errorf("signature or redacted thinking sent: %s", rec.body)
	}
	want := `[
		{"role":"system","content":"You are coda."},
		{"role":"user","content":"list and read"},
		{"role":"assistant","content":"Listing.","reasoning_content":"I should list first.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}},
			{"id":"call_2","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a.png\"}"}},
			{"id":"call_3","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"a.png\nb.go"},
		{"role":"tool","tool_call_id":"call_2","content":"image file\n(The images are in the next message.)"},
		{"role":"tool","tool_call_id":"call_3","content":"Error: ` + llm.InterruptedResult + `"},
		{"role":"user","content":[
			{"type":"text","text":"Images returned by tool call call_2:"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
			{"type":"text","text":"also check b"}]},
		{"role":"assistant","content":"Done."},
		{"role":"user","content":[
			{"type":"text","text":"look"},
			{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}}]}
	]`
	var wantMsgs any
	if err := json.Unmarshal([]byte(want), &wantMsgs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(body["messages"], wantMsgs) {
		t.Errorf("messages:\n got %s\nwant %s", jsonString(t, body["messages"]), jsonString(t, wantMsgs))
	}
	if body["model"] != "deepseek-chat" || body["stream"] != true {
		t.Errorf("model = %v, stream = %v", body["model"], body["stream"])
	}
	if got := jsonString(t, body["stream_options"]); got != `{"include_usage":true}` {
		t.Errorf("stream_options = %s", got)
	}
	if body["max_tokens"] != float64(1000) || body["max_completion_tokens"] != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v; want max_tokens for a compatible server", body["max_tokens"], body["max_completion_tokens"])
	}
	for _, k := range []string{"tools", "tool_choice"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent without tools", k)
		}
	}
}

func TestRequestErrorResult(t *testing.T) {
	f := newFakeServer(t, sse(okStream...))
	req := llm.Request{Model: "m", Messages: []llm.Message{
		llm.UserText("run"),
		{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.ToolUse{ID: "c", Name: "Bash", Input: json.RawMessage(`{}`)}}},
		{Role: llm.RoleUser, Blocks: []llm.Block{llm.ToolResult{ToolUseID: "c", IsError: true, Content: []llm.Block{llm.Text{Text: "exit status 2"}}}}},
	}}
	if _, err := run(t, f.provider(Config{}), req); err != nil {
		t.Fatal(err)
	}
	_, body := f.request(t)
	msgs := body["messages"].([]any)
	// The assistant turn carried only a tool call: no content, and no
	// reasoning_content since there was no thinking.
	assistant := jsonString(t, msgs[1])
	if assistant != `{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"Bash"},"id":"c","type":"function"}]}` {
		t.Errorf("assistant message = %s", assistant)
	}
	if got := jsonString(t, msgs[2]); got != `{"content":"Error: exit status 2","role":"tool","tool_call_id":"c"}` {
		t.Errorf("tool message = %s", got)
	}
	if len(msgs) != 3 {
		t.Errorf("got %d messages, want 3: %s", len(msgs), jsonString(t, msgs))
	}
}

func TestRequestTools(t *testing.T) {
	schema := `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`
	tools := []llm.ToolSpec{
		{Name: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(schema)},
		{Name: "TodoRead"},
	}
	for _, noTools := range []bool{false, true} {
		f := newFakeServer(t, sse(okStream...))
		req := llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}, Tools: tools, NoTools: noTools}
		if _, err := run(t, f.provider(Config{}), req); err != nil {
			t.Fatal(err)
		}
		rec, body := f.request(t)
		// The schema goes out byte for byte: the model reads its key order.
		wantContains(t, string(rec.body), `"parameters":`+schema)
		wantTools := `[{"function":{"description":"Reads a file.","name":"Read","parameters":` + jsonString(t, decode(t, schema)) +
			`},"type":"function"},{"function":{"name":"TodoRead","parameters":{"properties":{},"type":"object"}},"type":"function"}]`
		if got := jsonString(t, body["tools"]); got != wantTools {
			t.Errorf("tools:\n got %s\nwant %s", got, wantTools)
		}
		if noTools && body["tool_choice"] != "none" {
			t.Errorf("NoTools: tool_choice = %v, want none", body["tool_choice"])
		}
		if !noTools && body["tool_choice"] != nil {
			t.Errorf("tool_choice = %v, want none sent", body["tool_choice"])
		}
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// redirect sends every request to target, whatever host it names, so a
// test can stand in for api.openai.com.
type redirect struct{ target *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestRequestMaxCompletionTokensForOpenAI(t *testing.T) {
	f := newFakeServer(t, sse(okStream...))
	target, _ := url.Parse(f.URL)
	transport := redirect{target}
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	p := New(Config{APIKey: "sk-test", HTTPClient: &http.Client{Transport: transport}})
	if _, err := run(t, p, llm.Request{Model: "gpt-5", MaxTokens: 512, Messages: []llm.Message{llm.UserText("x")}}); err != nil {
		t.Fatal(err)
	}
	rec, body := f.request(t)
	if rec.path != "/v1/chat/completions" {
		t.Errorf("path = %s, want the default base URL's /v1/chat/completions", rec.path)
	}
	if body["max_completion_tokens"] != float64(512) || body["max_tokens"] != nil {
		t.Errorf("max_completion_tokens = %v, max_tokens = %v; want max_completion_tokens for OpenAI", body["max_completion_tokens"], body["max_tokens"])
	}
}

func TestRequestHeaders(t *testing.T) {
	f := newFakeServer(t, sse(okStream...))
	p := f.provider(Config{APIKey: "sk-test", Headers: map[string]string{"HTTP-Referer": "https://coda.dev", "X-Title": "coda"}})
	if _, err := run(t, p, llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}}); err != nil {
		t.Fatal(err)
	}
	rec, _ := f.request(t)
	for k, want := range map[string]string{"Authorization": "Bearer sk-test", "HTTP-Referer": "https://coda.dev", "X-Title": "coda", "Content-Type": "application/json"} {
		if got := rec.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
}

func TestRequestIgnoresEnvironment(t *testing.T) {
	// A local server needs no key, and the SDK must not slip in the
	// environment's key, base URL or headers.
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env: yes")
	f := newFakeServer(t, sse(okStream...))
	if _, err := run(t, f.provider(Config{Name: "ollama"}), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}}); err != nil {
		t.Fatal(err)
	}
	rec, _ := f.request(t)
	for _, k := range []string{"Authorization", "OpenAI-Organization", "X-Env"} {
		if v := rec.header.Get(k); v != "" {
			t.Errorf("header %s = %q, want none", k, v)
		}
	}
}

func TestName(t *testing.T) {
	if got := New(Config{}).Name(); got != "openai" {
		t.Errorf("default Name = %q, want openai", got)
	}
	if got := New(Config{Name: "ollama"}).Name(); got != "ollama" {
		t.Errorf("Name = %q, want ollama", got)
	}
}
