package compact

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

func TestThresholds(t *testing.T) {
	c, _, _ := setup(t, &fakeModel{}, nil)
	l := c.limits()
	// 100,000 - min(20,000, 8,192) - 13,000
	if l.threshold != 78808 || l.hard != 97000 || l.summary != 8192 || l.tailMax != 10000 || l.tailMin != 10000 {
		t.Fatalf("limits = %+v", l)
	}
	big := llm.ModelInfo{ContextWindow: 200000, MaxOutputTokens: 64000}
	c2 := New(Options{Model: func() (llm.Provider, llm.ModelInfo) { return nil, big }})
	if l := c2.limits(); l.threshold != 167000 || l.summary != 20000 || l.tailMax != 20000 || l.tailMin != 10000 {
		t.Fatalf("200k limits = %+v", l)
	}
}

func TestEstimateAnchorsOnReportedUsage(t *testing.T) {
	c, clk, _ := setup(t, &fakeModel{}, nil)
	b := newBuilder(t, clk.Now()).user("go").round("Bash", map[string]any{"command": "ls"}, 400).usage(50000)
	b.round("Bash", map[string]any{"command": "ls"}, 4000)
	msgs := b.conv().Messages()
	// Usage covers the request that produced msgs[1]; the rest is new.
	want := 50000 + 50 + estimateMessages(msgs[2:])
	if got := c.Estimate(b.conv()); got != want {
		t.Fatalf("estimate = %d, want %d", got, want)
	}
	if want-50050 < 1100 || want-50050 > 1250 {
		t.Fatalf("the 4,400 bytes since should add about 1,100 tokens, added %d", want-50050)
	}
}

func TestBelowThresholdNothingHappens(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, bounds := setup(t, f, nil)
	b := newBuilder(t, clk.Now()).user("go").round("Bash", map[string]any{"command": "ls"}, 4000).usage(70000)
	conv := b.conv()
	before := conv.Messages()
	if err := c.Compact(context.Background(), conv, false); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 0 || len(*bounds) != 0 || conv.Len() != len(before) {
		t.Fatalf("compacted below the threshold: %d requests", len(f.requests()))
	}
}

// longConversation is a prompt and n Bash rounds of size bytes each, the
// newest reporting input tokens of usage.
func longConversation(t *testing.T, b *builder, n, size, usage int) *llm.Conversation {
	b.user("PLEASE FIX THE BUILD")
	for i := 0; i < n; i++ {
		b.round("Bash", map[string]any{"command": fmt.Sprintf("make step%d", i)}, size)
	}
	b.usage(usage)
	return b.conv()
}

