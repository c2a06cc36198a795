package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/coda-cli/coda/internal/llm"
)

// stream reads a Chat Completions event stream and yields llm events. It
// runs on the caller's goroutine: Next reads the connection until it has
// events to return.
type stream struct {
	ctx     context.Context
	dec     ssestream.Decoder
	answer  *answer
	pending []llm.Event
	done    bool  // the closing events are queued; io.EOF after them
	err     error // sticky; returned once pending is drained

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

func newStream(ctx context.Context, dec ssestream.Decoder, model string) *stream {
	return &stream{ctx: ctx, dec: dec, answer: newAnswer(model)}
}

// Next returns the next event, io.EOF after Stop, or the error that ended
// the stream: ctx.Err() when the context ended it, otherwise an *llm.Error.
func (s *stream) Next() (llm.Event, error) {
	for len(s.pending) == 0 {
		switch {
		case s.err != nil:
			return nil, s.err
		case s.done:
			return nil, io.EOF
		}
		s.read()
	}
	ev := s.pending[0]
	s.pending = s.pending[1:]
	return ev, nil
}

// read consumes one server-sent event.
func (s *stream) read() {
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		return
	}
	if !s.dec.Next() {
		s.ended(s.dec.Err())
		return
	}
	data := bytes.TrimSpace(s.dec.Event().Data)
	switch {
	case len(data) == 0:
		return
	case bytes.HasPrefix(data, []byte("[DONE]")):
		s.finish()
		return
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		s.fail(&llm.Error{Kind: llm.ErrServer, Message: fmt.Sprintf("malformed stream event: %v", err), Body: truncate(string(data), maxErrorBody), Err: err})
		return
	}
	if !isNull(c.Error) {
		s.fail(streamError(data))
		return
	}
	s.pending = append(s.pending, s.answer.add(c)...)
}

// ended handles the end of the body before [DONE]. An answer whose finish
// reason arrived is whole (only the usage chunk may be missing); any other
// is cut off.
func (s *stream) ended(readErr error) {
	switch {
	case s.ctx.Err() != nil:
		s.fail(s.ctx.Err())
	case s.closed.Load():
		s.fail(&llm.Error{Kind: llm.ErrConnection, Message: "stream closed", Err: net.ErrClosed})
	case s.answer.finishReason != "":
		s.finish()
	case readErr != nil:
		s.fail(connectionError(readErr))
	default:
		s.fail(&llm.Error{Kind: llm.ErrConnection, Message: "the stream ended before the answer was complete", Err: io.ErrUnexpectedEOF})
	}
}

func (s *stream) finish() {
	s.pending = append(s.pending, s.answer.finish()...)
	s.done = true
	s.Close()
}

func (s *stream) fail(err error) {
	s.err = err
	s.Close()
}

// Close releases the connection. It is safe to call at any time, from any
// goroutine, more than once; a Next blocked on the connection returns.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = s.dec.Close()
	})
	return s.closeErr
}
