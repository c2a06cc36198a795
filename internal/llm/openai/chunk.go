package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The chunk types below decode a chat.completion.chunk by hand instead of
// through the SDK's ChatCompletionChunk: compatible servers send fields the
// SDK does not model (reasoning_content, reasoning) and shapes it would reject
// (arguments as an object, a missing index, numbers as strings), and one odd
// field must not cost the whole chunk.

// chunk is one data event of a Chat Completions stream.
type chunk struct {
	ID      lenientString   `json:"id"`
	Model   lenientString   `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        lenientInt    `json:"index"`
	Delta        delta         `json:"delta"`
	FinishReason lenientString `json:"finish_reason"`
}

type delta struct {
	Content lenientString `json:"content"`
	Refusal lenientString `json:"refusal"`
	// ReasoningContent is DeepSeek's (and older vLLM's) name for the
	// reasoning text; Reasoning is Ollama's, OpenRouter's and newer vLLM's.
	ReasoningContent lenientString   `json:"reasoning_content"`
	Reasoning        lenientString   `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

// reasoning returns the delta's reasoning text. Servers in transition send
// the same text under both names, so one name wins rather than both adding.
func (d delta) reasoning() string {
	if d.ReasoningContent != "" {
		return string(d.ReasoningContent)
	}
	return string(d.Reasoning)
}

type toolCallDelta struct {
	Index    lenientInt    `json:"index"`
	ID       lenientString `json:"id"`
	Function struct {
		Name      lenientString `json:"name"`
		Arguments rawArguments  `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        lenientInt `json:"prompt_tokens"`
	CompletionTokens    lenientInt `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens lenientInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's count of cached prompt tokens.
	PromptCacheHitTokens lenientInt `json:"prompt_cache_hit_tokens"`
}

// lenientString decodes a JSON string; null and values of any other type
// decode to "".
type lenientString string

func (s *lenientString) UnmarshalJSON(data []byte) error {
	var v string
	if json.Unmarshal(data, &v) == nil {
		*s = lenientString(v)
	}
	return nil
}

// lenientInt decodes a JSON number or a numeric string; Set reports whether
// one was present (a missing index differs from index 0).
type lenientInt struct {
	Value int
	Set   bool
}

func (n *lenientInt) UnmarshalJSON(data []byte) error {
	data = bytes.Trim(data, `"`)
	if f, err := strconv.ParseFloat(string(data), 64); err == nil {
		n.Value, n.Set = int(f), true
	}
	return nil
}

// rawArguments holds a tool call's argument fragment: the text of a JSON
// string, or the raw JSON of anything else (servers that send the arguments
// as an object).
type rawArguments []byte

func (a *rawArguments) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	var s string
	if json.Unmarshal(data, &s) == nil {
		*a = rawArguments(s)
		return nil
	}
	*a = append(rawArguments(nil), data...)
	return nil
}
