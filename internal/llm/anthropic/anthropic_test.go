package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/coda-cli/coda/internal/llm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorded is one request the fake API received.
type recorded struct {
	header http.Header
	path   string
	body   []byte
}

// fakeAPI is an httptest server standing in for the Messages API. Each
// request is recorded, then answered by handle.
type fakeAPI struct {
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	handle http.HandlerFunc
	// release is closed at cleanup so handlers that wait for the client can
	// always end.
	release chan struct{}
}

func newFakeAPI(t *testing.T, handle http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{handle: handle, release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{header: r.Header.Clone(), path: r.URL.Path, body: body})
		f.mu.Unlock()
		f.handle(w, r)
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.release) }) // runs before srv.Close
	return f
}

// serveSSE answers every request with status 200 and body as the event stream.
func serveSSE(t *testing.T, body string) *fakeAPI {
	return newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	})
}

func (f *fakeAPI) provider(cfg Config) *Provider {
	cfg.BaseURL = f.srv.URL
	cfg.HTTPClient = f.srv.Client()
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	return New(cfg)
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// lastBody decodes the body of the newest request.
func (f *fakeAPI) lastBody(t *testing.T) map[string]any {
	t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		t.Fatal("the server received no request")
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[len(reqs)-1].body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, reqs[len(reqs)-1].body)
	}
	return body
}

// collect reads s to its end and returns the events and the error that
// ended it (io.EOF for a complete answer).
func collect(t *testing.T, s llm.Stream) ([]llm.Event, error) {
	t.Helper()
	var events []llm.Event
	for range 1000 {
		ev, err := s.Next()
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	t.Fatal("stream did not end after 1000 events")
	return nil, nil
}

// event formats one named SSE event.
func event(typ, data string) string {
	return fmt.Sprintf("event: %s\ndata: %s\n\n", typ, data)
}

func messageStart(id string) string {
	return event("message_start", `{"type":"message_start","message":{"id":"`+id+`","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
}

func textBlock(index int, text string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index)) +
		event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, index, text)) +
		event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func messageEnd(reason string, output int) string {
	return event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, output)) +
		event("message_stop", `{"type":"message_stop"}`)
}

func TestNameIsAnthropic(t *testing.T) {
	var p llm.Provider = New(Config{})
	if p.Name() != "anthropic" {
		t.Errorf("Name() = %q", p.Name())
	}
}

func TestHeadersAndNoEnvironment(t *testing.T) {
	// The SDK would read these by default; coda resolves keys and URLs itself.
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")

	f := serveSSE(t, messageStart("msg_1")+textBlock(0, "hi")+messageEnd("end_turn", 3))
	p := f.provider(Config{
		APIKey:  "sk-config",
		Headers: map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14", "X-App": "cli"},
	})
	s, err := p.Stream(t.Context(), llm.Request{Model: "claude-test", MaxTokens: 100, Messages: []llm.Message{llm.UserText("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := collect(t, s); err != io.EOF {
		t.Fatalf("stream ended with %v, want io.EOF", err)
	}

	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	h := reqs[0].header
	for name, want := range map[string]string{
		"X-Api-Key":         "sk-config",
		"Anthropic-Version": APIVersion,
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
		"X-App":             "cli",
		"Content-Type":      "application/json",
		"Authorization":     "",
		"X-From-Env":        "",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if reqs[0].path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", reqs[0].path)
	}
	if body := f.lastBody(t); body["stream"] != true {
		t.Errorf("stream = %v, want true", body["stream"])
	}
}

func TestHeadersOverrideVersion(t *testing.T) {
	f := serveSSE(t, messageStart("msg_1")+messageEnd("end_turn", 1))
	p := f.provider(Config{Headers: map[string]string{"anthropic-version": "2099-01-01"}})
	s, err := p.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := f.requests()[0].header.Get("anthropic-version"); got != "2099-01-01" {
		t.Errorf("anthropic-version = %q, want the configured override", got)
	}
}

func TestBaseURLWithPath(t *testing.T) {
	f := serveSSE(t, messageStart("msg_1")+messageEnd("end_turn", 1))
	p := New(Config{BaseURL: f.srv.URL + "/proxy/anthropic", HTTPClient: f.srv.Client()})
	s, err := p.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := f.requests()[0].path; got != "/proxy/anthropic/v1/messages" {
		t.Errorf("path = %q, want the base path kept", got)
	}
}

func TestStartConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url, client := srv.URL, srv.Client()
	srv.Close() // nothing listens there any more

	p := New(Config{BaseURL: url, HTTPClient: client})
	s, err := p.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}})
	if s != nil {
		t.Error("got a stream for a refused connection")
	}
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrConnection {
		t.Fatalf("err = %v, want a connection error", err)
	}
	if !e.Retryable() {
		t.Error("a refused connection should be retryable")
	}
	if !strings.Contains(err.Error(), "connection_error") {
		t.Errorf("error text %q does not say what failed", err)
	}
}
