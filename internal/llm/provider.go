package llm

import (
	"context"
	"encoding/json"
)

// Request is one model call in provider-neutral form.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec // sent in this order; callers keep it sorted
	MaxTokens int
	Thinking  *ThinkingConfig
	// NoTools forbids tool use for this request (tool_choice "none") while
	// still sending the tool definitions, so the prompt cache prefix holds.
	NoTools bool
	// Cache asks the provider to place prompt-cache breakpoints (tools,
	// system prompt, newest message). Providers without explicit caching
	// ignore it.
	Cache bool
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ThinkingConfig turns on extended thinking. Adaptive lets the model decide
// how much to think; otherwise BudgetTokens caps it.
type ThinkingConfig struct {
	BudgetTokens int
	Adaptive     bool
}

// Provider streams model answers.
type Provider interface {
	// Name is the provider's key in settings and model names ("anthropic", "openai").
	Name() string
	// Stream starts one request. Errors before the first event (HTTP status,
	// connection) come back here as *Error; later ones from Stream.Next.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream yields the events of one answer. Next returns io.EOF after the
// final Stop event. Close releases the connection and may be called at any
// time, more than once.
type Stream interface {
	Next() (Event, error)
	Close() error
}

// StopReason is why an answer ended, in the Anthropic vocabulary; the
// OpenAI adapter maps its finish_reason onto it.
type StopReason string

const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopRefusal      StopReason = "refusal"
	StopPauseTurn    StopReason = "pause_turn"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// Event is one streamed piece of an answer. The concrete types are
// MessageStart, TextDelta, ThinkingDelta, ToolUseStart, BlockDone and Stop.
type Event interface{ isEvent() }

// MessageStart opens an answer.
type MessageStart struct {
	ID    string
	Model string
	Usage Usage // input side, as far as known at the start
}

// TextDelta is a fragment of the text block at Index.
type TextDelta struct {
	Index int
	Text  string
}

// ThinkingDelta is a fragment of the thinking block at Index.
type ThinkingDelta struct {
	Index int
	Text  string
}

// ToolUseStart announces a tool_use block before its input is complete.
type ToolUseStart struct {
	Index int
	ID    string
	Name  string
}

// BlockDone carries a finished block: Text, Thinking (with its signature),
// RedactedThinking or ToolUse (Input assembled and checked to be a JSON
// object). Blocks arrive in index order of completion; Index orders them.
type BlockDone struct {
	Index int
	Block Block
}

// Stop ends the answer with the reason and the final cumulative usage.
type Stop struct {
	Reason StopReason
	Usage  Usage
}

func (MessageStart) isEvent()  {}
func (TextDelta) isEvent()     {}
func (ThinkingDelta) isEvent() {}
func (ToolUseStart) isEvent()  {}
func (BlockDone) isEvent()     {}
func (Stop) isEvent()          {}
