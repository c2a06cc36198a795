package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"time"
)

// Token estimates and the prompt-cache model.
//
// A prompt is a chain of parts in cache order (Anthropic: each tool, each
// system block, each message block; OpenAI: the tool list, then each whole
// message). Every part carries the hash of the prefix ending with it and its
// estimated tokens: ceil(bytes/4) of its canonical JSON.

const (
	cacheTTL         = 5 * time.Minute
	cacheTTLLong     = time.Hour
	cacheLookback    = 20   // earlier block boundaries checked per breakpoint
	openAIMinCached  = 1024 // OpenAI caches only prompts at least this long
	maxCacheControls = 4
)

type prompt struct {
	seed         [32]byte // identifies API and model: caches are per model
	model        string
	stream       bool
	includeUsage bool // OpenAI stream_options.include_usage
	parts        []part
	breakpoints  []breakpoint // ascending, at most one per part
}

type part struct {
	prefix [32]byte // hash of every part up to and including this one
	tokens int
}

// breakpoint is a cache_control marker on the part at index at.
type breakpoint struct {
	at  int
	ttl time.Duration
}

func newPrompt(api, model string) *prompt {
	return &prompt{model: model, seed: sha256.Sum256([]byte(api + "\x00" + model))}
}

func (p *prompt) tokens() int {
	n := 0
	for _, pt := range p.parts {
		n += pt.tokens
	}
	return n
}

// add appends a part whose identity is key and whose size is tokens.
func (p *prompt) add(key []byte, tokens int) int {
	prev := p.seed
	if len(p.parts) > 0 {
		prev = p.parts[len(p.parts)-1].prefix
	}
	h := sha256.New()
	h.Write(prev[:])
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	var pt part
	h.Sum(pt.prefix[:0])
	pt.tokens = tokens
	p.parts = append(p.parts, pt)
	return len(p.parts) - 1
}

// mark records a breakpoint on part at, keeping the longer TTL when a part
// carries several markers.
func (p *prompt) mark(at int, ttl time.Duration) {
	if n := len(p.breakpoints); n > 0 && p.breakpoints[n-1].at == at {
		p.breakpoints[n-1].ttl = max(p.breakpoints[n-1].ttl, ttl)
		return
	}
	p.breakpoints = append(p.breakpoints, breakpoint{at: at, ttl: ttl})
}

func estimateTokens(bytes int) int { return (bytes + 3) / 4 }

// accounting is the usage reported for one answer.
type accounting struct {
	usage      Usage
	creation1h int // part of CacheCreationInputTokens written with the 1h TTL
	thinking   int // part of OutputTokens spent thinking
}

type cacheEntry struct {
	lastUsed time.Time
	ttl      time.Duration
}

// promptCache holds prefix hashes written by earlier requests of both APIs;
// each API seeds its chains differently, so they never collide.
type promptCache struct {
	entries map[[32]byte]cacheEntry
}

func newPromptCache() promptCache {
	return promptCache{entries: make(map[[32]byte]cacheEntry)}
}

func (c promptCache) valid(k [32]byte, now time.Time) bool {
	e, ok := c.entries[k]
	if !ok {
		return false
	}
	if now.Sub(e.lastUsed) >= e.ttl {
		delete(c.entries, k)
		return false
	}
	return true
}

// touch writes or refreshes an entry.
func (c promptCache) touch(k [32]byte, now time.Time, ttl time.Duration) {
	if e, ok := c.entries[k]; ok && now.Sub(e.lastUsed) < e.ttl {
		ttl = max(ttl, e.ttl)
	}
	c.entries[k] = cacheEntry{lastUsed: now, ttl: ttl}
}

