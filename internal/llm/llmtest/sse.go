package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// eventWriter writes Server-Sent Events, flushing each one and pausing
// between them when the turn asks for a delay.
type eventWriter struct {
	w       http.ResponseWriter
	ctx     context.Context
	closing <-chan struct{}
	delay   time.Duration
	written int
	mark    func() // records the time of the event about to be written
}

func newEventWriter(w http.ResponseWriter, r *http.Request, closing <-chan struct{}, delay time.Duration, mark func()) *eventWriter {
	return &eventWriter{w: w, ctx: r.Context(), closing: closing, delay: delay, mark: mark}
}

// send writes one event. An empty name writes a data-only event (OpenAI).
func (e *eventWriter) send(name string, data any) error {
	b, err := marshalJSON(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	return e.sendRaw(name, b)
}

func (e *eventWriter) sendRaw(name string, data []byte) error {
	if err := e.pause(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if name != "" {
		buf.WriteString("event: " + name + "\n")
	}
	buf.WriteString("data: ")
	buf.Write(data)
	buf.WriteString("\n\n")
	e.mark()
	if _, err := e.w.Write(buf.Bytes()); err != nil {
		return err
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
	e.written++
	return nil
}

// pause waits the turn's delay before every event but the first, and gives
// up when the client leaves or the server closes.
func (e *eventWriter) pause() error {
	if e.written == 0 || e.delay <= 0 {
		return e.ctx.Err()
	}
	timer := time.NewTimer(e.delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-e.ctx.Done():
		return e.ctx.Err()
	case <-e.closing:
		return errors.New("llmtest: server closing")
	}
}

// marshalJSON encodes v without HTML escaping and without a trailing
// newline, so text travels as the APIs send it.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON writes a complete JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshalJSON(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
