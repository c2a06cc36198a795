package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

var hello = llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}

func TestHTTPErrors(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name        string
		status      int
		body        string
		header      map[string]string
		kind        llm.ErrorKind
		message     string
		retryAfter  time.Duration
		approxRetry bool // an HTTP date: within a few seconds
	}{
		{name: "bad key", status: 401, body: `{"error":{"message":"Incorrect API key provided: sk-xx.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, kind: llm.ErrAuth, message: "Incorrect API key provided"},
		{name: "forbidden", status: 403, body: `{"error":{"message":"Project does not have access to model","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, kind: llm.ErrAuth},
		{name: "rate limit, retry-after-ms", status: 429, body: `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, kind: llm.ErrRateLimit, retryAfter: 1500 * time.Millisecond},
		{name: "rate limit, retry-after seconds", status: 429, body: `{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`, header: map[string]string{"Retry-After": "7"}, kind: llm.ErrRateLimit, retryAfter: 7 * time.Second},
		{name: "rate limit, retry-after date", status: 429, body: `{"error":{"message":"slow down"}}`, header: map[string]string{"Retry-After": future}, kind: llm.ErrRateLimit, retryAfter: 90 * time.Second, approxRetry: true},
		{name: "quota by type", status: 429, body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, header: map[string]string{"Retry-After": "1"}, kind: llm.ErrQuota, message: "exceeded your current quota"},
		{name: "quota by code", status: 429, body: `{"error":{"message":"Credit balance exhausted","type":"requests","code":"credit_balance_exhausted"}}`, kind: llm.ErrQuota},
		{name: "spend limit", status: 429, body: `{"error":{"message":"limit","type":"requests","code":"project_spend_limit_exceeded"}}`, kind: llm.ErrQuota},
		{name: "payment required (OpenRouter)", status: 402, body: `{"error":{"message":"Insufficient credits","code":402}}`, kind: llm.ErrQuota},
		{name: "context length by code", status: 400, body: `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, kind: llm.ErrPromptTooLong, message: "maximum context length"},
		{name: "context length by message", status: 400, body: `{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, kind: llm.ErrPromptTooLong},
		{name: "other bad request", status: 400, body: `{"error":{"message":"Invalid value for 'tool_choice'","type":"invalid_request_error","param":"tool_choice","code":null}}`, kind: llm.ErrInvalidRequest, message: "Invalid value for 'tool_choice'"},
		{name: "unknown model", status: 404, body: `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, kind: llm.ErrNotFound, message: "gpt-9"},
		{name: "ollama model not found", status: 404, body: `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}`, kind: llm.ErrNotFound, message: "try pulling it first"},
		{name: "FastAPI detail (vLLM)", status: 404, body: `{"detail":"Not Found"}`, kind: llm.ErrNotFound, message: "Not Found"},
		{name: "server error", status: 500, body: `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, kind: llm.ErrServer},
		{name: "overloaded", status: 503, body: `{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error"}}`, kind: llm.ErrOverloaded},
		{name: "unavailable", status: 503, body: `{"error":{"message":"Service unavailable","type":"server_error"}}`, kind: llm.ErrServer},
		{name: "gateway with an HTML body", status: 502, body: `<html><body>502 Bad Gateway</body></html>`, kind: llm.ErrServer, message: "502 Bad Gateway"},
		{name: "plain string error", status: 400, body: `{"error":"messages: field required"}`, kind: llm.ErrInvalidRequest, message: "messages: field required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, jsonHandler(tt.status, tt.body, tt.header))
			s, err := f.provider(Config{}).Stream(context.Background(), hello)
			if s != nil {
				t.Fatal("got a stream despite the error status")
			}
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
			}
			if e.Kind != tt.kind || e.Status != tt.status {
				t.Errorf("kind = %s, status = %d; want %s, %d (%v)", e.Kind, e.Status, tt.kind, tt.status, e)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message = %q, want it to contain %q", e.Message, tt.message)
			}
			if e.Body != tt.body {
				t.Errorf("body = %q, want the raw response %q", e.Body, tt.body)
			}
			switch {
			case tt.approxRetry:
				if e.RetryAfter < tt.retryAfter-5*time.Second || e.RetryAfter > tt.retryAfter {
					t.Errorf("RetryAfter = %v, want about %v", e.RetryAfter, tt.retryAfter)
				}
			case e.RetryAfter != tt.retryAfter && e.Kind == llm.ErrRateLimit:
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			// Retrying is the agent's decision: the SDK must not have
			// retried on its own.
			f.mu.Lock()
			n := len(f.requests)
			f.mu.Unlock()
			if n != 1 {
				t.Errorf("server got %d requests, want 1 (SDK retries must be off)", n)
			}
		})
	}
}

func TestErrorInSuccessStatus(t *testing.T) {
	f := newFakeServer(t, jsonHandler(200, `{"error":{"message":"model is loading","type":"server_error"}}`, nil))
	_, err := f.provider(Config{}).Stream(context.Background(), hello)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrServer || e.Message != "model is loading" {
		t.Errorf("err = %v, want a server_error saying the model is loading", err)
	}
}

func TestMidStreamErrors(t *testing.T) {
	tests := []struct {
		event string
		kind  llm.ErrorKind
	}{
		{`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, llm.ErrServer},
		{`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, llm.ErrRateLimit},
		{`{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, llm.ErrQuota},
		{`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.ErrPromptTooLong},
		{`{"id":"gen-1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`, llm.ErrServer},
		{`{"error":{"message":"Overloaded","type":"overloaded_error"}}`, llm.ErrOverloaded},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			f := newFakeServer(t, sse(deltaChunk(`{"content":"partial"}`, "null"), tt.event))
			events, err := run(t, f.provider(Config{}), hello)
			e, ok := llm.AsError(err)
			if !ok || e.Kind != tt.kind {
				t.Fatalf("err = %v, want kind %s", err, tt.kind)
			}
			if e.Message == "" || e.Body == "" {
				t.Errorf("error lacks message or body: %#v", e)
			}
			// What streamed before the error was delivered.
			want := []llm.Event{llm.MessageStart{ID: "chatcmpl-1", Model: "m-1"}, llm.TextDelta{Index: 0, Text: "partial"}}
			if len(events) != 2 || events[0] != want[0] || events[1] != want[1] {
				t.Errorf("events before the error = %#v, want %#v", events, want)
			}
		})
	}
}

func TestMalformedEvent(t *testing.T) {
	f := newFakeServer(t, sse(deltaChunk(`{"content":"x"}`, "null"), `{"choices":[`))
	_, err := run(t, f.provider(Config{}), hello)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrServer || !strings.Contains(e.Message, "malformed") {
		t.Errorf("err = %v, want a server_error about a malformed event", err)
	}
}

func TestStreamCutOff(t *testing.T) {
	t.Run("body ends without finish_reason or [DONE]", func(t *testing.T) {
		f := newFakeServer(t, sseHandler(deltaChunk(`{"content":"half an ans"}`, "null")))
		events, err := run(t, f.provider(Config{}), hello)
		if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrConnection {
			t.Fatalf("err = %v, want connection_error", err)
		}
		for _, ev := range events {
			if _, ok := ev.(llm.Stop); ok {
				t.Error("a cut-off stream must not report Stop")
			}
		}
	})
	t.Run("connection dropped mid-event", func(t *testing.T) {
		f := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n")
			buf.WriteString("data: " + deltaChunk(`{"content":"x"}`, "null") + "\n\ndata: {\"cho")
			buf.Flush()
		})
		events, err := run(t, f.provider(Config{}), hello)
		if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrConnection {
			t.Fatalf("err = %v, want connection_error", err)
		}
		if len(events) != 2 {
			t.Errorf("events = %#v, want MessageStart and one TextDelta", events)
		}
	})
}

