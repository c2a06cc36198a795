package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOpenAIStreamsChatCompletionChunks(t *testing.T) {
	s := NewServer(t)
	args0, args1 := `{"path": "a.txt"}`, `{"path": "b.txt"}`
	s.Enqueue(Reply(Text("Reading both files."), ToolCall("call_A", "read", args0), ToolCall("", "read", args1)))

	events := mustEvents(t, oaPost(t, s, oaReq(oaMsg("system", "be brief"), oaMsg("user", "read a and b"))))
	if last := events[len(events)-1]; last.name != "" || last.data != "[DONE]" {
		t.Fatalf("stream ends with %+v, want data: [DONE]", last)
	}
	chunks := events[:len(events)-1]
	var id string
	var content strings.Builder
	args := map[float64]*strings.Builder{}
	ids := map[float64]string{}
	finishes := 0
	for i, e := range chunks {
		if e.name != "" {
			t.Errorf("chunk %d is a named event %q", i, e.name)
		}
		c := e.json(t)
		if i == 0 {
			id = c["id"].(string)
		}
		if c["id"] != id || c["object"] != "chat.completion.chunk" || c["model"] != "gpt-test-1" {
			t.Errorf("chunk %d envelope %v", i, c)
		}
		if _, ok := c["usage"]; !ok {
			t.Errorf("chunk %d lacks the usage key include_usage asks for", i)
		}
		choices := c["choices"].([]any)
		if i == len(chunks)-1 {
			u, _ := c["usage"].(map[string]any)
			if len(choices) != 0 || u == nil || u["total_tokens"].(float64) != u["prompt_tokens"].(float64)+u["completion_tokens"].(float64) {
				t.Errorf("final chunk %v, want choices [] and usage", c)
			}
			continue
		}
		if c["usage"] != nil {
			t.Errorf("chunk %d usage %v, want null", i, c["usage"])
		}
		ch := choices[0].(map[string]any)
		delta := ch["delta"].(map[string]any)
		if i == 0 && (delta["role"] != "assistant" || delta["content"] != "") {
			t.Errorf("first chunk delta %v, want the assistant role", delta)
		}
		if ch["finish_reason"] != nil {
			finishes++
			if ch["finish_reason"] != "tool_calls" || i != len(chunks)-2 {
				t.Errorf("chunk %d finish_reason %v", i, ch["finish_reason"])
			}
		}
		if s, ok := delta["content"].(string); ok {
			content.WriteString(s)
		}
		calls, _ := delta["tool_calls"].([]any)
		for _, raw := range calls {
			call := raw.(map[string]any)
			idx := call["index"].(float64)
			fn := call["function"].(map[string]any)
			if args[idx] == nil {
				if call["id"] == nil || call["type"] != "function" || fn["name"] != "read" || fn["arguments"] != "" {
					t.Errorf("first delta of call %v = %v, want id, type, name and empty arguments", idx, call)
				}
				ids[idx] = call["id"].(string)
				args[idx] = &strings.Builder{}
				continue
			}
			if call["id"] != nil || fn["name"] != nil {
				t.Errorf("later delta of call %v repeats id or name: %v", idx, call)
			}
			args[idx].WriteString(fn["arguments"].(string))
		}
	}
	if content.String() != "Reading both files." || finishes != 1 {
		t.Errorf("content %q, %d finish chunks", content.String(), finishes)
	}
	if len(args) != 2 || args[0].String() != args0 || args[1].String() != args1 || ids[0] != "call_A" || !strings.HasPrefix(ids[1], "call_") {
		t.Errorf("tool calls %v %v", ids, args)
	}
}

func TestOpenAIWithoutIncludeUsage(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("hi")))
	body := oaReq(oaMsg("user", "hi"))
	delete(body, "stream_options")
	events := mustEvents(t, oaPost(t, s, body))
	for _, e := range events[:len(events)-1] {
		c := e.json(t)
		if _, ok := c["usage"]; ok || len(c["choices"].([]any)) == 0 {
			t.Errorf("chunk %s: no usage key and no usage chunk without include_usage", e.data)
		}
	}
}

