package llmtest

import (
	"strings"
	"testing"
	"time"
)

// antUsageOf sends body and returns the usage the stream reported, after
// checking message_start and message_delta agree with the recorded usage.
func antUsageOf(t *testing.T, s *Server, body map[string]any) Usage {
	t.Helper()
	s.Enqueue(Reply(Text("ok")))
	events := mustEvents(t, antPost(t, s, body))
	start := events[0].json(t)["message"].(map[string]any)["usage"].(map[string]any)
	final := events[len(events)-2].json(t)["usage"].(map[string]any)
	u := Usage{
		InputTokens:              int(start["input_tokens"].(float64)),
		CacheCreationInputTokens: int(start["cache_creation_input_tokens"].(float64)),
		CacheReadInputTokens:     int(start["cache_read_input_tokens"].(float64)),
		OutputTokens:             int(final["output_tokens"].(float64)),
	}
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		if start[k] != final[k] {
			t.Errorf("%s: message_start %v, message_delta %v", k, start[k], final[k])
		}
	}
	reqs := s.Requests()
	if rec := reqs[len(reqs)-1].Usage; rec != u {
		t.Errorf("recorded usage %+v, streamed %+v", rec, u)
	}
	return u
}

func TestAnthropicCacheFollowsAGrowingConversation(t *testing.T) {
	s := NewServer(t)
	system := []any{cached(text("You are coda. " + strings.Repeat("Rules. ", 200)))}
	body := func(msgs ...map[string]any) map[string]any {
		b := antReq(msgs...)
		b["tools"] = []any{tool("read"), tool("ls")}
		b["system"] = system
		return b
	}

	first := antUsageOf(t, s, body(user([]any{cached(text("question one"))})))
	if first.CacheReadInputTokens != 0 || first.InputTokens != 0 || first.CacheCreationInputTokens < 400 {
		t.Errorf("first request %+v: everything up to the last breakpoint is written", first)
	}

	// The breakpoint moves to the newest message; the old one is found by
	// looking back from it.
	second := antUsageOf(t, s, body(
		user([]any{text("question one")}),
		assistant(text("answer one")),
		user([]any{cached(text("question two"))}),
	))
	if second.CacheReadInputTokens != first.TotalInput() {
		t.Errorf("second read %d, want the %d tokens the first wrote", second.CacheReadInputTokens, first.TotalInput())
	}
	if second.CacheCreationInputTokens == 0 || second.InputTokens != 0 ||
		second.CacheCreationInputTokens != second.TotalInput()-first.TotalInput() {
		t.Errorf("second %+v: only the new messages are written", second)
	}

	// Without a breakpoint on the messages, only tools and system hit.
	third := antUsageOf(t, s, body(user([]any{text("something else entirely")})))
	if third.CacheCreationInputTokens != 0 || third.InputTokens == 0 || third.CacheReadInputTokens >= first.TotalInput() || third.CacheReadInputTokens < 400 {
		t.Errorf("third %+v: tools and system read, the message is plain input", third)
	}

	// Changing the tools invalidates everything after them.
	b := body(user([]any{cached(text("question one"))}))
	b["tools"] = []any{tool("read")}
	if u := antUsageOf(t, s, b); u.CacheReadInputTokens != 0 {
		t.Errorf("after a tool change %+v, want no cache read", u)
	}
	// So does another model.
	b = body(user([]any{cached(text("question one"))}))
	b["model"] = "claude-other"
	if u := antUsageOf(t, s, b); u.CacheReadInputTokens != 0 {
		t.Errorf("another model %+v, want no cache read", u)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("rejections %v", r)
	}
}

func TestAnthropicCacheWithoutBreakpointsIsPlainInput(t *testing.T) {
	s := NewServer(t)
	body := antReq(user("hello there"))
	body["system"] = "You are coda."
	for range 2 {
		u := antUsageOf(t, s, body)
		if u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 || u.InputTokens == 0 {
			t.Errorf("usage %+v, want everything as input", u)
		}
	}
	// A top-level cache_control marks the last block.
	body["cache_control"] = map[string]any{"type": "ephemeral"}
	if u := antUsageOf(t, s, body); u.CacheCreationInputTokens == 0 || u.InputTokens != 0 {
		t.Errorf("automatic breakpoint %+v, want everything written", u)
	}
	if u := antUsageOf(t, s, body); u.CacheReadInputTokens == 0 || u.CacheCreationInputTokens != 0 {
		t.Errorf("automatic breakpoint again %+v, want everything read", u)
	}
}

