package llmtest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPathsMatchOnSuffix(t *testing.T) {
	s := NewServer(t)
	s.SetHandler(func(*Request) Turn { return Reply(Text("ok")) })
	for url, api := range map[string]string{
		s.URL() + "/v1/messages":             "anthropic",
		s.URL() + "/v1/v1/messages":          "anthropic", // base URL already ending in /v1
		s.OpenAIURL() + "/chat/completions":  "openai",
		s.URL() + "/chat/completions":        "openai", // base URL without /v1
		s.OpenAIURL() + "/chat/completions/": "openai",
	} {
		var resp *http.Response
		if api == "anthropic" {
			resp = post(t, url, antReq(user("hi")), antHeaders())
		} else {
			resp = post(t, url, oaReq(oaMsg("user", "hi")), map[string]string{"Authorization": "Bearer k"})
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", url, resp.StatusCode)
		}
		mustEvents(t, resp)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("rejections %v", r)
	}
}

func TestUnknownPathAndEmptyScriptAreRejections(t *testing.T) {
	s := NewServer(t)
	resp := post(t, s.URL()+"/v1/complete", antReq(user("hi")), antHeaders())
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	resp = antPost(t, s, antReq(user("hi")))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no scripted turn: %d", resp.StatusCode)
	}
	r := s.Rejections()
	if len(r) != 2 || !strings.Contains(r[0], "/v1/complete") || !strings.Contains(r[1], "no scripted turn") {
		t.Errorf("rejections %q", r)
	}
}

func TestQueueThenHandler(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("scripted")))
	s.SetHandler(func(r *Request) Turn { return Reply(Text("echo " + r.LastUserText())) })
	got := func(body any, api string) string {
		var resp *http.Response
		if api == "anthropic" {
			resp = antPost(t, s, body)
		} else {
			resp = oaPost(t, s, body)
		}
		var out strings.Builder
		for _, e := range mustEvents(t, resp) {
			if e.data == "[DONE]" {
				continue
			}
			m := e.json(t)
			if d, ok := m["delta"].(map[string]any); ok && d["type"] == "text_delta" {
				out.WriteString(d["text"].(string))
			}
			for _, c := range objects(m["choices"]) {
				if s, ok := c["delta"].(map[string]any)["content"].(string); ok {
					out.WriteString(s)
				}
			}
		}
		return out.String()
	}
	if a := got(antReq(user("one")), "anthropic"); a != "scripted" {
		t.Errorf("first answer %q", a)
	}
	if a := got(oaReq(oaMsg("user", "two")), "openai"); a != "echo two" {
		t.Errorf("handler answer %q", a)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].API != "anthropic" || reqs[1].API != "openai" || reqs[1].Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestDelayPacesEventsAndInterruptEndsTheStream(t *testing.T) {
	s := NewServer(t)
	const delay = 15 * time.Millisecond
	s.Enqueue(Reply(Text("abcdefghijkl")).WithDelay(delay), Reply(Text(strings.Repeat("slow ", 50))).WithDelay(time.Hour))

	start := time.Now()
	events := mustEvents(t, antPost(t, s, antReq(user("hi"))))
	if min := time.Duration(len(events)-1) * delay; time.Since(start) < min {
		t.Errorf("%d events in %v, want at least %v", len(events), time.Since(start), min)
	}
	if at := s.LastEventAt(0); at.Before(start) || at.After(time.Now()) {
		t.Errorf("LastEventAt(0) = %v, outside the request", at)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	for k, v := range antHeaders() {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	first := s.LastEventAt(1)
	cancel()
	// Closing the server waits for its handlers; only the client's
	// cancellation can end this one before its hour-long pause.
	closed := make(chan struct{})
	go func() {
		s.srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's handler still runs after the client cancelled")
	}
	if first.IsZero() || !s.LastEventAt(1).Equal(first) {
		t.Errorf("LastEventAt(1) = %v, first event at %v: nothing more may be written", s.LastEventAt(1), first)
	}
}

func TestConcurrentClients(t *testing.T) {
	s := NewServer(t)
	s.SetHandler(func(r *Request) Turn { return Reply(Text("answer to " + r.LastUserText())) })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp *http.Response
			if i%2 == 0 {
				resp = antPost(t, s, antReq(user("q")))
			} else {
				resp = oaPost(t, s, oaReq(oaMsg("user", "q")))
			}
			if _, err := readEvents(t, resp); err != nil || resp.StatusCode != 200 {
				t.Errorf("client %d: %d %v", i, resp.StatusCode, err)
			}
		}()
	}
	wg.Wait()
	if n := len(s.Requests()); n != 8 {
		t.Errorf("%d requests recorded, want 8", n)
	}
}
