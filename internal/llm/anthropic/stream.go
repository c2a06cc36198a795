package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/coda-cli/coda/internal/llm"
)

// errClosed is what Next returns after Close.
var errClosed = errors.New("anthropic: stream closed")

// stream turns the SDK's decoded SSE events into llm events. Next is for one
// goroutine; Close may be called from any goroutine, at any time.
type stream struct {
	ctx    context.Context // the caller's; its error wins over read errors
	cancel context.CancelFunc
	raw    *ssestream.Stream[sdk.MessageStreamEventUnion]

	closeOnce sync.Once
	closed    chan struct{}

	blocks map[int64]*openBlock
	start  llm.Usage // input side, from message_start
	usage  llm.Usage // cumulative, from message_delta
	reason llm.StopReason
	done   bool  // message_stop seen and reported
	err    error // terminal error, returned again by later calls
}

// openBlock accumulates one content block between its start and stop.
type openBlock struct {
	kind      string
	text      strings.Builder // text, thinking, or tool input JSON
	signature strings.Builder
	data      string // redacted_thinking
	id, name  string
	startJSON string // tool input given in content_block_start
}

func newStream(ctx context.Context, cancel context.CancelFunc, raw *ssestream.Stream[sdk.MessageStreamEventUnion]) *stream {
	return &stream{
		ctx:    ctx,
		cancel: cancel,
		raw:    raw,
		closed: make(chan struct{}),
		blocks: map[int64]*openBlock{},
	}
}

// Next returns the next event, io.EOF after Stop, a *llm.Error when the
// API or the connection failed, ctx.Err() when the caller cancelled.
func (s *stream) Next() (llm.Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.done {
		return nil, io.EOF
	}
	for {
		if err := s.stopped(); err != nil {
			return nil, s.fail(err)
		}
		if !s.raw.Next() {
			return nil, s.fail(s.readError())
		}
		ev, err := s.convert(s.raw.Current())
		if err != nil {
			return nil, s.fail(err)
		}
		if _, ok := ev.(llm.Stop); ok {
			s.done = true
			s.release()
		}
		if ev != nil {
			return ev, nil
		}
	}
}

// Close releases the connection. It is safe to call more than once and
// concurrently with Next, which then returns promptly.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.release()
	return nil
}

// release cancels the request and closes the body; cancelling first makes a
// read blocked in Next return instead of holding the body's lock.
func (s *stream) release() {
	s.cancel()
	s.raw.Close()
}

// stopped reports why reading must not go on, or nil.
func (s *stream) stopped() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.closed:
		return errClosed
	default:
		return nil
	}
}

// readError explains why the SDK stream ended.
func (s *stream) readError() error {
	if err := s.stopped(); err != nil {
		return err
	}
	if err := s.raw.Err(); err != nil {
		return convertStreamError(err)
	}
	return &llm.Error{Kind: llm.ErrConnection, Message: "stream ended before message_stop"}
}

func (s *stream) fail(err error) error {
	s.err = err
	s.release()
	return err
}

// convert maps one SSE event; a nil event means nothing to report yet.
func (s *stream) convert(ev sdk.MessageStreamEventUnion) (llm.Event, error) {
	switch ev.Type {
	case "message_start":
		m := ev.Message
		s.start = llm.Usage{
			InputTokens:              int(m.Usage.InputTokens),
			OutputTokens:             int(m.Usage.OutputTokens),
			CacheCreationInputTokens: int(m.Usage.CacheCreationInputTokens),
			CacheReadInputTokens:     int(m.Usage.CacheReadInputTokens),
		}
		s.usage = s.start
		return llm.MessageStart{ID: m.ID, Model: string(m.Model), Usage: s.start}, nil
	case "content_block_start":
		return s.startBlock(ev), nil
	case "content_block_delta":
		return s.delta(ev), nil
	case "content_block_stop":
		return s.stopBlock(ev.Index), nil
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			s.reason = llm.StopReason(r)
		}
		s.updateUsage(ev.Usage)
		return nil, nil
	case "message_stop":
		return llm.Stop{Reason: s.reason, Usage: s.usage}, nil
	}
	return nil, nil // ping, and event types newer than this code
}