func TestAutoCompactSummarisesHeadKeepsTail(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("THE SUMMARY")}
	env := newEnv(t)
	env.Todos.Set([]tools.Todo{{Content: "fix the build", Status: "in_progress"}})
	c, clk, bounds := setup(t, f, func(o *Options) {
		o.Env = env
		o.Instructions = func() string { return "PROJECT INSTRUCTIONS" }
		o.Plan = func() string { return "THE PLAN" }
	})
	// Results of 500 tokens are worth clearing, but clearing alone cannot
	// reach the target from 80k, so a summary follows.
	conv := longConversation(t, newBuilder(t, clk.Now()), 40, 2000, 80000)
	before := conv.Messages()
	if err := c.Compact(context.Background(), conv, false); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d summary requests", len(reqs))
	}
	req := reqs[0]
	if !req.NoTools || req.System != "SYSTEM PROMPT" || len(req.Tools) != 2 || req.MaxTokens != 8192 || req.Model != "fake-1" {
		t.Errorf("summary request: NoTools %v, system %q, %d tools, max %d", req.NoTools, req.System, len(req.Tools), req.MaxTokens)
	}
	lastReq := req.Messages[len(req.Messages)-1]
	if !strings.Contains(lastReq.Text(), "<summary>") || !strings.Contains(lastReq.Text(), "All user messages") {
		t.Errorf("last message is not the summary prompt: %.200s", lastReq.Text())
	}
	if req.Messages[0].Text() != "PLEASE FIX THE BUILD" {
		t.Errorf("summary request does not start with the user's prompt")
	}

	after := conv.Messages()
	first := after[0]
	if first.Role != llm.RoleUser || !first.Meta.Reminder || !isSummary(first) {
		t.Fatalf("first message = %+v", first.Meta)
	}
	text := first.Text()
	for _, want := range []string{"<summary>\nTHE SUMMARY\n</summary>", "Continue the conversation", "PROJECT INSTRUCTIONS", "1. [in_progress] fix the build", "THE PLAN", "<system-reminder>"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary message lacks %q", want)
		}
	}
	if strings.Contains(text, "thinking it over") {
		t.Error("the analysis was kept")
	}
	// The tail is the newest messages, verbatim, between 5 messages and
	// 10,000 tokens, and starts on an assistant message.
	tail := after[1:]
	if len(tail) < 5 || estimateMessages(tail) > 10000 || tail[0].Role != llm.RoleAssistant {
		t.Fatalf("tail: %d messages, %d tokens, first %s", len(tail), estimateMessages(tail), tail[0].Role)
	}
	orig := before[len(before)-len(tail):]
	for i := range tail {
		if tail[i].ID != orig[i].ID || tail[i].Text() != orig[i].Text() || tail[i].Meta.Usage != nil {
			t.Fatalf("tail message %d differs from the original or kept its usage", i)
		}
	}
	// The summary request held exactly the rest, old results cleared.
	if got := len(req.Messages) - 1; got != len(before)-len(tail) {
		t.Errorf("summary request has %d messages, head is %d", got, len(before)-len(tail))
	}
	if !strings.Contains(fmt.Sprint(req.Messages[2].Blocks), clearedPrefix) {
		t.Error("old results not cleared in the summary request")
	}
	for _, m := range tail {
		for _, b := range m.Blocks {
			if r, ok := b.(llm.ToolResult); ok && cleared(r) {
				t.Fatal("the tail holds a cleared result; it must stay verbatim")
			}
		}
	}
	pairsIntact(t, after)
	if len(*bounds) != 1 {
		t.Fatalf("%d boundaries", len(*bounds))
	}
	bd := (*bounds)[0]
	if bd.Trigger != "auto" || bd.Micro || bd.PreTokens < 80000 || bd.PostTokens >= 20000 || len(bd.Messages) != len(after) {
		t.Errorf("boundary = %+v", bd)
	}
}

func TestTailNeverSplitsToolPairs(t *testing.T) {
	for _, size := range []int{100, 3000, 9000, 20000, 45000} {
		b := newBuilder(t, testClockStart).user("go")
		for i := 0; i < 12; i++ {
			b.round("Read", map[string]any{"file_path": "/x"}, size+i*37)
			if i%4 == 3 {
				b.answer("progress").user("more please")
			}
		}
		msgs := b.msgs
		k := tailStart(msgs, 10000, 5, 10000)
		if k < 1 || k > len(msgs) {
			t.Fatalf("size %d: k = %d", size, k)
		}
		if k < len(msgs) && answersPrevious(msgs[k]) {
			t.Fatalf("size %d: tail starts with tool results", size)
		}
		tail := msgs[k:]
		if estimateMessages(tail) > 10000 {
			t.Fatalf("size %d: tail has %d tokens", size, estimateMessages(tail))
		}
		if size == 100 && len(tail) < 5 {
			t.Fatalf("small messages: tail has only %d", len(tail))
		}
	}
}

func TestTailTakesTheCallOfItsFirstResults(t *testing.T) {
	b := newBuilder(t, testClockStart).user("go")
	for i := 0; i < 6; i++ {
		b.round("Bash", map[string]any{"command": "x"}, 10000) // 2,500 tokens
	}
	// 2,000 tokens are reached with the last result alone: its call joins it.
	k := tailStart(b.msgs, 2000, 1, 10000)
	if tail := b.msgs[k:]; len(tail) != 2 || tail[0].Role != llm.RoleAssistant {
		t.Fatalf("tail of %d messages starting with %s", len(tail), tail[0].Role)
	}
	// When the call does not fit, the results stay out with it.
	k = tailStart(b.msgs, 2000, 1, messageTokens(b.msgs[len(b.msgs)-1])+1)
	if k != len(b.msgs) {
		t.Fatalf("tail of %d messages; want none", len(b.msgs)-k)
	}
}

