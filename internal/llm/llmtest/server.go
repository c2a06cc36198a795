// Package llmtest is a wire-level fake of the Anthropic Messages API and the
// OpenAI Chat Completions API for tests. A Server plays scripted turns as the
// exact Server-Sent Events each API streams, rejects the requests the real
// APIs reject, and reports usage with an honest model of prompt caching, so
// adapters, the agent loop and the built binary can be tested end to end.
package llmtest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the fake. Both APIs share one URL and one script of turns.
type Server struct {
	srv  *httptest.Server
	done chan struct{} // closed at cleanup: aborts delayed streams

	mu         sync.Mutex
	queue      []Turn
	handler    func(*Request) Turn
	window     int
	now        func() time.Time
	requests   []*Request
	lastEvent  []time.Time
	rejections []string
	cache      promptCache
	seq        int
}

// NewServer starts a fake serving POST /v1/messages (Anthropic) and
// POST /v1/chat/completions (OpenAI). Paths match on their suffix, so an
// Anthropic base URL ending in /v1 and an OpenAI one without it both work.
// The server is closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{
		done:  make(chan struct{}),
		now:   time.Now,
		cache: newPromptCache(),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// URL is the base URL without /v1, as the Anthropic SDK expects it
// (ANTHROPIC_BASE_URL).
func (s *Server) URL() string { return s.srv.URL }

// OpenAIURL is the base URL with /v1, as the OpenAI SDK expects it
// (OPENAI_BASE_URL).
func (s *Server) OpenAIURL() string { return s.srv.URL + "/v1" }

// Enqueue appends turns to the script. They are played in order, one per
// accepted request, whichever API asks.
func (s *Server) Enqueue(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, turns...)
}

// SetHandler sets the function that answers accepted requests once the
// queue is empty. It is called without the server's lock held, possibly
// from several goroutines at once.
func (s *Server) SetHandler(h func(r *Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// SetContextWindow makes requests whose estimated input exceeds tokens fail
// with the API's prompt-too-long error. 0 turns the limit off.
func (s *Server) SetContextWindow(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = tokens
}

// SetNow replaces the clock that ages prompt-cache entries.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Requests returns a snapshot of every request received, in arrival order,
// rejected ones included.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.requests))
	for i, r := range s.requests {
		c := *r
		out[i] = &c
	}
	return out
}

// Rejections returns why requests were refused as malformed: each rule of
// the real API a client broke, an unknown path, or a request that found no
// scripted turn. A prompt over SetContextWindow is not listed: it is a
// legitimate answer, visible in Request.Rejected. Tests assert this is empty.
func (s *Server) Rejections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.rejections...)
}

// LastEventAt returns when the i-th request's answer wrote its final event
// (for an HTTP error, its body), taken just before the write so a client
// that has read it sees the time already set. Zero while nothing was written.
func (s *Server) LastEventAt(i int) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.lastEvent) {
		return time.Time{}
	}
	return s.lastEvent[i]
}

// apiError is an error answer; param and code are used by OpenAI only.
type apiError struct {
	status     int
	typ        string
	message    string
	param      string
	code       string
	retryAfter time.Duration
}

// wireAPI is one of the served APIs.
type wireAPI interface {
	name() string
	// check validates a request as the real API does.
	check(h http.Header, body []byte) (*prompt, *apiError)
	promptTooLong(tokens, window int) *apiError
	faultError(f fault, retryAfter time.Duration) *apiError
	writeError(w http.ResponseWriter, e *apiError, requestID string)
	// account measures the prompt against the cache and records it there.
	account(p *prompt, t Turn) accounting
	stream(sw *eventWriter, p *prompt, t Turn, a accounting) error
	respond(w http.ResponseWriter, p *prompt, t Turn, a accounting, requestID string)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var api wireAPI
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/messages"):
		api = anthropicAPI{s}
	case strings.HasSuffix(path, "/chat/completions"):
		api = openAIAPI{s}
	}
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req := &Request{Header: r.Header.Clone(), Body: body, Arrived: time.Now()}
	if api != nil {
		req.API = api.name()
	}
	idx := s.record(req)

	if api == nil {
		// Neither SDK follows a 404 with a retry, so a wrong path fails fast.
		e := &apiError{status: http.StatusNotFound, typ: "not_found_error", message: "Not Found"}
		s.reject(idx, fmt.Sprintf("%s %s: unknown path", r.Method, r.URL.Path), true, e.status)
		s.markEvent(idx)
		anthropicAPI{s}.writeError(w, e, s.nextID("req_"))
		return
	}
	reqID := s.nextID("req_")
	fail := func(e *apiError, malformed bool) {
		s.reject(idx, e.message, malformed, e.status)
		s.markEvent(idx)
		api.writeError(w, e, reqID)
	}
	switch {
	case r.Method != http.MethodPost:
		fail(&apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error",
			message: "Method Not Allowed"}, true)
		return
	case readErr != nil:
		var tooLarge *http.MaxBytesError
		if errors.As(readErr, &tooLarge) {
			fail(&apiError{status: http.StatusRequestEntityTooLarge, typ: "request_too_large",
				message: "Request exceeds the maximum allowed number of bytes."}, true)
			return
		}
		fail(&apiError{status: http.StatusBadRequest, typ: "invalid_request_error",
			message: "read body: " + readErr.Error()}, true)
		return
	}

	p, bad := api.check(r.Header, body)
	if bad != nil {
		fail(bad, true)
		return
	}
	if window := s.contextWindow(); window > 0 && p.tokens() > window {
		fail(api.promptTooLong(p.tokens(), window), false)
		return
	}
	turn, ok := s.nextTurn(req)
	if !ok {
		fail(&apiError{status: http.StatusBadRequest, typ: "invalid_request_error",
			message: "llmtest: no scripted turn left for this request"}, true)
		return
	}
	s.play(w, r, api, idx, p, turn, reqID)
}

