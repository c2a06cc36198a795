package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coda-cli/coda/internal/htmlmd"
)

//go:embed webfetch.md
var webFetchDescription string

// WebFetch defaults.
const (
	webFetchTimeout      = 30 * time.Second
	webFetchMaxBytes     = 10 << 20
	webFetchMaxChars     = 100_000
	webFetchCacheTTL     = 15 * time.Minute
	webFetchCacheEntries = 64
	webFetchMaxRedirects = 10
	webFetchUserAgent    = "coda-User/1.0 (WebFetch; +https://github.com/coda-cli/coda)"
)

// WebFetchOptions configure the WebFetch tool; zero values take defaults.
type WebFetchOptions struct {
	// Client makes the requests (default: a plain http.Client). Its
	// redirect policy is replaced: WebFetch follows same-host redirects only.
	Client *http.Client
	// Summarize, when set, answers prompt from the page's Markdown with a
	// small model; otherwise the Markdown itself is returned.
	Summarize func(ctx context.Context, markdown, prompt string) (string, error)
	// MaxChars caps the Markdown returned without Summarize (default 100,000).
	MaxChars int
	// Now is the clock of the 15-minute cache (default time.Now).
	Now func() time.Time
	// Timeout bounds one fetch, body included (default 30 s).
	Timeout time.Duration
	// MaxBytes caps the body read; longer pages are cut (default 10 MB).
	MaxBytes int64
}

type webFetchInput struct {
	URL    string `json:"url" jsonschema:"format=uri" jsonschema_description:"The fully formed http(s) URL to fetch."`
	Prompt string `json:"prompt" jsonschema_description:"What to extract or answer from the page."`
}

// WebFetchDisplay is what the UI shows for a WebFetch call.
type WebFetchDisplay struct {
	URL         string // the URL fetched (after the https upgrade)
	FinalURL    string // after same-host redirects
	Status      int
	ContentType string
	Bytes       int
	Cached      bool
	RedirectTo  string // a cross-host redirect that was not followed
	Duration    time.Duration
}

// WebFetch fetches a web page and returns it as Markdown (or a summary of
// it). It keeps pages for 15 minutes.
type WebFetch struct {
	opts   WebFetchOptions
	client *http.Client

	mu    sync.Mutex
	cache map[string]webPage
}

// webPage is a fetched, converted page.
type webPage struct {
	finalURL    string
	status      int
	contentType string
	bytes       int
	cut         bool // the body was longer than MaxBytes
	content     string
	fetched     time.Time
}

// NewWebFetch returns the WebFetch tool.
func NewWebFetch(opts WebFetchOptions) *WebFetch {
	if opts.MaxChars <= 0 {
		opts.MaxChars = webFetchMaxChars
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = webFetchTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = webFetchMaxBytes
	}
	client := &http.Client{}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	client.CheckRedirect = checkSameHostRedirect
	return &WebFetch{opts: opts, client: client, cache: make(map[string]webPage)}
}

func (*WebFetch) Name() string                               { return "WebFetch" }
func (*WebFetch) Description() string                        { return webFetchDescription }
func (*WebFetch) InputSchema() json.RawMessage               { return SchemaFor[webFetchInput]() }
func (*WebFetch) ReadOnly() bool                             { return true }
func (*WebFetch) ConcurrencySafe(input json.RawMessage) bool { return true }

func (w *WebFetch) Run(ctx context.Context, call Call) Result {
	start := time.Now()
	in, err := Decode[webFetchInput](call.Input)
	if err != nil {
		return Errorf("WebFetch: %v", err)
	}
	u, err := fetchableURL(in.URL)
	if err != nil {
		return Errorf("WebFetch: %v", err)
	}
	key := u.String()
	disp := WebFetchDisplay{URL: key}

	page, cached := w.cached(key)
	if !cached {
		var redirect string
		page, redirect, err = w.fetch(ctx, u)
		if err != nil {
			return Errorf("WebFetch: %v", err)
		}
		if redirect != "" {
			disp.RedirectTo, disp.Status, disp.Duration = redirect, page.status, time.Since(start)
			text := fmt.Sprintf("%s redirected (HTTP %d) to a different host: %s\nThe redirect was not followed. To read that page, call WebFetch again with url %q and the same prompt.", key, page.status, redirect, redirect)
			return Result{Content: TextResult(text).Content, Display: disp}
		}
		if page.status < 200 || page.status > 299 {
			return Result{
				Content: TextResult(fmt.Sprintf("WebFetch: %s answered HTTP %d %s.\n\n%s", page.finalURL, page.status, http.StatusText(page.status), firstChars(page.content, 2000))).Content,
				IsError: true,
				Display: WebFetchDisplay{URL: key, FinalURL: page.finalURL, Status: page.status, ContentType: page.contentType, Bytes: page.bytes, Duration: time.Since(start)},
			}
		}
		w.store(key, page)
	}
	disp.FinalURL, disp.Status, disp.ContentType, disp.Bytes, disp.Cached = page.finalURL, page.status, page.contentType, page.bytes, cached

	var msg strings.Builder
	fmt.Fprintf(&msg, "Content of %s", page.finalURL)
	if page.cut {
		fmt.Fprintf(&msg, " (the page was longer than %d bytes; only its beginning was read)", w.opts.MaxBytes)
	}
	msg.WriteString(":\n\n")
	answered := false
	if w.opts.Summarize != nil {
		summary, err := w.opts.Summarize(ctx, page.content, in.Prompt)
		switch {
		case err == nil:
			msg.WriteString(summary)
			answered = true
		case ctx.Err() != nil:
			return Errorf("WebFetch: interrupted while summarising %s", page.finalURL)
		default:
			fmt.Fprintf(&msg, "[Summarising the page failed (%v); its text follows.]\n\n", err)
		}
	}
	if !answered {
		msg.WriteString(limitChars(page.content, w.opts.MaxChars))
	}
	disp.Duration = time.Since(start)
	return Result{Content: TextResult(msg.String()).Content, Display: disp}
}

