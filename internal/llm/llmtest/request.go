package llmtest

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// Usage is what the fake reported for a request, in the Anthropic shape:
// InputTokens excludes cached tokens. For OpenAI, InputTokens is
// prompt_tokens minus cached_tokens and CacheReadInputTokens is cached_tokens.
type Usage = llm.Usage

// Request is one request the fake received.
type Request struct {
	API      string // "anthropic" | "openai"; "" for an unknown path
	Header   http.Header
	Body     []byte    // raw JSON body
	Arrived  time.Time // wall clock
	Rejected string    // the error message when the request was refused; "" when accepted
	Status   int       // HTTP status of the answer; 0 while undecided
	Usage    Usage     // what the fake reported for it (after cache modelling)
}

// JSON returns the parsed body, nil when it is not a JSON object.
func (r *Request) JSON() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return nil
	}
	return m
}

// Messages returns the body's "messages", in order.
func (r *Request) Messages() []map[string]any {
	return objects(r.JSON()["messages"])
}

// System returns the system prompt: Anthropic's "system" (a string or text
// blocks), or OpenAI's system and developer messages, parts joined by "\n".
func (r *Request) System() string {
	body := r.JSON()
	if r.API == "openai" {
		var parts []string
		for _, m := range objects(body["messages"]) {
			if m["role"] == "system" || m["role"] == "developer" {
				parts = append(parts, contentText(m["content"]))
			}
		}
		return joinLines(parts)
	}
	return contentText(body["system"])
}

// ToolNames returns the names of the offered tools, in the order sent.
func (r *Request) ToolNames() []string {
	var names []string
	for _, t := range objects(r.JSON()["tools"]) {
		if fn, ok := t["function"].(map[string]any); ok {
			t = fn
		}
		if name, ok := t["name"].(string); ok {
			names = append(names, name)
		}
	}
	return names
}

// LastUserText returns the text of the newest user message, tool results
// included. For OpenAI that is the run of user and tool messages at the end
// of the conversation.
func (r *Request) LastUserText() string {
	msgs := r.Messages()
	if r.API == "openai" {
		end := len(msgs)
		for end > 0 && !isUserSide(msgs[end-1]) {
			end--
		}
		start := end
		for start > 0 && isUserSide(msgs[start-1]) {
			start--
		}
		var parts []string
		for _, m := range msgs[start:end] {
			parts = append(parts, contentText(m["content"]))
		}
		return joinLines(parts)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "user" {
			return contentText(msgs[i]["content"])
		}
	}
	return ""
}

func isUserSide(m map[string]any) bool { return m["role"] == "user" || m["role"] == "tool" }

// contentText flattens message content: a string, or blocks whose text and
// tool_result content are joined by newlines.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range objects(c) {
			switch b["type"] {
			case "text":
				s, _ := b["text"].(string)
				parts = append(parts, s)
			case "tool_result":
				parts = append(parts, contentText(b["content"]))
			}
		}
		return joinLines(parts)
	}
	return ""
}

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
