package openai

import (
	"context"
	"encoding/json"
	"errors"
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

// fakeServer is a Chat Completions endpoint that records each request and
// answers with handler.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

func newFakeServer(t *testing.T, handler http.HandlerFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		f.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// provider returns a Provider talking to f, with cfg's other fields.
func (f *fakeServer) provider(cfg Config) *Provider {
	cfg.BaseURL = f.URL + "/v1"
	cfg.HTTPClient = f.Client()
	return New(cfg)
}

// request returns the only request the server received, its body decoded.
func (f *fakeServer) request(t *testing.T) (recorded, map[string]any) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 1 {
		t.Fatalf("server got %d requests, want 1", len(f.requests))
	}
	r := f.requests[0]
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.body)
	}
	return r, body
}

// sseHandler answers with the given data events as text/event-stream.
func sseHandler(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
		}
	}
}

// sse is sseHandler for a complete stream: events, then [DONE].
func sse(events ...string) http.HandlerFunc {
	return sseHandler(append(events, "[DONE]")...)
}

// jsonHandler answers with status, headers and a JSON body.
func jsonHandler(status int, body string, header map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// deltaChunk builds a chunk whose only choice carries delta (a JSON object) and
// finish (a JSON value such as null or "stop").
func deltaChunk(d, finish string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":` +
		d + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}`
}

// usageChunk is the include_usage chunk that ends a stream.
func usageChunk(u string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[],"usage":` + u + `}`
}

// run streams req from p and collects every event up to io.EOF or an error.
func run(t *testing.T, p *Provider, req llm.Request) ([]llm.Event, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return drain(t, s)
}

func drain(t *testing.T, s llm.Stream) ([]llm.Event, error) {
	t.Helper()
	var events []llm.Event
	for range 1000 {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	t.Fatal("stream did not end after 1000 events")
	return nil, nil
}

// streamText runs a stream that must succeed.
func streamEvents(t *testing.T, handler http.HandlerFunc) []llm.Event {
	t.Helper()
	f := newFakeServer(t, handler)
	events, err := run(t, f.provider(Config{}), llm.Request{Model: "m-1", Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatalf("stream: %v (events so far: %#v)", err, events)
	}
	return events
}

// final returns the blocks of the BlockDone events and the Stop event.
func final(t *testing.T, events []llm.Event) ([]llm.Block, llm.Stop) {
	t.Helper()
	var blocks []llm.Block
	var stop *llm.Stop
	for _, ev := range events {
		switch ev := ev.(type) {
		case llm.BlockDone:
			if ev.Index != len(blocks) {
				t.Errorf("BlockDone index %d, want %d (in order)", ev.Index, len(blocks))
			}
			blocks = append(blocks, ev.Block)
		case llm.Stop:
			stop = &ev
		}
	}
	if stop == nil {
		t.Fatalf("no Stop event in %#v", events)
	}
	if _, ok := events[len(events)-1].(llm.Stop); !ok {
		t.Errorf("last event is %#v, want Stop", events[len(events)-1])
	}
	return blocks, *stop
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantContains(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("got %s\nwant it to contain %s", got, want)
	}
}
