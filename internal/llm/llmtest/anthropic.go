package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// anthropicAPI serves the Messages API (PROTOCOLS.md H).
type anthropicAPI struct{ s *Server }

func (anthropicAPI) name() string { return "anthropic" }

func (anthropicAPI) writeError(w http.ResponseWriter, e *apiError, requestID string) {
	setRetryAfter(w.Header(), e.retryAfter)
	w.Header().Set("request-id", requestID)
	writeJSON(w, e.status, antErrorBody{Type: "error", Error: antErrorDetail{Type: e.typ, Message: e.message}, RequestID: requestID})
}

type antErrorBody struct {
	Type      string         `json:"type"`
	Error     antErrorDetail `json:"error"`
	RequestID string         `json:"request_id,omitempty"`
}

type antErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// setRetryAfter sets retry-after in whole seconds, rounded up, and, when d
// is not whole seconds, retry-after-ms with the exact value.
func setRetryAfter(h http.Header, d time.Duration) {
	if d <= 0 {
		return
	}
	secs := int((d + time.Second - 1) / time.Second)
	h.Set("retry-after", strconv.Itoa(secs))
	if d%time.Second != 0 {
		h.Set("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
	}
}

func (anthropicAPI) promptTooLong(tokens, window int) *apiError {
	return invalid("prompt is too long: %d tokens > %d maximum", tokens, window)
}

func (anthropicAPI) faultError(f fault, retryAfter time.Duration) *apiError {
	switch f {
	case faultRateLimited:
		return &apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", retryAfter: retryAfter,
			message: "This request would exceed the rate limit for your organization of 50 requests per minute. " +
				"For details, refer to: https://docs.claude.com/en/api/rate-limits. " +
				"You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}
	case faultOverloaded:
		return &apiError{status: 529, typ: "overloaded_error", message: "Overloaded"}
	default:
		return &apiError{status: http.StatusInternalServerError, typ: "api_error", message: "Internal server error"}
	}
}

func (a anthropicAPI) account(p *prompt, t Turn) accounting {
	return a.s.accountAnthropic(p).withOutput(t)
}

// Wire shapes, with fields in the order the API sends them.

type antUsage struct {
	InputTokens              int               `json:"input_tokens"`
	CacheCreationInputTokens int               `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int               `json:"cache_read_input_tokens"`
	CacheCreation            *antCacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int               `json:"output_tokens"`
	ServiceTier              string            `json:"service_tier,omitempty"`
}

type antCacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

type antMessageOut struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []any    `json:"content"`
	StopReason   *string  `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        antUsage `json:"usage"`
}

type antText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type antToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type antThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type antRedacted struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type antBlockEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block,omitempty"`
	Delta        any    `json:"delta,omitempty"`
}

type antDelta struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	PartialJSON *string `json:"partial_json,omitempty"`
	Thinking    *string `json:"thinking,omitempty"`
	Signature   *string `json:"signature,omitempty"`
}

func (a anthropicAPI) usage(acc accounting, output int) antUsage {
	u := acc.usage
	return antUsage{
		InputTokens:              u.InputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
		CacheCreation: &antCacheCreation{
			Ephemeral5m: u.CacheCreationInputTokens - acc.creation1h,
			Ephemeral1h: acc.creation1h,
		},
		OutputTokens: output,
		ServiceTier:  "standard",
	}
}

// withIDs returns the turn's blocks with generated tool ids filled in.
func (s *Server) withIDs(blocks []Block, prefix string) []Block {
	out := make([]Block, len(blocks))
	for i, b := range blocks {
		if b.kind == kindToolCall && b.id == "" {
			b.id = s.nextID(prefix)
		}
		out[i] = b
	}
	return out
}