// updateUsage folds in message_delta's cumulative counts. Counts only grow,
// so the larger value wins; that also keeps message_start's input side when
// a delta omits it or a proxy reports zeros.
func (s *stream) updateUsage(u sdk.MessageDeltaUsage) {
	s.usage = llm.Usage{
		InputTokens:              max(s.usage.InputTokens, int(u.InputTokens)),
		OutputTokens:             max(s.usage.OutputTokens, int(u.OutputTokens)),
		CacheCreationInputTokens: max(s.usage.CacheCreationInputTokens, int(u.CacheCreationInputTokens)),
		CacheReadInputTokens:     max(s.usage.CacheReadInputTokens, int(u.CacheReadInputTokens)),
	}
}

func (s *stream) startBlock(ev sdk.MessageStreamEventUnion) llm.Event {
	cb := ev.ContentBlock
	b := &openBlock{kind: cb.Type}
	switch cb.Type {
	case "text":
		b.text.WriteString(cb.Text)
		s.blocks[ev.Index] = b
		if cb.Text != "" {
			return llm.TextDelta{Index: int(ev.Index), Text: cb.Text}
		}
	case "thinking":
		b.text.WriteString(cb.Thinking)
		b.signature.WriteString(cb.Signature)
		s.blocks[ev.Index] = b
		if cb.Thinking != "" {
			return llm.ThinkingDelta{Index: int(ev.Index), Text: cb.Thinking}
		}
	case "redacted_thinking":
		b.data = cb.Data
		s.blocks[ev.Index] = b
	case "tool_use":
		b.id, b.name = cb.ID, cb.Name
		b.startJSON = cb.JSON.Input.Raw()
		s.blocks[ev.Index] = b
		return llm.ToolUseStart{Index: int(ev.Index), ID: cb.ID, Name: cb.Name}
	}
	// Server-tool blocks have no neutral form; their deltas and stop find
	// no open block and are skipped.
	return nil
}

func (s *stream) delta(ev sdk.MessageStreamEventUnion) llm.Event {
	b := s.blocks[ev.Index]
	if b == nil {
		return nil
	}
	d := ev.Delta
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
		return llm.TextDelta{Index: int(ev.Index), Text: d.Text}
	case "thinking_delta":
		b.text.WriteString(d.Thinking)
		return llm.ThinkingDelta{Index: int(ev.Index), Text: d.Thinking}
	case "signature_delta":
		b.signature.WriteString(d.Signature)
	case "input_json_delta":
		b.text.WriteString(d.PartialJSON)
	}
	return nil
}

func (s *stream) stopBlock(index int64) llm.Event {
	b := s.blocks[index]
	if b == nil {
		return nil
	}
	delete(s.blocks, index)
	var block llm.Block
	switch b.kind {
	case "text":
		block = llm.Text{Text: b.text.String()}
	case "thinking":
		block = llm.Thinking{Thinking: b.text.String(), Signature: b.signature.String()}
	case "redacted_thinking":
		block = llm.RedactedThinking{Data: b.data}
	case "tool_use":
		block = llm.ToolUse{ID: b.id, Name: b.name, Input: toolInput(b.text.String(), b.startJSON)}
	}
	return llm.BlockDone{Index: int(index), Block: block}
}

// toolInput is the streamed input JSON of a tool_use. Without any fragments
// it is the input given at block start (some proxies send it whole there),
// else {}. Input that is not valid JSON is kept as it came, so the agent
// can tell the model what was wrong with it.
func toolInput(streamed, atStart string) json.RawMessage {
	if strings.TrimSpace(streamed) != "" {
		return json.RawMessage(streamed)
	}
	if in := bytes.TrimSpace([]byte(atStart)); isObject(in) && !bytes.Equal(in, []byte("{}")) {
		return in
	}
	return json.RawMessage("{}")
}
