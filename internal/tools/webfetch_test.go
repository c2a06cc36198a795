package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock for the page cache.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// testClient has its own transport so no idle connection outlives the
// test (goleak).
func testClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func newServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func fetch(t *testing.T, w *WebFetch, url string) Result {
	t.Helper()
	return w.Run(context.Background(), Call{Input: input(t, map[string]any{"url": url, "prompt": "what is it about?"}), Env: NewEnv(t.TempDir())})
}

const testPage = `<!doctype html><html><head><title>Test Page</title><script>var x = 1;</script></head>
<body><nav><a href="/">Home</a></nav><main><h1>Welcome</h1>
<p>Read <a href="/docs/intro">the intro</a> and <em>enjoy</em>.</p>
<ul><li>one</li><li>two</li></ul><pre><code class="language-sh">go test ./...</code></pre></main></body></html>`

func TestWebFetchConvertsHTML(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.UserAgent(), "coda-User") {
			t.Errorf("user agent %q", r.UserAgent())
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t)}), srv.URL+"/page")
	if r.IsError {
		t.Fatal(r.Text())
	}
	text := r.Text()
	for _, want := range []string{"# Welcome", "[the intro](" + srv.URL + "/docs/intro)", "*enjoy*", "- one\n- two", "```sh\ngo test ./...\n```"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	for _, noise := range []string{"var x", "Home", "<p>"} {
		if strings.Contains(text, noise) {
			t.Errorf("noise %q kept in:\n%s", noise, text)
		}
	}
	d := r.Display.(WebFetchDisplay)
	if d.Status != 200 || d.ContentType != "text/html" || d.Cached {
		t.Errorf("display %+v", d)
	}
}

func TestWebFetchPassesPlainTextThrough(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "line <b>one</b>\n  indented\n")
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t)}), srv.URL)
	if !strings.HasSuffix(r.Text(), "line <b>one</b>\n  indented\n") {
		t.Errorf("text changed:\n%s", r.Text())
	}
}

func TestWebFetchFollowsSameHostRedirects(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		io.WriteString(w, "you are at "+r.URL.Path)
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t)}), srv.URL+"/old")
	if r.IsError || !strings.Contains(r.Text(), "you are at /new") {
		t.Fatalf("redirect not followed:\n%s", r.Text())
	}
	if d := r.Display.(WebFetchDisplay); d.FinalURL != srv.URL+"/new" {
		t.Errorf("final URL %q", d.FinalURL)
	}
}

func TestWebFetchReportsCrossHostRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		io.WriteString(w, "other host")
	})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t)}), srv.URL+"/go")
	if r.IsError {
		t.Fatalf("a cross-host redirect is an answer, not an error: %s", r.Text())
	}
	if !strings.Contains(r.Text(), "different host: "+other.URL+"/landing") || !strings.Contains(r.Text(), "call WebFetch again") {
		t.Errorf("result does not name the new URL:\n%s", r.Text())
	}
	if otherHits.Load() != 0 {
		t.Error("the cross-host redirect was followed")
	}
	if d := r.Display.(WebFetchDisplay); d.RedirectTo != other.URL+"/landing" || d.Status != http.StatusFound {
		t.Errorf("display %+v", d)
	}
}

func TestWebFetchCachesForFifteenMinutes(t *testing.T) {
	var hits atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		fmt.Fprintf(w, "version %d", n)
	})
	clock := &fakeClock{}
	wf := NewWebFetch(WebFetchOptions{Client: testClient(t), Now: clock.Now})
	if r := fetch(t, wf, srv.URL); !strings.Contains(r.Text(), "version 1") {
		t.Fatal(r.Text())
	}
	clock.Advance(14 * time.Minute)
	r := fetch(t, wf, srv.URL)
	if !strings.Contains(r.Text(), "version 1") || !r.Display.(WebFetchDisplay).Cached || hits.Load() != 1 {
		t.Errorf("not served from cache within 15 minutes (hits %d):\n%s", hits.Load(), r.Text())
	}
	clock.Advance(2 * time.Minute)
	r = fetch(t, wf, srv.URL)
	if !strings.Contains(r.Text(), "version 2") || r.Display.(WebFetchDisplay).Cached {
		t.Errorf("stale cache entry served after 16 minutes:\n%s", r.Text())
	}
}

func TestWebFetchSizeCap(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("a", 5000)+"END")
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t), MaxBytes: 1000}), srv.URL)
	if r.IsError || strings.Contains(r.Text(), "END") || !strings.Contains(r.Text(), "longer than 1000 bytes") {
		t.Errorf("cap not applied:\n%.200s", r.Text())
	}
	if d := r.Display.(WebFetchDisplay); d.Bytes != 1000 {
		t.Errorf("read %d bytes", d.Bytes)
	}
}

