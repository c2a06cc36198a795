package llm

import (
	"fmt"
	"sort"
	"strings"
)

// ModelInfo is what coda needs to know about a model: where it lives, how
// much context it takes, and what it costs (USD per million tokens).
type ModelInfo struct {
	Provider        string  `json:"provider"`
	ID              string  `json:"id"`
	ContextWindow   int     `json:"contextWindow"`
	MaxOutputTokens int     `json:"maxOutputTokens"`
	InputPrice      float64 `json:"inputPrice"`
	OutputPrice     float64 `json:"outputPrice"`
	CacheReadPrice  float64 `json:"cacheReadPrice"`
	CacheWritePrice float64 `json:"cacheWritePrice"`
	Thinking        bool    `json:"thinking,omitempty"` // supports extended thinking
}

// Key is the model's "provider/id" name.
func (m ModelInfo) Key() string { return m.Provider + "/" + m.ID }

// Cost is the price of u in USD.
func (m ModelInfo) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*m.InputPrice +
		float64(u.OutputTokens)*m.OutputPrice +
		float64(u.CacheReadInputTokens)*m.CacheReadPrice +
		float64(u.CacheCreationInputTokens)*m.CacheWritePrice) / 1e6
}

// ModelOverride changes or adds a model through settings; nil fields keep
// the catalog's value.
type ModelOverride struct {
	ContextWindow   *int     `json:"contextWindow,omitempty"`
	MaxOutputTokens *int     `json:"maxOutputTokens,omitempty"`
	InputPrice      *float64 `json:"inputPrice,omitempty"`
	OutputPrice     *float64 `json:"outputPrice,omitempty"`
	CacheReadPrice  *float64 `json:"cacheReadPrice,omitempty"`
	CacheWritePrice *float64 `json:"cacheWritePrice,omitempty"`
}

// Defaults for a model the catalog has never heard of (a local model behind
// an OpenAI-compatible server): conservative window, free.
const (
	unknownContextWindow = 128000
	unknownMaxOutput     = 8192
)

// Catalog maps model names to their facts. It is a value owned by the app,
// never a global, so settings can change it per run.
type Catalog struct {
	models    map[string]ModelInfo // by Key()
	aliases   map[string]string    // short name -> Key()
	providers map[string]bool      // provider names model keys may start with
}

func anthropicModel(id string, window, out int, in, outP float64) ModelInfo {
	return ModelInfo{Provider: "anthropic", ID: id, ContextWindow: window, MaxOutputTokens: out,
		InputPrice: in, OutputPrice: outP, CacheReadPrice: in * 0.1, CacheWritePrice: in * 1.25, Thinking: true}
}

func openaiModel(id string, window, out int, in, outP, cached float64) ModelInfo {
	return ModelInfo{Provider: "openai", ID: id, ContextWindow: window, MaxOutputTokens: out,
		InputPrice: in, OutputPrice: outP, CacheReadPrice: cached}
}

// NewCatalog returns the built-in catalog.
func NewCatalog() *Catalog {
	c := &Catalog{models: map[string]ModelInfo{}, aliases: map[string]string{},
		providers: map[string]bool{"anthropic": true, "openai": true}}
	for _, m := range []ModelInfo{
		anthropicModel("claude-opus-4-5", 200000, 64000, 5, 25),
		anthropicModel("claude-sonnet-4-5", 200000, 64000, 3, 15),
		anthropicModel("claude-haiku-4-5", 200000, 64000, 1, 5),
		anthropicModel("claude-opus-4-1", 200000, 32000, 15, 75),
		anthropicModel("claude-sonnet-4-0", 200000, 64000, 3, 15),
		anthropicModel("claude-3-5-haiku-latest", 200000, 8192, 0.8, 4),
		openaiModel("gpt-5", 400000, 128000, 1.25, 10, 0.125),
		openaiModel("gpt-5-mini", 400000, 128000, 0.25, 2, 0.025),
		openaiModel("gpt-4.1", 1047576, 32768, 2, 8, 0.5),
		openaiModel("gpt-4.1-mini", 1047576, 32768, 0.4, 1.6, 0.1),
		openaiModel("gpt-4o", 128000, 16384, 2.5, 10, 1.25),
		openaiModel("gpt-4o-mini", 128000, 16384, 0.15, 0.6, 0.075),
		openaiModel("o3", 200000, 100000, 2, 8, 0.5),
		openaiModel("o4-mini", 200000, 100000, 1.1, 4.4, 0.275),
	} {
		c.models[m.Key()] = m
	}
	for alias, key := range map[string]string{
		"opus":   "anthropic/claude-opus-4-5",
		"sonnet": "anthropic/claude-sonnet-4-5",
		"haiku":  "anthropic/claude-haiku-4-5",
	} {
		c.aliases[alias] = key
	}
	return c
}

