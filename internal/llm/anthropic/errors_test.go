package anthropic

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

func apiErrorBody(typ, msg string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011"}`
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       llm.ErrorKind
		message    string
		retryAfter time.Duration
	}{
		{"401", 401, nil, apiErrorBody("authentication_error", "invalid x-api-key"), llm.ErrAuth, "invalid x-api-key", 0},
		{"403", 403, nil, apiErrorBody("permission_error", "no access"), llm.ErrAuth, "no access", 0},
		{"402", 402, nil, apiErrorBody("billing_error", "credit balance too low"), llm.ErrQuota, "credit balance too low", 0},
		{"400", 400, nil, apiErrorBody("invalid_request_error", "messages: field required"), llm.ErrInvalidRequest, "messages: field required", 0},
		{"400 prompt too long", 400, nil, apiErrorBody("invalid_request_error", "prompt is too long: 214431 tokens > 204698 maximum"), llm.ErrPromptTooLong, "prompt is too long: 214431 tokens > 204698 maximum", 0},
		{"404", 404, nil, apiErrorBody("not_found_error", "model: claude-nope"), llm.ErrNotFound, "model: claude-nope", 0},
		{"413", 413, nil, apiErrorBody("request_too_large", "Request exceeds the maximum size"), llm.ErrInvalidRequest, "Request exceeds the maximum size", 0},
		{"429 seconds", 429, map[string]string{"retry-after": "7"}, apiErrorBody("rate_limit_error", "slow down"), llm.ErrRateLimit, "slow down", 7 * time.Second},
		{"429 ms wins", 429, map[string]string{"retry-after-ms": "1500", "retry-after": "2"}, apiErrorBody("rate_limit_error", "slow down"), llm.ErrRateLimit, "slow down", 1500 * time.Millisecond},
		{"429 spend cap", 429, nil, `{"type":"error","error":{"type":"rate_limit_error","message":"spend limit reached","details":{"error_code":"enforced_spend_limit_reached"}}}`, llm.ErrQuota, "spend limit reached", 0},
		{"529", 529, nil, apiErrorBody("overloaded_error", "Overloaded"), llm.ErrOverloaded, "Overloaded", 0},
		{"500", 500, nil, apiErrorBody("api_error", "Internal server error"), llm.ErrServer, "Internal server error", 0},
		{"503 retry-after", 503, map[string]string{"retry-after": "30"}, apiErrorBody("api_error", "unavailable"), llm.ErrServer, "unavailable", 30 * time.Second},
		{"504", 504, nil, apiErrorBody("timeout_error", "Request timeout"), llm.ErrServer, "Request timeout", 0},
		{"408", 408, nil, "", llm.ErrServer, "Request Timeout", 0},
		{"409", 409, nil, apiErrorBody("conflict_error", "conflict"), llm.ErrServer, "conflict", 0},
		{"502 html", 502, nil, "<html><body>Bad Gateway</body></html>", llm.ErrServer, "Bad Gateway", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
			if s != nil {
				s.Close()
				t.Fatal("got a stream for an error status")
			}
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("err = %T %v, want *llm.Error", err, err)
			}
			if e.Kind != c.kind || e.Status != c.status || e.Message != c.message || e.RetryAfter != c.retryAfter {
				t.Errorf("got kind=%v status=%d message=%q retryAfter=%v\nwant kind=%v status=%d message=%q retryAfter=%v",
					e.Kind, e.Status, e.Message, e.RetryAfter, c.kind, c.status, c.message, c.retryAfter)
			}
			if e.Body != c.body {
				t.Errorf("Body = %q, want the raw response %q", e.Body, c.body)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("server got %d requests, want 1: retrying is the agent's job", n)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	h := http.Header{}
	h.Set("retry-after", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
	got := retryAfter(h)
	// HTTP dates have whole seconds; allow for that and a slow machine.
	if got < 80*time.Second || got > 90*time.Second {
		t.Errorf("retryAfter = %v, want about 90s", got)
	}
	h.Set("retry-after", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
	if got := retryAfter(h); got != 0 {
		t.Errorf("retryAfter of a past date = %v, want 0", got)
	}
	for _, v := range []string{"soon", "-5", "NaN", ""} {
		h.Set("retry-after", v)
		if got := retryAfter(h); got != 0 {
			t.Errorf("retryAfter(%q) = %v, want 0", v, got)
		}
	}
	h.Set("retry-after", "1e300")
	if got := retryAfter(h); got != maxRetryAfter {
		t.Errorf("retryAfter(1e300) = %v, want the cap", got)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	cases := []struct {
		typ  string
		kind llm.ErrorKind
	}{
		{"overloaded_error", llm.ErrOverloaded},
		{"api_error", llm.ErrServer},
		{"rate_limit_error", llm.ErrRateLimit},
		{"invalid_request_error", llm.ErrInvalidRequest},
		{"brand_new_error", llm.ErrServer},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			raw := `{"type":"error","error":{"type":"` + c.typ + `","message":"Something happened"}}`
			events, err := streamOf(t, messageStart("msg_e")+
				event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
				event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`)+
				event("error", raw))
			if len(events) != 2 {
				t.Errorf("got %d events before the error, want 2: %#v", len(events), events)
			}
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("err = %T %v, want *llm.Error", err, err)
			}
			if e.Kind != c.kind || e.Message != "Something happened" || e.Body != raw {
				t.Errorf("got kind=%v message=%q body=%q", e.Kind, e.Message, e.Body)
			}
			if e.Status != 0 {
				t.Errorf("Status = %d, want 0: the HTTP status was fine", e.Status)
			}
		})
	}
}

func TestStreamErrorIsSticky(t *testing.T) {
	f := serveSSE(t, messageStart("m")+event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, first := collect(t, s)
	_, again := s.Next()
	if first == nil || again != first {
		t.Errorf("Next after an error = %v, want the same error %v", again, first)
	}
}

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	_, err := streamOf(t, messageStart("m")+textBlock(0, "cut off"))
	if llm.KindOf(err) != llm.ErrConnection {
		t.Fatalf("err = %v, want a connection error", err)
	}
	if !strings.Contains(err.Error(), "message_stop") {
		t.Errorf("error %q does not say what was missing", err)
	}
}

func TestStreamConnectionDropped(t *testing.T) {
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, messageStart("m")+
			event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close() // mid-chunk, no terminating chunk
	})
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events, err := collect(t, s)
	if len(events) != 1 {
		t.Errorf("got %d events before the drop, want 1", len(events))
	}
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.ErrConnection || !e.Retryable() {
		t.Fatalf("err = %v, want a retryable connection error", err)
	}
}

// blockingAPI sends message_start, then holds the stream open until the
// client goes away. gone is closed when the handler saw the client leave.
func blockingAPI(t *testing.T) (f *fakeAPI, gone chan struct{}) {
	gone = make(chan struct{})
	f = newFakeAPI(t, nil)
	f.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, messageStart("m"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-f.release:
		}
	}
	return f, gone
}

// within fails the test when fn does not return in a few seconds.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

func TestCancelMidStream(t *testing.T) {
	f, gone := blockingAPI(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := f.provider(Config{}).Stream(ctx, llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	} else if _, ok := ev.(llm.MessageStart); !ok {
		t.Fatalf("first event %#v", ev)
	}

	var nextErr error
	within(t, "Next after cancel", func() {
		go cancel()
		_, nextErr = s.Next()
	})
	if !errors.Is(nextErr, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", nextErr)
	}
	if _, ok := llm.AsError(nextErr); ok {
		t.Error("cancellation reported as a provider error")
	}
	within(t, "server noticing the client left", func() { <-gone })
}

func TestCloseUnblocksNext(t *testing.T) {
	f, gone := blockingAPI(t)
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	var nextErr error
	within(t, "Next after Close", func() {
		go s.Close()
		_, nextErr = s.Next()
	})
	if nextErr == nil || nextErr == io.EOF {
		t.Errorf("Next after Close = %v, want an error", nextErr)
	}
	within(t, "server noticing the connection closed", func() { <-gone })
}

func TestCancelBeforeResponse(t *testing.T) {
	arrived := make(chan struct{})
	f := newFakeAPI(t, nil)
	f.handle = func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select { // never answers
		case <-r.Context().Done():
		case <-f.release:
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	var s llm.Stream
	var err error
	within(t, "Stream after cancel", func() {
		s, err = f.provider(Config{}).Stream(ctx, llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	})
	if s != nil {
		s.Close()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Stream = %v, want context.Canceled", err)
	}
	if _, ok := llm.AsError(err); ok {
		t.Error("cancellation reported as a provider error")
	}
}