func TestWebFetchMaxChars(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("é", 500))
	})
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t), MaxChars: 100}), srv.URL)
	if !strings.Contains(r.Text(), strings.Repeat("é", 100)+"\n\n[Content truncated: showing the first 100 of 500 characters.]") {
		t.Errorf("not truncated to 100 characters:\n%s", r.Text())
	}
}

func TestWebFetchRejectsBadURLs(t *testing.T) {
	wf := NewWebFetch(WebFetchOptions{Client: testClient(t)})
	for url, want := range map[string]string{
		"file:///etc/passwd":       `unsupported URL scheme "file"`,
		"ftp://example.com/x":      `unsupported URL scheme "ftp"`,
		"javascript:alert(1)":      "unsupported URL scheme",
		"https://":                 "no host",
		"https://u:p@example.com/": "credentials",
		"https://example.com/%zz":  "invalid URL",
		"https://example.com/" + strings.Repeat("a", 2001): "longer than 2000",
	} {
		r := fetch(t, wf, url)
		if !r.IsError || !strings.Contains(r.Text(), want) {
			t.Errorf("%.40s: got %q, want an error with %q", url, r.Text(), want)
		}
	}
}

// recordingTransport answers every request itself and remembers its URL.
type recordingTransport struct{ urls []string }

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.urls = append(rt.urls, req.URL.String())
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/plain"}},
		Body:       io.NopCloser(strings.NewReader("ok")),
		Request:    req,
	}, nil
}

func TestWebFetchUpgradesHTTPExceptLocalhost(t *testing.T) {
	rt := &recordingTransport{}
	wf := NewWebFetch(WebFetchOptions{Client: &http.Client{Transport: rt}})
	fetch(t, wf, "http://example.com/docs#section")
	fetch(t, wf, "http://localhost:8080/x")
	want := []string{"https://example.com/docs", "http://localhost:8080/x"}
	if strings.Join(rt.urls, " ") != strings.Join(want, " ") {
		t.Errorf("requested %q, want %q", rt.urls, want)
	}
}

func TestWebFetchSummarize(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, testPage)
	})
	var gotMarkdown, gotPrompt string
	wf := NewWebFetch(WebFetchOptions{Client: testClient(t), Summarize: func(ctx context.Context, markdown, prompt string) (string, error) {
		gotMarkdown, gotPrompt = markdown, prompt
		return "It is a welcome page.", nil
	}})
	r := fetch(t, wf, srv.URL)
	if !strings.Contains(r.Text(), "It is a welcome page.") || strings.Contains(r.Text(), "the intro") {
		t.Errorf("result is not the summary:\n%s", r.Text())
	}
	if !strings.Contains(gotMarkdown, "# Welcome") || gotPrompt != "what is it about?" {
		t.Errorf("summarizer got markdown %q, prompt %q", gotMarkdown, gotPrompt)
	}

	failing := NewWebFetch(WebFetchOptions{Client: testClient(t), Summarize: func(context.Context, string, string) (string, error) {
		return "", errors.New("model unavailable")
	}})
	r = fetch(t, failing, srv.URL)
	if r.IsError || !strings.Contains(r.Text(), "model unavailable") || !strings.Contains(r.Text(), "# Welcome") {
		t.Errorf("a failed summary should fall back to the page:\n%s", r.Text())
	}
}

func TestWebFetchHTTPErrorsAndBinary(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.Error(w, "no such page", http.StatusNotFound)
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n..."))
		}
	})
	wf := NewWebFetch(WebFetchOptions{Client: testClient(t)})
	if r := fetch(t, wf, srv.URL+"/missing"); !r.IsError || !strings.Contains(r.Text(), "HTTP 404") || !strings.Contains(r.Text(), "no such page") {
		t.Errorf("404: %s", r.Text())
	}
	if r := fetch(t, wf, srv.URL+"/image"); !r.IsError || !strings.Contains(r.Text(), "image/png is not text") {
		t.Errorf("binary: %s", r.Text())
	}
}

func TestWebFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	start := time.Now()
	r := fetch(t, NewWebFetch(WebFetchOptions{Client: testClient(t), Timeout: 100 * time.Millisecond}), srv.URL)
	if !r.IsError || !strings.Contains(r.Text(), "no answer within 100ms") {
		t.Errorf("got %s", r.Text())
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("timeout took %s", time.Since(start))
	}
}