func (a anthropicAPI) stream(sw *eventWriter, p *prompt, t Turn, acc accounting) error {
	blocks := a.s.withIDs(t.blocks, "toolu_")
	start := antMessageOut{
		ID: a.s.nextID("msg_"), Type: "message", Role: "assistant", Model: p.model,
		Content: []any{}, Usage: a.usage(acc, 1),
	}
	err := sw.send("message_start", struct {
		Type    string        `json:"type"`
		Message antMessageOut `json:"message"`
	}{"message_start", start})
	if err != nil {
		return err
	}
	ping := func() error { return sw.sendRaw("ping", []byte(`{"type": "ping"}`)) }
	if len(blocks) == 0 {
		if err := ping(); err != nil {
			return err
		}
	}
	for i, b := range blocks {
		if err := a.streamBlock(sw, i, b, i == 0, ping); err != nil {
			return err
		}
	}
	switch t.fault {
	case faultOverloadedMidStream:
		return sw.send("error", antErrorBody{Type: "error", Error: antErrorDetail{Type: "overloaded_error", Message: "Overloaded"}})
	case faultDropMidStream:
		return nil
	}
	stop := t.anthropicStop()
	u := a.usage(acc, acc.usage.OutputTokens)
	u.CacheCreation, u.ServiceTier = nil, ""
	err = sw.send("message_delta", struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage antUsage `json:"usage"`
	}{Type: "message_delta", Delta: struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}{StopReason: stop}, Usage: u})
	if err != nil {
		return err
	}
	return sw.sendRaw("message_stop", []byte(`{"type":"message_stop"}`))
}

// streamBlock writes one block's start, deltas and stop; the first block
// is followed by a ping, as the API does.
func (a anthropicAPI) streamBlock(sw *eventWriter, i int, b Block, first bool, ping func() error) error {
	var open any
	var deltas []antDelta
	str := func(s string) *string { return &s }
	switch b.kind {
	case kindText:
		open = antText{Type: "text"}
		for _, piece := range pieces(b.text) {
			deltas = append(deltas, antDelta{Type: "text_delta", Text: str(piece)})
		}
	case kindThinking:
		open = antThinking{Type: "thinking"}
		for _, piece := range pieces(b.text) {
			deltas = append(deltas, antDelta{Type: "thinking_delta", Thinking: str(piece)})
		}
		deltas = append(deltas, antDelta{Type: "signature_delta", Signature: str(signThinking(b.text))})
	case kindRedactedThinking:
		open = antRedacted{Type: "redacted_thinking", Data: b.text}
	case kindToolCall:
		open = antToolUse{Type: "tool_use", ID: b.id, Name: b.name, Input: json.RawMessage("{}")}
		deltas = append(deltas, antDelta{Type: "input_json_delta", PartialJSON: str("")})
		for _, piece := range pieces(b.input) {
			deltas = append(deltas, antDelta{Type: "input_json_delta", PartialJSON: str(piece)})
		}
	}
	if err := sw.send("content_block_start", antBlockEvent{Type: "content_block_start", Index: i, ContentBlock: open}); err != nil {
		return err
	}
	if first {
		if err := ping(); err != nil {
			return err
		}
	}
	for _, d := range deltas {
		if err := sw.send("content_block_delta", antBlockEvent{Type: "content_block_delta", Index: i, Delta: d}); err != nil {
			return err
		}
	}
	return sw.send("content_block_stop", antBlockEvent{Type: "content_block_stop", Index: i})
}

// respond answers a request without "stream": true with the whole message.
func (a anthropicAPI) respond(w http.ResponseWriter, p *prompt, t Turn, acc accounting, requestID string) {
	blocks := a.s.withIDs(t.blocks, "toolu_")
	stop := t.anthropicStop()
	msg := antMessageOut{
		ID: a.s.nextID("msg_"), Type: "message", Role: "assistant", Model: p.model,
		Content: make([]any, 0, len(blocks)), StopReason: &stop, Usage: a.usage(acc, acc.usage.OutputTokens),
	}
	for _, b := range blocks {
		switch b.kind {
		case kindText:
			msg.Content = append(msg.Content, antText{Type: "text", Text: b.text})
		case kindThinking:
			msg.Content = append(msg.Content, antThinking{Type: "thinking", Thinking: b.text, Signature: signThinking(b.text)})
		case kindRedactedThinking:
			msg.Content = append(msg.Content, antRedacted{Type: "redacted_thinking", Data: b.text})
		case kindToolCall:
			msg.Content = append(msg.Content, antToolUse{Type: "tool_use", ID: b.id, Name: b.name, Input: wholeInput(b.input)})
		}
	}
	w.Header().Set("request-id", requestID)
	writeJSON(w, http.StatusOK, msg)
}

// wholeInput is a scripted tool input as one JSON value: {} when empty,
// and a JSON string holding the text when it is not valid JSON.
func wholeInput(input string) json.RawMessage {
	switch {
	case input == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(input)):
		return json.RawMessage(input)
	}
	b, _ := json.Marshal(input)
	return b
}
