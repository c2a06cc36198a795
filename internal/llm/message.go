// Package llm holds the provider-neutral conversation model: messages and their
// blocks, requests, streamed events, typed API errors and the model catalog.
// Provider adapters (llm/anthropic, llm/openai) translate between this model and
// each wire format; nothing here knows about HTTP.
package llm

import (
	"encoding/json"
	"fmt"
	"time"
)

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Block is one piece of a message's content. The concrete types are Text,
// Thinking, RedactedThinking, ToolUse, ToolResult and Image.
type Block interface {
	// Kind is the block's wire-style type name ("text", "tool_use", ...).
	Kind() string
}

// Text is plain text.
type Text struct {
	Text string `json:"text"`
}

// Thinking is a model's visible reasoning. Signature must be sent back
// unchanged: the Anthropic API rejects an altered thinking block.
type Thinking struct {
	Thinking  string `json:"thinking"`
	Signature string `json:"signature,omitempty"`
}

// RedactedThinking is reasoning the provider encrypted; Data is opaque.
type RedactedThinking struct {
	Data string `json:"data"`
}

// ToolUse is the model asking to run a tool. Input is a JSON object.
type ToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult answers the ToolUse with the same ID. Content holds Text and
// Image blocks.
type ToolResult struct {
	ToolUseID string  `json:"tool_use_id"`
	Content   []Block `json:"content"`
	IsError   bool    `json:"is_error,omitempty"`
}

// Image is an inline image; Data is base64 of the raw bytes.
type Image struct {
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func (Text) Kind() string             { return "text" }
func (Thinking) Kind() string         { return "thinking" }
func (RedactedThinking) Kind() string { return "redacted_thinking" }
func (ToolUse) Kind() string          { return "tool_use" }
func (ToolResult) Kind() string       { return "tool_result" }
func (Image) Kind() string            { return "image" }

// Status tells whether a message is still being streamed.
type Status string

const (
	StatusStreaming   Status = "streaming"
	StatusComplete    Status = "complete"
	StatusInterrupted Status = "interrupted"
)

// Meta is what coda knows about a message beyond what the wire carries.
type Meta struct {
	Time   time.Time `json:"time,omitzero"`
	Model  string    `json:"model,omitempty"`
	Usage  *Usage    `json:"usage,omitempty"`
	Status Status    `json:"status,omitempty"`
	// Reminder marks context coda added that the user never typed
	// (system reminders, project instructions, synthetic results).
	Reminder bool `json:"reminder,omitempty"`
	// StopReason is the provider's reason the assistant message ended.
	StopReason StopReason `json:"stop_reason,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	ID     string  `json:"id"`
	Role   Role    `json:"role"`
	Blocks []Block `json:"content"`
	Meta   Meta    `json:"meta"`
}

// UserText builds a user message holding one text block.
func UserText(text string) Message {
	return Message{Role: RoleUser, Blocks: []Block{Text{Text: text}}}
}

// Text returns the concatenated text blocks of m.
func (m Message) Text() string {
	var s string
	for _, b := range m.Blocks {
		if t, ok := b.(Text); ok {
			s += t.Text
		}
	}
	return s
}

// ToolUses returns m's tool_use blocks in order.
func (m Message) ToolUses() []ToolUse {
	var out []ToolUse
	for _, b := range m.Blocks {
		if t, ok := b.(ToolUse); ok {
			out = append(out, t)
		}
	}
	return out
}

// Usage counts tokens. InputTokens excludes the cached parts, as the
// Anthropic API reports it; the total input is the sum of the three.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// TotalInput is every input token the request carried, cached or not.
func (u Usage) TotalInput() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
	}
}

// MarshalJSON tags each block with its type so UnmarshalJSON can restore it.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain struct {
		ID     string            `json:"id"`
		Role   Role              `json:"role"`
		Blocks []json.RawMessage `json:"content"`
		Meta   Meta              `json:"meta"`
	}
	p := plain{ID: m.ID, Role: m.Role, Meta: m.Meta, Blocks: make([]json.RawMessage, 0, len(m.Blocks))}
	for _, b := range m.Blocks {
		raw, err := EncodeBlock(b)
		if err != nil {
			return nil, err
		}
		p.Blocks = append(p.Blocks, raw)
	}
	return json.Marshal(p)
}

// UnmarshalJSON restores tagged blocks. Unknown block types are an error.
func (m *Message) UnmarshalJSON(data []byte) error {
	var p struct {
		ID     string            `json:"id"`
		Role   Role              `json:"role"`
		Blocks []json.RawMessage `json:"content"`
		Meta   Meta              `json:"meta"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	m.ID, m.Role, m.Meta = p.ID, p.Role, p.Meta
	m.Blocks = make([]Block, 0, len(p.Blocks))
	for _, raw := range p.Blocks {
		b, err := DecodeBlock(raw)
		if err != nil {
			return err
		}
		m.Blocks = append(m.Blocks, b)
	}
	return nil
}

// EncodeBlock encodes one block as a JSON object with a "type" field.
func EncodeBlock(b Block) (json.RawMessage, error) {
	switch v := b.(type) {
	case Text:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text
		}{"text", v})
	case Thinking:
		return json.Marshal(struct {
			Type string `json:"type"`
			Thinking
		}{"thinking", v})
	case RedactedThinking:
		return json.Marshal(struct {
			Type string `json:"type"`
			RedactedThinking
		}{"redacted_thinking", v})
	case ToolUse:
		in := v.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{"tool_use", v.ID, v.Name, in})
	case ToolResult:
		content := make([]json.RawMessage, 0, len(v.Content))
		for _, c := range v.Content {
			raw, err := EncodeBlock(c)
			if err != nil {
				return nil, err
			}
			content = append(content, raw)
		}
		return json.Marshal(struct {
			Type      string            `json:"type"`
			ToolUseID string            `json:"tool_use_id"`
			Content   []json.RawMessage `json:"content"`
			IsError   bool              `json:"is_error,omitempty"`
		}{"tool_result", v.ToolUseID, content, v.IsError})
	case Image:
		return json.Marshal(struct {
			Type string `json:"type"`
			Image
		}{"image", v})
	default:
		return nil, fmt.Errorf("encode block: unknown block type %T", b)
	}
}

// DecodeBlock is the inverse of EncodeBlock.
func DecodeBlock(raw json.RawMessage) (Block, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	switch head.Type {
	case "text":
		var v Text
		err := json.Unmarshal(raw, &v)
		return v, err
	case "thinking":
		var v Thinking
		err := json.Unmarshal(raw, &v)
		return v, err
	case "redacted_thinking":
		var v RedactedThinking
		err := json.Unmarshal(raw, &v)
		return v, err
	case "tool_use":
		var v ToolUse
		err := json.Unmarshal(raw, &v)
		return v, err
	case "tool_result":
		var p struct {
			ToolUseID string            `json:"tool_use_id"`
			Content   []json.RawMessage `json:"content"`
			IsError   bool              `json:"is_error"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("decode tool_result: %w", err)
		}
		v := ToolResult{ToolUseID: p.ToolUseID, IsError: p.IsError}
		for _, c := range p.Content {
			b, err := DecodeBlock(c)
			if err != nil {
				return nil, err
			}
			v.Content = append(v.Content, b)
		}
		return v, nil
	case "image":
		var v Image
		err := json.Unmarshal(raw, &v)
		return v, err
	default:
		return nil, fmt.Errorf("decode block: unknown type %q", head.Type)
	}
}