func TestTailAtLeastFiveMessagesWhenTheyFit(t *testing.T) {
	// Messages of ~3,000 tokens: 10,000 tokens is reached after four, but
	// five do not fit under the cap either, so the tail keeps what fits
	// and moves past results to a call.
	b := newBuilder(t, testClockStart).user("go")
	for i := 0; i < 10; i++ {
		b.round("Bash", map[string]any{"command": "x"}, 1000)
	}
	k := tailStart(b.msgs, 2000, 5, 10000)
	if n := len(b.msgs) - k; n < 5 {
		t.Fatalf("tail of %d messages, want at least 5 (they fit)", n)
	}
}

func TestSummaryWithoutTagFails(t *testing.T) {
	for name, answer := range map[string]func(int, llm.Request) (string, error){
		"no summary": func(int, llm.Request) (string, error) { return "I cannot do that.", nil },
		"empty":      func(int, llm.Request) (string, error) { return "<summary> </summary>", nil },
		"error": func(int, llm.Request) (string, error) {
			return "", &llm.Error{Kind: llm.ErrInvalidRequest, Status: 400, Message: "bad"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeModel{answer: answer}
			c, clk, bounds := setup(t, f, nil)
			conv := longConversation(t, newBuilder(t, clk.Now()), 40, 200, 90000)
			before := conv.Messages()
			if err := c.Compact(context.Background(), conv, false); err == nil {
				t.Fatal("no error")
			}
			if conv.Len() != len(before) || len(*bounds) != 0 {
				t.Fatal("conversation changed by a failed compaction")
			}
		})
	}
}

func TestCircuitBreakerAndHardLine(t *testing.T) {
	fail := true
	f := &fakeModel{answer: func(int, llm.Request) (string, error) {
		if fail {
			return "no tags", nil
		}
		return "<summary>ok</summary>", nil
	}}
	c, clk, _ := setup(t, f, nil)
	var last error
	for i := 0; i < 3; i++ {
		conv := longConversation(t, newBuilder(t, clk.Now()), 40, 200, 90000)
		last = c.Compact(context.Background(), conv, false)
		if last == nil {
			t.Fatal("compaction succeeded")
		}
	}
	if !strings.Contains(last.Error(), "automatic compaction is off after 3 failures") {
		t.Errorf("third failure does not say the breaker opened: %v", last)
	}
	conv := longConversation(t, newBuilder(t, clk.Now()), 40, 200, 90000)
	if err := c.Compact(context.Background(), conv, false); err != nil || len(f.requests()) != 3 {
		t.Fatalf("breaker open, yet %d requests (err %v)", len(f.requests()), err)
	}
	// Past window - 3,000 it compacts anyway.
	fail = false
	conv = longConversation(t, newBuilder(t, clk.Now()), 40, 200, 97500)
	if err := c.Compact(context.Background(), conv, false); err != nil || len(f.requests()) != 4 {
		t.Fatalf("hard line: %d requests, err %v", len(f.requests()), err)
	}
	// A success closes the breaker.
	conv = longConversation(t, newBuilder(t, clk.Now()), 40, 200, 90000)
	if err := c.Compact(context.Background(), conv, false); err != nil || len(f.requests()) != 5 {
		t.Fatalf("after success: %d requests, err %v", len(f.requests()), err)
	}
}

func TestReactiveAlwaysCompacts(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, bounds := setup(t, f, nil)
	conv := longConversation(t, newBuilder(t, clk.Now()), 6, 200, 3000)
	if err := c.Compact(context.Background(), conv, true); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != 1 || len(*bounds) != 1 || !isSummary(conv.Messages()[0]) {
		t.Fatal("reactive compaction did not compact a small conversation")
	}
}

