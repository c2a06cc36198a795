package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// openAIAPI serves Chat Completions (PROTOCOLS.md I).
type openAIAPI struct{ s *Server }

func (openAIAPI) name() string { return "openai" }

type oaError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) openAI() oaError {
	out := oaError{Message: e.message, Type: e.typ}
	if e.param != "" {
		out.Param = &e.param
	}
	if e.code != "" {
		out.Code = &e.code
	}
	return out
}

func (openAIAPI) writeError(w http.ResponseWriter, e *apiError, requestID string) {
	setRetryAfter(w.Header(), e.retryAfter)
	w.Header().Set("x-request-id", requestID)
	writeJSON(w, e.status, map[string]oaError{"error": e.openAI()})
}

func (openAIAPI) promptTooLong(tokens, window int) *apiError {
	return oaInvalid("messages", "context_length_exceeded",
		"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, tokens)
}

func (openAIAPI) faultError(f fault, retryAfter time.Duration) *apiError {
	switch f {
	case faultRateLimited:
		return &apiError{status: http.StatusTooManyRequests, typ: "tokens", code: "rate_limit_exceeded", retryAfter: retryAfter,
			message: fmt.Sprintf("Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.", retryAfter)}
	case faultOverloaded:
		return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", message: "The server is overloaded or not ready yet."}
	default:
		return &apiError{status: http.StatusInternalServerError, typ: "server_error",
			message: "The server had an error while processing your request. Sorry about that!"}
	}
}

func (o openAIAPI) account(p *prompt, t Turn) accounting {
	return o.s.accountOpenAI(p).withOutput(t)
}

type oaChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	ServiceTier       string          `json:"service_tier"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []oaChoice      `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type oaChoice struct {
	Index        int     `json:"index"`
	Delta        any     `json:"delta,omitempty"`
	Message      any     `json:"message,omitempty"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type oaToolCall struct {
	Index    *int       `json:"index,omitempty"`
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

func (openAIAPI) usage(a accounting) oaUsage {
	var u oaUsage
	u.PromptTokens = a.usage.InputTokens + a.usage.CacheReadInputTokens
	u.CompletionTokens = a.usage.OutputTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.PromptTokensDetails.CachedTokens = a.usage.CacheReadInputTokens
	u.CompletionTokensDetails.ReasoningTokens = a.thinking
	return u
}

func (o openAIAPI) stream(sw *eventWriter, p *prompt, t Turn, a accounting) error {
	blocks := o.s.withIDs(t.blocks, "call_")
	base := oaChunk{
		ID: o.s.nextID("chatcmpl-"), Object: "chat.completion.chunk", Created: time.Now().Unix(),
		Model: p.model, ServiceTier: "default", SystemFingerprint: "fp_llmtest",
	}
	if p.includeUsage {
		base.Usage = json.RawMessage("null")
	}
	send := func(delta any, finish *string) error {
		c := base
		c.Choices = []oaChoice{{Delta: delta, FinishReason: finish}}
		return sw.send("", c)
	}

	role := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	if firstAnswer(blocks) == kindToolCall {
		role = map[string]any{"role": "assistant", "content": nil}
	}
	if err := send(role, nil); err != nil {
		return err
	}
	calls := 0
	for _, b := range blocks {
		switch b.kind {
		case kindText:
			for _, piece := range pieces(b.text) {
				if err := send(map[string]any{"content": piece}, nil); err != nil {
					return err
				}
			}
		case kindThinking:
			for _, piece := range pieces(b.text) {
				if err := send(map[string]any{"reasoning_content": piece}, nil); err != nil {
					return err
				}
			}
		case kindToolCall:
			index := calls
			calls++
			head := oaToolCall{Index: &index, ID: b.id, Type: "function", Function: oaFunction{Name: b.name}}
			if err := send(map[string]any{"tool_calls": []oaToolCall{head}}, nil); err != nil {
				return err
			}
			for _, piece := range pieces(b.input) {
				frag := oaToolCall{Index: &index, Function: oaFunction{Arguments: piece}}
				if err := send(map[string]any{"tool_calls": []oaToolCall{frag}}, nil); err != nil {
					return err
				}
			}
		}
	}
	switch t.fault {
	case faultOverloadedMidStream:
		e := o.faultError(faultOverloaded, 0)
		return sw.send("", map[string]oaError{"error": e.openAI()})
	case faultDropMidStream:
		return nil
	}
	finish := t.openAIFinish()
	if err := send(map[string]any{}, &finish); err != nil {
		return err
	}
	if p.includeUsage {
		c := base
		c.Choices = []oaChoice{}
		u, err := marshalJSON(o.usage(a))
		if err != nil {
			return err
		}
		c.Usage = u
		if err := sw.send("", c); err != nil {
			return err
		}
	}
	return sw.sendRaw("", []byte("[DONE]"))
}

// firstAnswer is the kind of the first block that is not reasoning.
func firstAnswer(blocks []Block) blockKind {
	for _, b := range blocks {
		if b.kind == kindText || b.kind == kindToolCall {
			return b.kind
		}
	}
	return kindText
}

// respond answers a request without "stream": true with the whole
// completion.
func (o openAIAPI) respond(w http.ResponseWriter, p *prompt, t Turn, a accounting, requestID string) {
	blocks := o.s.withIDs(t.blocks, "call_")
	var text, reasoning string
	var calls []oaToolCall
	hasText := false
	for _, b := range blocks {
		switch b.kind {
		case kindText:
			text += b.text
			hasText = true
		case kindThinking:
			reasoning += b.text
		case kindToolCall:
			calls = append(calls, oaToolCall{ID: b.id, Type: "function", Function: oaFunction{Name: b.name, Arguments: b.input}})
		}
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if hasText {
		msg["content"] = text
	}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	finish := t.openAIFinish()
	w.Header().Set("x-request-id", requestID)
	writeJSON(w, http.StatusOK, struct {
		ID                string     `json:"id"`
		Object            string     `json:"object"`
		Created           int64      `json:"created"`
		Model             string     `json:"model"`
		Choices           []oaChoice `json:"choices"`
		Usage             oaUsage    `json:"usage"`
		ServiceTier       string     `json:"service_tier"`
		SystemFingerprint string     `json:"system_fingerprint"`
	}{
		ID: o.s.nextID("chatcmpl-"), Object: "chat.completion", Created: time.Now().Unix(), Model: p.model,
		Choices: []oaChoice{{Message: msg, FinishReason: &finish}}, Usage: o.usage(a),
		ServiceTier: "default", SystemFingerprint: "fp_llmtest",
	})
}