func TestAnthropicCacheLooksBackTwentyBlocks(t *testing.T) {
	s := NewServer(t)
	blocks := func(n int) []any {
		out := []any{text("the shared opening block")}
		for i := 1; i < n; i++ {
			out = append(out, text("filler"))
		}
		return append(out, cached(text("the newest block")))
	}
	written := antUsageOf(t, s, antReq(user([]any{cached(text("the shared opening block"))})))
	if far := antUsageOf(t, s, antReq(user(blocks(21)))); far.CacheReadInputTokens != 0 {
		t.Errorf("breakpoint 21 blocks after the entry read %d, want 0", far.CacheReadInputTokens)
	}
	if near := antUsageOf(t, s, antReq(user(blocks(20)))); near.CacheReadInputTokens != written.TotalInput() {
		t.Errorf("breakpoint 20 blocks after the entry read %d, want %d", near.CacheReadInputTokens, written.TotalInput())
	}
}

func TestAnthropicCacheExpires(t *testing.T) {
	s := NewServer(t)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s.SetNow(func() time.Time { return now })
	body := antReq(user([]any{cached(text(strings.Repeat("context ", 100)))}))
	fiveMinute := antUsageOf(t, s, body)

	for _, step := range []struct {
		after time.Duration
		hit   bool
	}{
		{4 * time.Minute, true},
		{4 * time.Minute, true}, // 8 minutes after the write, 4 after the hit that refreshed it
		{5*time.Minute + time.Second, false},
		{time.Minute, true}, // the miss wrote it again
	} {
		now = now.Add(step.after)
		u := antUsageOf(t, s, body)
		if hit := u.CacheReadInputTokens == fiveMinute.TotalInput(); hit != step.hit {
			t.Errorf("after %v: usage %+v, hit %v want %v", step.after, u, hit, step.hit)
		}
	}

	long := antReq(user([]any{map[string]any{"type": "text", "text": strings.Repeat("other ", 100),
		"cache_control": map[string]any{"type": "ephemeral", "ttl": "1h"}}}))
	s.Enqueue(Reply(Text("ok")))
	events := mustEvents(t, antPost(t, s, long))
	usage := events[0].json(t)["message"].(map[string]any)["usage"].(map[string]any)
	creation := usage["cache_creation"].(map[string]any)
	if creation["ephemeral_1h_input_tokens"] != usage["cache_creation_input_tokens"] || creation["ephemeral_5m_input_tokens"] != 0.0 {
		t.Errorf("1h write reported as %v", usage)
	}
	now = now.Add(50 * time.Minute)
	if u := antUsageOf(t, s, long); u.CacheReadInputTokens == 0 {
		t.Errorf("1h entry missed after 50 minutes: %+v", u)
	}
}

// oaUsageOf sends body and returns the usage chunk's prompt and cached tokens.
func oaUsageOf(t *testing.T, s *Server, body map[string]any) (prompt, cached int) {
	t.Helper()
	s.Enqueue(Reply(Text("ok")))
	events := mustEvents(t, oaPost(t, s, body))
	u := events[len(events)-2].json(t)["usage"].(map[string]any)
	prompt = int(u["prompt_tokens"].(float64))
	cached = int(u["prompt_tokens_details"].(map[string]any)["cached_tokens"].(float64))
	reqs := s.Requests()
	if rec := reqs[len(reqs)-1].Usage; rec.InputTokens+rec.CacheReadInputTokens != prompt || rec.CacheReadInputTokens != cached {
		t.Errorf("recorded usage %+v, streamed prompt %d cached %d", rec, prompt, cached)
	}
	return prompt, cached
}

func TestOpenAICachesLongCommonPrefixes(t *testing.T) {
	s := NewServer(t)
	system := oaMsg("system", "You are coda. "+strings.Repeat("Rules. ", 700))
	body := func(msgs ...map[string]any) map[string]any {
		b := oaReq(append([]map[string]any{system}, msgs...)...)
		b["tools"] = []any{oaTool("read", map[string]any{"type": "object"})}
		return b
	}
	p1, c1 := oaUsageOf(t, s, body(oaMsg("user", "question one")))
	if c1 != 0 || p1 < openAIMinCached {
		t.Fatalf("first request prompt %d cached %d", p1, c1)
	}
	p2, c2 := oaUsageOf(t, s, body(oaMsg("user", "question one"), oaMsg("assistant", "answer one"), oaMsg("user", "question two")))
	if c2 != p1 || p2 <= p1 {
		t.Errorf("second request prompt %d cached %d, want the first's %d cached", p2, c2, p1)
	}
	if _, c := oaUsageOf(t, s, body(oaMsg("user", "a different question"))); c == 0 || c >= p1 {
		t.Errorf("a shared system prompt cached %d, want part of %d", c, p1)
	}
	b := body(oaMsg("user", "question one"))
	b["tools"] = []any{oaTool("ls", map[string]any{"type": "object"})}
	if _, c := oaUsageOf(t, s, b); c != 0 {
		t.Errorf("changed tools cached %d, want 0", c)
	}
	short := oaReq(oaMsg("user", "hi"))
	oaUsageOf(t, s, short)
	if _, c := oaUsageOf(t, s, short); c != 0 {
		t.Errorf("a prompt under 1024 tokens cached %d", c)
	}
}
