package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Raw-HTTP helpers: these tests look at the exact bytes a client receives.

type sseEvent struct {
	name string // "" for data-only events
	data string
}

func (e sseEvent) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.data), &m); err != nil {
		t.Fatalf("event %q data is not JSON: %v\n%s", e.name, err, e.data)
	}
	return m
}

func post(t *testing.T, url string, body any, header map[string]string) *http.Response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(http.MethodPost, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func antHeaders() map[string]string {
	return map[string]string{"x-api-key": "test-key", "anthropic-version": "2023-06-01", "content-type": "application/json"}
}

func antPost(t *testing.T, s *Server, body any) *http.Response {
	t.Helper()
	return post(t, s.URL()+"/v1/messages", body, antHeaders())
}

func oaPost(t *testing.T, s *Server, body any) *http.Response {
	t.Helper()
	return post(t, s.OpenAIURL()+"/chat/completions", body,
		map[string]string{"Authorization": "Bearer test-key", "content-type": "application/json"})
}

// readEvents parses a Server-Sent Events body until it ends; err is the
// read error that ended it, nil at a clean EOF.
func readEvents(t *testing.T, resp *http.Response) (events []sseEvent, err error) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, content type %q, body %s", resp.StatusCode, ct, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			events = append(events, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return events, sc.Err()
}

func mustEvents(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	events, err := readEvents(t, resp)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	return events
}

// errorBody reads a JSON error answer.
func errorBody(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("error body is not JSON: %v\n%s", err, raw)
	}
	return m
}

// Anthropic request builders.

func antReq(messages ...map[string]any) map[string]any {
	return map[string]any{"model": "claude-test-1", "max_tokens": 1024, "stream": true, "messages": messages}
}

func user(content any) map[string]any { return map[string]any{"role": "user", "content": content} }

func assistant(blocks ...map[string]any) map[string]any {
	return map[string]any{"role": "assistant", "content": blocks}
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func toolUse(id, name string, input any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id, content string) map[string]any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}
}

func cached(block map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range block {
		out[k] = v
	}
	out["cache_control"] = map[string]any{"type": "ephemeral"}
	return out
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "description": "does " + name,
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}
}

// OpenAI request builders.

func oaReq(messages ...map[string]any) map[string]any {
	return map[string]any{"model": "gpt-test-1", "stream": true,
		"stream_options": map[string]any{"include_usage": true}, "messages": messages}
}

func oaMsg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func oaCall(ids ...string) map[string]any {
	var calls []any
	for _, id := range ids {
		calls = append(calls, map[string]any{"id": id, "type": "function",
			"function": map[string]any{"name": "read", "arguments": `{"path":"a"}`}})
	}
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
}

func oaToolMsg(id, content string) map[string]any {
	return map[string]any{"role": "tool", "tool_call_id": id, "content": content}
}

func oaTool(name string, params any) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name, "parameters": params}}
}
