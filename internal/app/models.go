package app

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/llm/anthropic"
	"github.com/coda-cli/coda/internal/llm/openai"
)

// ExitConfig is the exit code for a setup problem the user must fix
// (no API key, unknown model, bad settings), as distinct from a failed run.
const ExitConfig = 2

// ConfigError is a setup problem; Main exits with ExitConfig for it.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// default environment variables of the built-in provider kinds.
var providerEnv = map[string]struct{ key, url string }{
	"anthropic": {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
	"openai":    {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
}

// catalog builds the model catalog with the settings' overrides applied.
func catalog(s config.Settings) (*llm.Catalog, error) {
	c := llm.NewCatalog()
	for name := range s.Providers {
		c.AddProvider(name)
	}
	keys := make([]string, 0, len(s.Models))
	for k := range s.Models {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := c.Override(k, s.Models[k]); err != nil {
			return nil, configErrorf("settings \"models\": %v", err)
		}
	}
	return c, nil
}

// defaultModel picks a model when neither --model nor settings name one:
// the first provider with a key configured.
func defaultModel(s config.Settings, getenv func(string) string) (string, error) {
	if getenv("ANTHROPIC_API_KEY") != "" || providerKey(s, "anthropic", getenv) != "" {
		return "anthropic/claude-sonnet-4-5", nil
	}
	if getenv("OPENAI_API_KEY") != "" || providerKey(s, "openai", getenv) != "" || getenv("OPENAI_BASE_URL") != "" {
		return "openai/gpt-4.1", nil
	}
	return "", configErrorf("no API key configured: set ANTHROPIC_API_KEY (or OPENAI_API_KEY), " +
		"or add providers.<name>.apiKey to ~/.coda/settings.json")
}

func providerKey(s config.Settings, name string, getenv func(string) string) string {
	p := s.Providers[name]
	if p.APIKey != "" {
		return p.APIKey
	}
	if p.APIKeyEnv != "" {
		return getenv(p.APIKeyEnv)
	}
	return ""
}

// resolveModel turns a model name into a ready provider.
func resolveModel(name string, s config.Settings, c *llm.Catalog, getenv func(string) string) (agent.Model, error) {
	info, err := c.Resolve(name)
	if err != nil {
		return agent.Model{}, configErrorf("%v", err)
	}
	p, err := newProvider(info.Provider, s, getenv)
	if err != nil {
		return agent.Model{}, err
	}
	return agent.Model{Provider: p, Info: info}, nil
}

// newProvider builds the named provider from settings and environment.
func newProvider(name string, s config.Settings, getenv func(string) string) (llm.Provider, error) {
	ps := s.Providers[name]
	kind := ps.Type
	if kind == "" {
		kind = name
	}
	env, ok := providerEnv[kind]
	if !ok {
		return nil, configErrorf("provider %q: unknown type %q (use \"anthropic\" or \"openai\")", name, kind)
	}
	key := providerKey(s, name, getenv)
	if key == "" && ps.APIKeyEnv == "" {
		key = getenv(env.key)
	}
	baseURL := ps.BaseURL
	if baseURL == "" && name == kind {
		baseURL = getenv(env.url)
	}
	if key == "" {
		// Local OpenAI-compatible servers (Ollama, llama.cpp...) need no key;
		// the hosted APIs do.
		if kind == "anthropic" || baseURL == "" {
			keyVar := env.key
			if ps.APIKeyEnv != "" {
				keyVar = ps.APIKeyEnv
			}
			return nil, configErrorf("no API key for provider %q: set %s, or providers.%s.apiKey in ~/.coda/settings.json",
				name, keyVar, name)
		}
		key = "none"
	}
	switch kind {
	case "anthropic":
		return anthropic.New(anthropic.Config{BaseURL: baseURL, APIKey: key, Headers: ps.Headers}), nil
	default:
		return openai.New(openai.Config{BaseURL: baseURL, APIKey: key, Headers: ps.Headers, Name: name}), nil
	}
}

// splitTools parses --allowedTools style lists: comma or space separated,
// but commas and spaces inside parentheses belong to the rule.
func splitTools(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		flush := func(end int) {
			if t := strings.TrimSpace(v[start:end]); t != "" {
				out = append(out, t)
			}
		}
		for i, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')':
				depth = max(depth-1, 0)
			case (r == ',' || r == ' ') && depth == 0:
				flush(i)
				start = i + 1
			}
		}
		flush(len(v))
	}
	return out
}

func lookupEnv(k string) string { return os.Getenv(k) }