func TestOpenAIRejectsWhatTheAPIRejects(t *testing.T) {
	with := func(key string, v any) map[string]any {
		r := oaReq(oaMsg("user", "hi"))
		r[key] = v
		return r
	}
	cases := []struct {
		name    string
		body    any
		param   any
		code    any
		message string
	}{
		{"no messages", with("messages", []any{}), "messages", "empty_array", "[] is too short - 'messages'"},
		{"no model", with("model", ""), nil, nil, "you must provide a model parameter"},
		{"unanswered tool call", oaReq(oaMsg("user", "x"), oaCall("call_1", "call_2"), oaToolMsg("call_1", "a"), oaMsg("user", "and?")),
			"messages.[1].role", nil,
			"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"},
		{"conversation ends on tool calls", oaReq(oaMsg("user", "x"), oaCall("call_1")), "messages.[1].role", nil,
			"did not have response messages: call_1"},
		{"tool message for an unknown call", oaReq(oaMsg("user", "x"), oaCall("call_1"), oaToolMsg("call_1", "a"), oaToolMsg("call_9", "b")),
			"messages.[3].role", nil, "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"},
		{"tool message without calls", oaReq(oaMsg("user", "x"), oaToolMsg("call_1", "a")), "messages.[1].role", nil,
			"must be a response to a preceeding message with 'tool_calls'"},
		{"arguments as an object", oaReq(oaMsg("user", "x"), map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": map[string]any{}}}}},
			oaToolMsg("call_1", "a")), "messages[1].tool_calls[0].function.arguments", "invalid_type", "expected a string, but got an object instead"},
		{"bad tool name", with("tools", []any{oaTool("read file", map[string]any{"type": "object"})}), "tools[0].function.name", "invalid_value",
			"string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."},
		{"tool name too long", with("tools", []any{oaTool(strings.Repeat("x", 65), map[string]any{"type": "object"})}),
			"tools[0].function.name", "string_above_max_length", "Expected a string with maximum length 64, but got a string with length 65 instead."},
		{"parameters not an object", with("tools", []any{oaTool("read", "object")}), "tools[0].function.parameters", "invalid_type",
			"expected an object, but got a string instead"},
		{"parameters of another type", with("tools", []any{oaTool("read", map[string]any{"type": "array"})}), "tools[0].function.parameters",
			"invalid_function_parameters", `schema must be a JSON Schema of 'type: "object"', got 'type: "array"'`},
		{"bad role", oaReq(oaMsg("robot", "x")), "messages.[0].role", "invalid_value", "Invalid value: 'robot'."},
		{"stream_options without stream", with("stream", false), "stream_options", nil, "only allowed when 'stream' is enabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Enqueue(Reply(Text("should not be played")))
			resp := oaPost(t, s, c.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", resp.StatusCode)
			}
			e := errorBody(t, resp)["error"].(map[string]any)
			if e["type"] != "invalid_request_error" || e["param"] != c.param || e["code"] != c.code {
				t.Errorf("error %v, want param %v code %v", e, c.param, c.code)
			}
			if !strings.Contains(e["message"].(string), c.message) {
				t.Errorf("message %q, want it to contain %q", e["message"], c.message)
			}
			if r := s.Rejections(); len(r) != 1 {
				t.Errorf("rejections %q", r)
			}
			if resp := oaPost(t, s, oaReq(oaMsg("user", "hi"))); resp.StatusCode != http.StatusOK {
				t.Errorf("valid request after a refused one: %d", resp.StatusCode)
			}
		})
	}
}

func TestOpenAIAcceptsAValidToolConversation(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("done")))
	body := oaReq(oaMsg("system", "You are coda."), oaMsg("user", "read a and b"), oaCall("call_1", "call_2"),
		oaToolMsg("call_2", "B"), oaToolMsg("call_1", "A"))
	body["tools"] = []any{oaTool("read", map[string]any{"type": "object"}), oaTool("ls", nil)}
	resp := oaPost(t, s, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("valid conversation refused: %v", errorBody(t, resp))
	}
	mustEvents(t, resp)
	r := s.Requests()[0]
	if r.API != "openai" || r.LastUserText() != "B\nA" || r.System() != "You are coda." || strings.Join(r.ToolNames(), ",") != "read,ls" {
		t.Errorf("API %q LastUserText %q System %q ToolNames %v", r.API, r.LastUserText(), r.System(), r.ToolNames())
	}
}

func TestOpenAIFaults(t *testing.T) {
	cases := []struct {
		turn   Turn
		status int
		typ    string
		code   any
	}{
		{RateLimited(2 * time.Second), 429, "tokens", "rate_limit_exceeded"},
		{Overloaded(), 503, "server_error", nil},
		{ServerError(), 500, "server_error", nil},
		{PromptTooLong(), 400, "invalid_request_error", "context_length_exceeded"},
	}
	for _, c := range cases {
		s := NewServer(t)
		s.Enqueue(c.turn)
		resp := oaPost(t, s, oaReq(oaMsg("user", "hi")))
		e := errorBody(t, resp)["error"].(map[string]any)
		if resp.StatusCode != c.status || e["type"] != c.typ || e["code"] != c.code {
			t.Errorf("%d %v, want %d %s %v", resp.StatusCode, e, c.status, c.typ, c.code)
		}
		if c.status == 429 && (resp.Header.Get("retry-after") != "2" || resp.Header.Get("retry-after-ms") != "") {
			t.Errorf("retry headers %v", resp.Header)
		}
	}

	s := NewServer(t)
	s.Enqueue(OverloadedMidStream(Text("partial")), DropMidStream(ToolCall("", "read", `{}`)))
	events := mustEvents(t, oaPost(t, s, oaReq(oaMsg("user", "hi"))))
	last := events[len(events)-1].json(t)
	if e, ok := last["error"].(map[string]any); !ok || e["type"] != "server_error" {
		t.Errorf("overloaded stream ends with %v, want an error data event", last)
	}
	events, err := readEvents(t, oaPost(t, s, oaReq(oaMsg("user", "hi"))))
	if err == nil {
		t.Error("dropped stream ended cleanly")
	}
	for _, e := range events {
		if e.data == "[DONE]" || strings.Contains(e.data, "finish_reason\":\"") {
			t.Errorf("dropped stream finished: %s", e.data)
		}
	}
}

func TestNonStreamingOpenAI(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("hello"), ToolCall("", "read", `{"path":"a"}`)))
	body := oaReq(oaMsg("user", "hi"))
	delete(body, "stream")
	delete(body, "stream_options")
	resp := oaPost(t, s, body)
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v %s", resp.StatusCode, err, raw)
	}
	c := out.Choices[0]
	if out.Object != "chat.completion" || c.FinishReason != "tool_calls" || c.Message.Content != "hello" ||
		len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Arguments != `{"path":"a"}` || out.Usage.PromptTokens == 0 {
		t.Errorf("completion %s", raw)
	}
}