func TestConnectionRefused(t *testing.T) {
	f := newFakeServer(t, sse())
	p := f.provider(Config{})
	f.Close()
	_, err := p.Stream(context.Background(), hello)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrConnection || e.Err == nil {
		t.Errorf("err = %v, want connection_error wrapping the cause", err)
	}
}

func TestInvalidBaseURL(t *testing.T) {
	for _, base := range []string{"localhost:11434", "://x", "ftp://host/v1"} {
		_, err := New(Config{BaseURL: base}).Stream(context.Background(), hello)
		if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrInvalidRequest || !strings.Contains(e.Message, "base URL") {
			t.Errorf("BaseURL %q: err = %v, want invalid_request about the base URL", base, err)
		}
	}
}

// hangingServer streams one chunk (or nothing, before headers) and then
// holds the connection until the client goes away, reporting that on gone.
func hangingServer(t *testing.T, beforeHeaders bool) (f *fakeServer, received, gone chan struct{}) {
	received, gone = make(chan struct{}), make(chan struct{})
	f = newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(gone)
		if !beforeHeaders {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+deltaChunk(`{"content":"x"}`, "null")+"\n\n")
			w.(http.Flusher).Flush()
		}
		close(received)
		<-r.Context().Done()
	})
	return f, received, gone
}

func TestCancelBeforeResponse(t *testing.T) {
	f, received, gone := hangingServer(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-received
		cancel()
	}()
	start := time.Now()
	_, err := f.provider(Config{}).Stream(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Stream took %v to notice the cancellation", d)
	}
	waitGone(t, gone)
}

func TestCancelMidStream(t *testing.T) {
	f, received, gone := hangingServer(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := f.provider(Config{}).Stream(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-received
	for range 2 { // MessageStart, TextDelta
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	go cancel() // while Next is blocked on the connection
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel: err = %v, want context.Canceled", err)
	}
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next again: err = %v, want context.Canceled again", err)
	}
	waitGone(t, gone)
}

func TestCloseReleasesConnection(t *testing.T) {
	f, received, gone := hangingServer(t, false)
	s, err := f.provider(Config{}).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	<-received
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	s.Close() // twice is fine
	waitGone(t, gone)
	// The buffered delta may still come out; then the stream reports it
	// was closed rather than hanging or claiming a complete answer.
	for range 3 {
		_, err = s.Next()
		if err != nil {
			break
		}
	}
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrConnection {
		t.Errorf("Next after Close: err = %v, want connection_error", err)
	}
}

func TestCloseFromAnotherGoroutine(t *testing.T) {
	f, received, gone := hangingServer(t, false)
	s, err := f.provider(Config{}).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	<-received
	for range 2 {
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	go s.Close() // while Next is blocked on the connection
	if _, err := s.Next(); err == nil {
		t.Error("Next after a concurrent Close returned no error")
	}
	waitGone(t, gone)
}

func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still holds the connection")
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After-Ms": "250.5"}, 250500 * time.Microsecond},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(time.Minute).Format(http.TimeFormat)}, time.Minute},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "soon", "Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After": "1e400"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
