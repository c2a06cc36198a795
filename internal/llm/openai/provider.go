// Package openai is the llm.Provider for the OpenAI Chat Completions API and
// the servers that copy it (DeepSeek, OpenRouter, Ollama, vLLM, llama.cpp,
// LM Studio). It streams only, over the official SDK's transport, and reads
// the stream leniently, since each compatible server bends the format a
// little differently.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/coda-cli/coda/internal/llm"
)

// DefaultBaseURL is the OpenAI API.
const DefaultBaseURL = "https://api.openai.com/v1"

// responseHeaderTimeout bounds the wait for response headers on the default
// HTTP client, so a server that accepts the connection and never answers
// fails instead of hanging; it does not limit a stream once it has begun.
const responseHeaderTimeout = 10 * time.Minute

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root; "" means DefaultBaseURL. Reading
	// OPENAI_BASE_URL is the caller's business: the provider reads no
	// environment variables.
	BaseURL string
	// APIKey is sent as a bearer token. Local servers need none; with ""
	// no Authorization header is sent.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
	// HTTPClient carries the requests; nil means a client like
	// http.DefaultClient with a response-header timeout.
	HTTPClient *http.Client
	// Name is the provider's key, reported by Name; "" means "openai".
	Name string
}

// Provider streams answers from a Chat Completions endpoint.
type Provider struct {
	name    string
	service openai.ChatCompletionService
	// maxCompletionTokens is set for OpenAI itself, which deprecated
	// max_tokens; compatible servers may know only max_tokens.
	maxCompletionTokens bool
	configErr           error
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for cfg. A malformed BaseURL is reported by the
// first Stream call.
func New(cfg Config) *Provider {
	p := &Provider{name: cfg.Name}
	if p.name == "" {
		p.name = "openai"
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		err = errors.New("want an http or https URL")
	}
	if err != nil {
		p.configErr = fmt.Errorf("base URL %q: %w", base, err)
		return p
	}
	p.maxCompletionTokens = u.Hostname() == "api.openai.com"

	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	// The service is built from explicit options only: openai.NewClient
	// would read OPENAI_* variables behind the caller's back. Retries are
	// the agent loop's decision, not the SDK's.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	p.service = openai.NewChatCompletionService(opts...)
	return p
}

func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		return &http.Client{Transport: t}
	}
	return &http.Client{}
}

// Name is the provider's key in settings and model names.
func (p *Provider) Name() string { return p.name }

// Stream sends req and returns its answer as a stream of events. Failures
// before the answer begins are returned here: ctx.Err() when ctx ended,
// otherwise an *llm.Error.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if p.configErr != nil {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Message: p.configErr.Error(), Err: p.configErr}
	}
	params := buildParams(req, p.maxCompletionTokens)
	var res *http.Response
	// The SDK's own stream iterator is not used: it cannot tell a stream
	// that ended with [DONE] from one cut off, and it decodes chunks more
	// strictly than compatible servers allow. The raw response is decoded
	// below instead.
	sdk := p.service.NewStreaming(ctx, params, option.WithResponseInto(&res))
	if err := sdk.Err(); err != nil {
		return nil, startError(ctx, err, res)
	}
	if res == nil || res.Body == nil {
		return nil, &llm.Error{Kind: llm.ErrConnection, Message: "no response from the server"}
	}
	if media, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); media == "application/json" {
		// A server that answers 200 with JSON did not stream: usually an
		// error in a success status.
		defer res.Body.Close()
		body, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		if err != nil {
			return nil, startError(ctx, err, nil)
		}
		e := streamError(body)
		e.Status = res.StatusCode
		return nil, e
	}
	return newStream(ctx, ssestream.NewDecoder(res), req.Model), nil
}

// startError classifies a failure to start the stream.
func startError(ctx context.Context, err error, res *http.Response) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		res = apiErr.Response
	}
	if res != nil && res.StatusCode >= 400 {
		// The SDK has read the body and left a copy in res.Body.
		var body []byte
		if res.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
			res.Body.Close()
		}
		e := httpError(res.StatusCode, res.Header, body)
		e.Err = err
		return e
	}
	return connectionError(err)
}