func TestSummaryTooLongDropsOldestRounds(t *testing.T) {
	f := &fakeModel{answer: func(n int, req llm.Request) (string, error) {
		if n <= 2 {
			return "", &llm.Error{Kind: llm.ErrPromptTooLong, Status: 400, Message: "prompt is too long: 105000 tokens > 100000 maximum"}
		}
		return "<summary>S</summary>", nil
	}}
	c, clk, _ := setup(t, f, nil)
	b := newBuilder(t, clk.Now())
	// Results of 600 bytes are too small to clear, so the request's size
	// is all in the rounds.
	conv := longConversation(t, b, 300, 600, 90000)
	if err := c.Compact(context.Background(), conv, true); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i := 1; i < 3; i++ {
		prev, cur := estimateMessages(reqs[i-1].Messages), estimateMessages(reqs[i].Messages)
		if prev-cur < 4500 {
			t.Errorf("retry %d dropped only %d tokens for a 5,000-token excess", i, prev-cur)
		}
		note := reqs[i].Messages[0].Text()
		if !strings.Contains(note, "oldest part of the conversation was left out") || !strings.Contains(note, "PLEASE FIX THE BUILD") {
			t.Errorf("retry %d: the note does not keep the user's message: %.200s", i, note)
		}
		pairsIntact(t, reqs[i].Messages[:len(reqs[i].Messages)-1])
	}
}

func TestSummaryTooLongGivesUp(t *testing.T) {
	f := &fakeModel{answer: func(int, llm.Request) (string, error) {
		return "", &llm.Error{Kind: llm.ErrPromptTooLong, Status: 400, Message: "prompt is too long"}
	}}
	c, clk, _ := setup(t, f, nil)
	conv := longConversation(t, newBuilder(t, clk.Now()), 60, 200, 90000)
	err := c.Compact(context.Background(), conv, true)
	if err == nil || len(f.requests()) != 5 {
		t.Fatalf("%d requests, err %v; want the first and 4 retries, then an error", len(f.requests()), err)
	}
	// Without a reported excess each retry drops a fifth of the rounds.
	reqs := f.requests()
	if a, b := len(reqs[0].Messages), len(reqs[1].Messages); b > a-10 {
		t.Errorf("retry went from %d to %d messages", a, b)
	}
}

func TestSummaryTooLongDropsAFifthMoreAtTheEnd(t *testing.T) {
	f := &fakeModel{answer: func(int, llm.Request) (string, error) {
		return "", &llm.Error{Kind: llm.ErrPromptTooLong, Status: 400, Message: "prompt is too long: 100001 tokens > 100000 maximum"}
	}}
	c, clk, _ := setup(t, f, nil)
	conv := longConversation(t, newBuilder(t, clk.Now()), 120, 200, 90000)
	if err := c.Compact(context.Background(), conv, true); err == nil {
		t.Fatal("no error")
	}
	reqs := f.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	// A one-token excess drops one round (two messages, one note added;
	// the prompt goes with the first), the last retry a fifth on top.
	for i, want := range []int{2, 1, 1} {
		if d := len(reqs[i].Messages) - len(reqs[i+1].Messages); d != want {
			t.Errorf("retry %d dropped %d messages net, want %d", i+1, d, want)
		}
	}
	if d := len(reqs[3].Messages) - len(reqs[4].Messages); d < 20 {
		t.Errorf("the last retry dropped only %d messages", d)
	}
}

func TestTransientErrorIsRetried(t *testing.T) {
	f := &fakeModel{answer: func(n int, _ llm.Request) (string, error) {
		if n == 1 {
			return "", &llm.Error{Kind: llm.ErrOverloaded, Status: 529, Message: "Overloaded"}
		}
		return "<summary>S</summary>", nil
	}}
	c, clk, _ := setup(t, f, nil)
	conv := longConversation(t, newBuilder(t, clk.Now()), 10, 200, 90000)
	if err := c.Compact(context.Background(), conv, true); err != nil || len(f.requests()) != 2 {
		t.Fatalf("err %v, %d requests", err, len(f.requests()))
	}
}