// fetchableURL checks raw and upgrades http to https, except for the local
// machine.
func fetchableURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > 2000 {
		return nil, errors.New("the URL is longer than 2000 characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("unsupported URL scheme %q in %q: only http and https URLs can be fetched", u.Scheme, raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("the URL %q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("the URL %q carries credentials; remove them", raw)
	}
	if u.Scheme == "http" && !isLocalHost(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment = ""
	return u, nil
}

func isLocalHost(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// checkSameHostRedirect follows redirects within the original host and
// hands any other one back to Run unfollowed.
func checkSameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= webFetchMaxRedirects {
		return fmt.Errorf("stopped after %d redirects", webFetchMaxRedirects)
	}
	if !sameHost(req.URL, via[0].URL) {
		return http.ErrUseLastResponse
	}
	return nil
}

// sameHost compares host names ignoring case and a "www." prefix, and
// explicit ports, so an http-to-https move of the same site counts as
// staying.
func sameHost(a, b *url.URL) bool {
	name := func(u *url.URL) string {
		return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	}
	return name(a) == name(b) && a.Port() == b.Port()
}

func (w *WebFetch) fetch(ctx context.Context, u *url.URL) (page webPage, redirect string, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page, "", fmt.Errorf("build request for %s: %v", u, err)
	}
	req.Header.Set("User-Agent", webFetchUserAgent)
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5")
	resp, err := w.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return page, "", fmt.Errorf("fetch %s: no answer within %s", u, w.opts.Timeout)
		}
		return page, "", fmt.Errorf("fetch %s: %v", u, err)
	}
	defer resp.Body.Close()
	page.finalURL = resp.Request.URL.String()
	page.status = resp.StatusCode
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		target, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return page, "", fmt.Errorf("%s redirected to an invalid location %q", page.finalURL, loc)
		}
		return page, target.String(), nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, w.opts.MaxBytes+1))
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return page, "", fmt.Errorf("read %s: not complete within %s", page.finalURL, w.opts.Timeout)
		}
		return page, "", fmt.Errorf("read %s: %v", page.finalURL, err)
	}
	if int64(len(body)) > w.opts.MaxBytes {
		body, page.cut = body[:w.opts.MaxBytes], true
	}
	page.bytes = len(body)
	page.content, page.contentType, err = pageText(body, resp.Header.Get("Content-Type"), resp.Request.URL)
	if err != nil {
		return page, "", fmt.Errorf("%s: %v", page.finalURL, err)
	}
	page.fetched = w.opts.Now()
	return page, "", nil
}

// pageText turns a body into text a model reads: HTML becomes Markdown,
// other text passes through, binary content is refused.
func pageText(body []byte, contentType string, base *url.URL) (text, mediaType string, err error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType == "" {
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	if cs := strings.ToLower(params["charset"]); cs == "iso-8859-1" || cs == "latin1" || cs == "windows-1252" {
		body = latin1ToUTF8(body)
	}
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		p, err := htmlmd.Convert(bytes.NewReader(body), base)
		if err != nil {
			return "", mediaType, err
		}
		md := p.Markdown
		if p.Title != "" && !strings.HasPrefix(md, "# ") {
			md = "# " + p.Title + "\n\n" + md
		}
		return md, mediaType, nil
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", mediaType == "application/xml",
		mediaType == "application/javascript", mediaType == "application/x-yaml",
		mediaType == "application/yaml", mediaType == "application/toml",
		strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return strings.ToValidUTF8(string(body), "\uFFFD"), mediaType, nil
	}
	return "", mediaType, fmt.Errorf("content type %s is not text; WebFetch reads only HTML and text pages", mediaType)
}

func latin1ToUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}

func (w *WebFetch) cached(key string) (webPage, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.cache[key]
	if !ok || w.opts.Now().Sub(p.fetched) >= webFetchCacheTTL {
		return webPage{}, false
	}
	return p, true
}

// store caches a page, dropping expired pages and, beyond the entry limit,
// the oldest ones.
func (w *WebFetch) store(key string, p webPage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.opts.Now()
	for k, old := range w.cache {
		if now.Sub(old.fetched) >= webFetchCacheTTL {
			delete(w.cache, k)
		}
	}
	w.cache[key] = p
	if len(w.cache) <= webFetchCacheEntries {
		return
	}
	keys := make([]string, 0, len(w.cache))
	for k := range w.cache {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := w.cache[keys[i]].fetched, w.cache[keys[j]].fetched
		if !a.Equal(b) {
			return a.Before(b)
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:len(keys)-webFetchCacheEntries] {
		delete(w.cache, k)
	}
}

// limitChars keeps the first n characters of s, saying so when it cuts.
func limitChars(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	return firstRunes(s, n) + fmt.Sprintf("\n\n[Content truncated: showing the first %d of %d characters.]", n, total)
}

func firstChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return firstRunes(s, n) + "…"
}