// AddProvider makes "name/model" resolve to provider name (a provider
// configured in settings, such as "ollama").
func (c *Catalog) AddProvider(name string) { c.providers[name] = true }

// Override applies a settings entry keyed "provider/model", adding the
// model when the catalog lacks it.
func (c *Catalog) Override(key string, o ModelOverride) error {
	provider, id, ok := strings.Cut(key, "/")
	if !ok || provider == "" || id == "" {
		return fmt.Errorf("model %q: expected provider/model", key)
	}
	m, known := c.models[key]
	if !known {
		m = ModelInfo{Provider: provider, ID: id, ContextWindow: unknownContextWindow, MaxOutputTokens: unknownMaxOutput}
	}
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setf := func(dst *float64, src *float64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&m.ContextWindow, o.ContextWindow)
	set(&m.MaxOutputTokens, o.MaxOutputTokens)
	setf(&m.InputPrice, o.InputPrice)
	setf(&m.OutputPrice, o.OutputPrice)
	setf(&m.CacheReadPrice, o.CacheReadPrice)
	setf(&m.CacheWritePrice, o.CacheWritePrice)
	if m.ContextWindow <= 0 || m.MaxOutputTokens <= 0 {
		return fmt.Errorf("model %q: contextWindow and maxOutputTokens must be positive", key)
	}
	c.models[key] = m
	return nil
}

// Resolve finds a model by "provider/model", alias, or bare id. A
// "provider/model" the catalog lacks resolves to conservative defaults, so
// any model a compatible server offers can be used.
func (c *Catalog) Resolve(name string) (ModelInfo, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return ModelInfo{}, fmt.Errorf("no model given")
	}
	if key, ok := c.aliases[name]; ok {
		name = key
	}
	if m, ok := c.models[name]; ok {
		return m, nil
	}
	if provider, id, ok := strings.Cut(name, "/"); ok && provider != "" && id != "" {
		if !c.providers[provider] {
			// Model ids of some servers contain slashes ("openai/meta/llama");
			// a first part that is no provider means the name is bare.
			return c.resolveBare(name)
		}
		return ModelInfo{Provider: provider, ID: id, ContextWindow: unknownContextWindow, MaxOutputTokens: unknownMaxOutput}, nil
	}
	return c.resolveBare(name)
}

func (c *Catalog) resolveBare(id string) (ModelInfo, error) {
	var found []ModelInfo
	for _, m := range c.models {
		if m.ID == id {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		switch {
		case strings.HasPrefix(id, "claude"):
			return ModelInfo{Provider: "anthropic", ID: id, ContextWindow: 200000, MaxOutputTokens: 32000, Thinking: true}, nil
		case strings.HasPrefix(id, "gpt-"), strings.HasPrefix(id, "o1"), strings.HasPrefix(id, "o3"), strings.HasPrefix(id, "o4"):
			return ModelInfo{Provider: "openai", ID: id, ContextWindow: unknownContextWindow, MaxOutputTokens: unknownMaxOutput}, nil
		}
		return ModelInfo{}, fmt.Errorf("unknown model %q: name it as provider/model, e.g. openai/%s", id, id)
	default:
		keys := make([]string, len(found))
		for i, m := range found {
			keys[i] = m.Key()
		}
		sort.Strings(keys)
		return ModelInfo{}, fmt.Errorf("model %q is ambiguous: use one of %s", id, strings.Join(keys, ", "))
	}
}

// Models lists the catalog sorted by key.
func (c *Catalog) Models() []ModelInfo {
	out := make([]ModelInfo, 0, len(c.models))
	for _, m := range c.models {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}