func TestManualCompactWithFocus(t *testing.T) {
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, bounds := setup(t, f, nil)
	conv := longConversation(t, newBuilder(t, clk.Now()), 8, 200, 5000)
	conv.Append(llm.Message{ID: "final", Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "done"}}})
	if err := c.CompactNow(context.Background(), conv, "keep the API decisions"); err != nil {
		t.Fatal(err)
	}
	prompt := f.requests()[0].Messages
	if !strings.Contains(prompt[len(prompt)-1].Text(), "keep the API decisions") {
		t.Error("focus instructions not in the summary prompt")
	}
	first := conv.Messages()[0]
	if (*bounds)[0].Trigger != "manual" || strings.Contains(first.Text(), "without asking the user") {
		t.Errorf("manual boundary %+v", (*bounds)[0])
	}
	if last, _ := conv.Last(); last.ID != "final" {
		t.Error("manual compaction lost the last answer")
	}
}

// The compactor is what the agent and the /compact command expect.
var (
	_ agent.Compactor = (*Compactor)(nil)
	_ interface {
		CompactWith(context.Context, *llm.Conversation, string) error
	} = (*Compactor)(nil)
)

func TestCancelledCompactionIsNoFailure(t *testing.T) {
	f := &fakeModel{answer: func(int, llm.Request) (string, error) { return "", context.Canceled }}
	c, clk, _ := setup(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 4; i++ {
		conv := longConversation(t, newBuilder(t, clk.Now()), 40, 200, 90000)
		if err := c.Compact(ctx, conv, false); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	}
	if c.failures != 0 {
		t.Fatalf("cancellations counted as %d failures", c.failures)
	}
}

func TestRecentFilesReattached(t *testing.T) {
	env := newEnv(t)
	dir := env.ProjectDir
	var paths []string
	for i := 0; i < 7; i++ {
		p := filepath.Join(dir, fmt.Sprintf("f%d.go", i))
		content := fmt.Sprintf("package f%d\n", i)
		if i == 5 {
			content = strings.Repeat("// a long line of a big file\n", 1000) // ~7,500 tokens
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		data, mt, _ := tools.Stat(p)
		env.Files.Record(p, data, mt)
		paths = append(paths, p)
	}
	f := &fakeModel{answer: summaryAnswer("S")}
	c, clk, _ := setup(t, f, func(o *Options) { o.Env = env })
	b := newBuilder(t, clk.Now()).user("go")
	for _, p := range paths {
		b.round("Read", map[string]any{"file_path": p}, 300)
	}
	b.round("Edit", map[string]any{"file_path": paths[0], "old_string": "a", "new_string": "b"}, 50)
	b.round("Read", map[string]any{"file_path": "/never/read.go"}, 50)
	for i := 0; i < 6; i++ {
		b.round("Bash", map[string]any{"command": "true"}, 2000)
	}
	b.round("Read", map[string]any{"file_path": paths[4]}, 100) // in the tail: shown there
	conv := b.conv()
	if err := c.CompactNow(context.Background(), conv, ""); err != nil {
		t.Fatal(err)
	}
	text := conv.Messages()[0].Text()
	// Most recent first: f0 (edited last), f6, f5 (too big: path only),
	// then f3 and f2, f4 being read again in the tail.
	want := []string{paths[0], paths[6], paths[5], paths[3], paths[2]}
	at := 0
	for _, p := range want {
		i := strings.Index(text[at:], p)
		if i < 0 {
			t.Fatalf("%s not re-attached in order:\n%s", p, text)
		}
		at += i
	}
	if strings.Contains(text, paths[1]) || strings.Contains(text, paths[4]) || strings.Contains(text, "/never/read.go") {
		t.Error("more than 5 files, a file the tail shows, or a file never read re-attached")
	}
	if !strings.Contains(text, "package f6") || !strings.Contains(text, "     1\tpackage f0") {
		t.Error("small files not re-attached with their numbered content")
	}
	if strings.Contains(text, "a long line of a big file") || !strings.Contains(text, paths[5]+" earlier in this session. It is too large") {
		t.Error("the big file should be named, not attached")
	}
}

func TestWrapReminderMatchesAgent(t *testing.T) {
	if wrapReminder(" x \n") != agent.WrapReminder(" x \n") {
		t.Fatal("compact and agent wrap reminders differently")
	}
}