// play answers an accepted request with its turn.
func (s *Server) play(w http.ResponseWriter, r *http.Request, api wireAPI, idx int, p *prompt, turn Turn, reqID string) {
	if turn.fault.httpFault() || !p.stream && turn.fault == faultOverloadedMidStream {
		e := s.faultAnswer(api, p, turn)
		s.answered(idx, e.status, Usage{})
		s.markEvent(idx)
		api.writeError(w, e, reqID)
		return
	}
	a := api.account(p, turn)
	s.answered(idx, http.StatusOK, a.usage)
	switch {
	case !p.stream && turn.fault == faultDropMidStream:
		hangUp(w)
		return
	case !p.stream:
		s.markEvent(idx)
		api.respond(w, p, turn, a, reqID)
		return
	}
	sw := newEventWriter(w, r, s.done, turn.delay, func() { s.markEvent(idx) })
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", reqID)
	w.Header().Set("x-request-id", reqID)
	w.WriteHeader(http.StatusOK)
	if err := api.stream(sw, p, turn, a); err != nil {
		return // the client went away or the server is closing
	}
	if turn.fault == faultDropMidStream {
		hangUp(w)
	}
}

// faultAnswer is the error a fault turn answers with. Without streaming,
// an overload that would have come mid-stream comes as the status.
func (s *Server) faultAnswer(api wireAPI, p *prompt, turn Turn) *apiError {
	switch turn.fault {
	case faultPromptTooLong:
		window := s.contextWindow()
		if window <= 0 {
			window = defaultWindow
		}
		return api.promptTooLong(max(p.tokens(), window+1), window)
	case faultOverloadedMidStream:
		return api.faultError(faultOverloaded, 0)
	}
	return api.faultError(turn.fault, turn.retryAfter)
}

const (
	maxBody       = 32 << 20 // the Messages API's request size limit
	defaultWindow = 200000
)

// hangUp closes the connection under an unfinished response, as a dropped
// network link would.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	buf.Flush()
	conn.Close()
}

func (s *Server) record(r *Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	s.lastEvent = append(s.lastEvent, time.Time{})
	return len(s.requests) - 1
}

func (s *Server) reject(idx int, reason string, malformed bool, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests[idx]
	r.Rejected, r.Status = reason, status
	if malformed {
		api := r.API
		if api == "" {
			api = "unknown API"
		}
		s.rejections = append(s.rejections, fmt.Sprintf("request %d (%s): %s", idx, api, reason))
	}
}

func (s *Server) answered(idx, status int, u Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[idx].Status = status
	s.requests[idx].Usage = u
}

func (s *Server) markEvent(idx int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastEvent[idx] = time.Now()
}

func (s *Server) contextWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window
}

func (s *Server) clock() time.Time {
	s.mu.Lock()
	now := s.now
	s.mu.Unlock()
	return now()
}

// nextTurn pops the queue, else asks the handler with a snapshot of r.
func (s *Server) nextTurn(r *Request) (Turn, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		t := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return t, true
	}
	h := s.handler
	snapshot := *r
	s.mu.Unlock()
	if h == nil {
		return Turn{}, false
	}
	return h(&snapshot), true
}

// nextID returns prefix followed by 24 digits, unique on this server and
// deterministic for a given sequence of requests.
func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%024d", prefix, s.seq)
}