// accountAnthropic applies Anthropic's explicit caching: each breakpoint
// looks for the longest earlier-written prefix at itself and up to 20 block
// boundaries before it; what it finds is read, the rest up to the last
// breakpoint is written, and the tail after it is plain input.
func (s *Server) accountAnthropic(p *prompt) accounting {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	readEnd := -1
	for _, bp := range p.breakpoints {
		for j := bp.at; j >= 0 && j >= bp.at-cacheLookback; j-- {
			if s.cache.valid(p.parts[j].prefix, now) {
				readEnd = max(readEnd, j)
				break
			}
		}
	}
	if readEnd >= 0 {
		e := s.cache.entries[p.parts[readEnd].prefix]
		s.cache.touch(p.parts[readEnd].prefix, now, e.ttl)
	}
	var a accounting
	next := 0 // index into p.breakpoints of the breakpoint closing part i
	for i, pt := range p.parts {
		for next < len(p.breakpoints) && p.breakpoints[next].at < i {
			next++
		}
		switch {
		case i <= readEnd:
			a.usage.CacheReadInputTokens += pt.tokens
		case next < len(p.breakpoints):
			a.usage.CacheCreationInputTokens += pt.tokens
			if p.breakpoints[next].ttl == cacheTTLLong {
				a.creation1h += pt.tokens
			}
		default:
			a.usage.InputTokens += pt.tokens
		}
	}
	for _, bp := range p.breakpoints {
		s.cache.touch(p.parts[bp.at].prefix, now, bp.ttl)
	}
	return a
}

// accountOpenAI applies OpenAI's automatic caching: the longest prefix of
// whole parts seen in an earlier request is cached when it reaches 1024
// tokens. Every prefix of this request becomes available to later ones.
func (s *Server) accountOpenAI(p *prompt) accounting {
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	hit := -1
	for i := len(p.parts) - 1; i >= 0; i-- {
		if s.cache.valid(p.parts[i].prefix, now) {
			hit = i
			break
		}
	}
	cached, total := 0, 0
	for i, pt := range p.parts {
		total += pt.tokens
		if i == hit {
			cached = total
		}
		s.cache.touch(pt.prefix, now, cacheTTL)
	}
	if cached < openAIMinCached {
		cached = 0
	}
	return accounting{usage: Usage{InputTokens: total - cached, CacheReadInputTokens: cached}}
}

// withOutput adds the turn's output, or replaces everything with the
// turn's scripted usage.
func (a accounting) withOutput(t Turn) accounting {
	out, thinking := t.outputTokens()
	if t.usage != nil {
		return accounting{
			usage:    Usage{InputTokens: t.usage.input, OutputTokens: t.usage.output},
			thinking: min(thinking, t.usage.output),
		}
	}
	a.usage.OutputTokens = out
	a.thinking = thinking
	return a
}

// canonical re-encodes raw with sorted keys and without cache_control
// markers, so equal content hashes and counts the same wherever a
// breakpoint sits. It returns the TTL of each marker it removed. Tool
// inputs and schemas are user data and are left alone.
func canonical(raw json.RawMessage) ([]byte, []time.Duration) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, nil
	}
	var ttls []time.Duration
	v = stripCacheControl(v, &ttls)
	b, err := marshalJSON(v)
	if err != nil {
		return raw, ttls
	}
	return b, ttls
}

func stripCacheControl(v any, ttls *[]time.Duration) any {
	switch x := v.(type) {
	case map[string]any:
		if cc, ok := x["cache_control"]; ok {
			delete(x, "cache_control")
			if cc != nil {
				*ttls = append(*ttls, ttlOf(cc))
			}
		}
		for k, child := range x {
			if k == "input" || k == "input_schema" {
				continue
			}
			x[k] = stripCacheControl(child, ttls)
		}
	case []any:
		for i, child := range x {
			x[i] = stripCacheControl(child, ttls)
		}
	}
	return v
}

func ttlOf(cc any) time.Duration {
	if m, ok := cc.(map[string]any); ok && m["ttl"] == "1h" {
		return cacheTTLLong
	}
	return cacheTTL
}
