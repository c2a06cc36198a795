package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// The transcript is written with llm's encoding (Message.MarshalJSON) but
// read back through the flat shapes below: llm's decoder parses each
// block's bytes three or four times over (record, message, block head,
// block), which makes resuming a large session seconds slower. These read
// a line in one encoding/json call and build the same values; a test
// holds them to llm's block types field by field. (fastDecodeRecord is
// faster still for the common records.)

// wireRecord is Record as read.
type wireRecord struct {
	Type       string       `json:"type"`
	Time       time.Time    `json:"ts"`
	Start      *Start       `json:"session"`
	Message    *wireMessage `json:"message"`
	Usage      *llm.Usage   `json:"usage"`
	Compact    *wireCompact `json:"compact"`
	Model      string       `json:"model"`
	Mode       string       `json:"mode"`
	Title      string       `json:"title"`
	Checkpoint *Checkpoint  `json:"checkpoint"`
	Rewind     *Rewind      `json:"rewind"`
}

type wireCompact struct {
	Trigger  string        `json:"trigger"`
	Messages []wireMessage `json:"messages"`
}

type wireMessage struct {
	ID      string      `json:"id"`
	Role    llm.Role    `json:"role"`
	Content []wireBlock `json:"content"`
	Meta    llm.Meta    `json:"meta"`
}

// wireBlock holds the fields of every block type; Type says which apply.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   []wireBlock     `json:"content"`
	IsError   bool            `json:"is_error"`
	MediaType string          `json:"media_type"`
}

// decodeRecord parses one line into rec.
func decodeRecord(line []byte, rec *Record) error {
	if fastDecodeRecord(line, rec) {
		return nil
	}
	*rec = Record{}
	return decodeRecordStd(line, rec)
}

// decodeRecordStd parses one line with encoding/json: every record type,
// and the reference fastDecodeRecord is tested against.
func decodeRecordStd(line []byte, rec *Record) error {
	var w wireRecord
	if err := json.Unmarshal(line, &w); err != nil {
		return err
	}
	*rec = Record{Type: w.Type, Time: w.Time, Start: w.Start, Usage: w.Usage, Model: w.Model, Mode: w.Mode,
		Title: w.Title, Checkpoint: w.Checkpoint, Rewind: w.Rewind}
	if w.Message != nil {
		m, err := w.Message.message()
		if err != nil {
			return err
		}
		rec.Message = &m
	}
	if w.Compact != nil {
		c := &Compact{Trigger: w.Compact.Trigger, Messages: make([]llm.Message, len(w.Compact.Messages))}
		for i := range w.Compact.Messages {
			m, err := w.Compact.Messages[i].message()
			if err != nil {
				return err
			}
			c.Messages[i] = m
		}
		rec.Compact = c
	}
	return nil
}

func (w *wireMessage) message() (llm.Message, error) {
	m := llm.Message{ID: w.ID, Role: w.Role, Meta: w.Meta, Blocks: make([]llm.Block, 0, len(w.Content))}
	for i := range w.Content {
		b, err := w.Content[i].block()
		if err != nil {
			return llm.Message{}, err
		}
		m.Blocks = append(m.Blocks, b)
	}
	return m, nil
}

func (w *wireBlock) block() (llm.Block, error) {
	switch w.Type {
	case "text":
		return llm.Text{Text: w.Text}, nil
	case "thinking":
		return llm.Thinking{Thinking: w.Thinking, Signature: w.Signature}, nil
	case "redacted_thinking":
		return llm.RedactedThinking{Data: w.Data}, nil
	case "tool_use":
		return llm.ToolUse{ID: w.ID, Name: w.Name, Input: w.Input}, nil
	case "tool_result":
		r := llm.ToolResult{ToolUseID: w.ToolUseID, IsError: w.IsError}
		for i := range w.Content {
			b, err := w.Content[i].block()
			if err != nil {
				return nil, err
			}
			r.Content = append(r.Content, b)
		}
		return r, nil
	case "image":
		return llm.Image{MediaType: w.MediaType, Data: w.Data}, nil
	}
	return nil, fmt.Errorf("decode block: unknown type %q", w.Type)
}
