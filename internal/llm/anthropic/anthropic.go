// Package anthropic implements llm.Provider over the Anthropic Messages API,
// streaming only, using the official Go SDK for transport and wire types.
//
// The SDK is configured to stay out of the way: no retries (the agent loop
// owns the one retry policy), nothing read from the environment (the caller
// resolves keys and base URLs), no OpenTelemetry spans.
package anthropic

import (
	"context"
	"net/http"
	"sort"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/coda-cli/coda/internal/llm"
)

// APIVersion is the anthropic-version header sent on every request. The SDK
// defaults to a newer version; coda speaks the long-stable one its protocol
// notes describe. Config.Headers may override it.
const APIVersion = "2023-06-01"

// responseHeaderTimeout bounds the wait for the status line of a response,
// so a server that accepts the connection and never answers cannot hang a
// turn. It does not limit the streamed body.
const responseHeaderTimeout = 10 * time.Minute

// Config says where and how to reach the API.
type Config struct {
	// BaseURL is the API root, e.g. https://api.anthropic.com. Empty means
	// the SDK default. ANTHROPIC_BASE_URL handling is the caller's.
	BaseURL string
	// APIKey is sent as x-api-key. Empty sends no key.
	APIKey string
	// Headers are extra headers sent on every request (anthropic-beta,
	// authorization for proxies, ...). They are applied last, so they can
	// override anthropic-version too.
	Headers map[string]string
	// HTTPClient is optional; nil uses a client with a response-header
	// timeout.
	HTTPClient *http.Client
}

// Provider streams answers from the Anthropic Messages API.
type Provider struct {
	client sdk.Client
}

// New returns a provider for cfg.
func New(cfg Config) *Provider {
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = defaultHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
		option.WithHeader("anthropic-version", APIVersion),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		// Not option.WithAPIKey: this SDK sends that as a bearer token,
		// which the API only accepts for OAuth tokens.
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	}
	for _, name := range sortedKeys(cfg.Headers) {
		opts = append(opts, option.WithHeader(name, cfg.Headers[name]))
	}
	return &Provider{client: sdk.NewClient(opts...)}
}

// Name is the provider's key in settings and model names.
func (p *Provider) Name() string { return "anthropic" }

// Stream sends req and returns its answer as a stream of llm events. An
// HTTP error status or a failure to connect comes back here as *llm.Error;
// a cancelled ctx as ctx.Err().
func (p *Provider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	params := buildParams(req)
	streamCtx, cancel := context.WithCancel(ctx)
	raw := p.client.Messages.NewStreaming(streamCtx, params)
	if err := raw.Err(); err != nil {
		cancel()
		raw.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, convertError(err)
	}
	return newStream(ctx, cancel, raw), nil
}

func defaultHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{Transport: http.DefaultTransport}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return &http.Client{Transport: t}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
