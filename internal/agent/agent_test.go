package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTextAnswerEndsRun(t *testing.T) {
	p := &scripted{steps: []step{answer(llm.Text{Text: "hello"})}}
	a := newTestAgent(t, p)
	evs, done := drain(a.Submit(context.Background(), "hi"))
	if done.Reason != StopSuccess || done.Result != "hello" || done.Turns != 1 {
		t.Fatalf("done = %+v", done)
	}
	var text string
	for _, e := range evs {
		if d, ok := e.(TextDelta); ok {
			text += d.Text
		}
	}
	if text != "hello" {
		t.Errorf("streamed text = %q", text)
	}
	if got := a.Conversation().Len(); got != 2 {
		t.Errorf("conversation has %d messages, want 2", got)
	}
	if done.CostUSD <= 0 {
		t.Errorf("cost not computed: %v", done.CostUSD)
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	pr := &probe{name: "Probe", safe: true}
	p := &scripted{steps: []step{
		answer(llm.Text{Text: "checking"}, use("t1", "Probe", `{"x":1}`)),
		answer(llm.Text{Text: "done"}),
	}}
	a := newTestAgent(t, p, pr)
	_, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopSuccess || done.Turns != 2 {
		t.Fatalf("done = %+v", done)
	}
	reqs := p.requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	res, ok := last.Blocks[0].(llm.ToolResult)
	if !ok || res.ToolUseID != "t1" || res.IsError || !strings.Contains(llm.Message{Blocks: res.Content}.Text(), `ran {"x":1}`) {
		t.Fatalf("second request's last message = %+v", last)
	}
}

func TestParallelSafeCallsKeepOrder(t *testing.T) {
	pr := &probe{name: "Probe", safe: true, delay: 50 * time.Millisecond}
	p := &scripted{steps: []step{
		answer(use("a", "Probe", `{"n":1}`), use("b", "Probe", `{"n":2}`), use("c", "Probe", `{"n":3}`)),
		answer(llm.Text{Text: "ok"}),
	}}
	a := newTestAgent(t, p, pr)
	drain(a.Submit(context.Background(), "go"))
	if pr.peak < 2 {
		t.Errorf("peak concurrency %d, want parallel runs", pr.peak)
	}
	msgs := p.requests()[1].Messages
	results := msgs[len(msgs)-1].Blocks
	for i, id := range []string{"a", "b", "c"} {
		if r := results[i].(llm.ToolResult); r.ToolUseID != id {
			t.Errorf("result %d is for %s, want %s", i, r.ToolUseID, id)
		}
	}
}

func TestUnsafeCallsRunOneAtATime(t *testing.T) {
	pr := &probe{name: "Probe", safe: false, delay: 20 * time.Millisecond}
	p := &scripted{steps: []step{
		answer(use("a", "Probe", `{}`), use("b", "Probe", `{}`)),
		answer(llm.Text{Text: "ok"}),
	}}
	drain(newTestAgent(t, p, pr).Submit(context.Background(), "go"))
	if pr.peak != 1 {
		t.Errorf("peak concurrency %d, want 1", pr.peak)
	}
}

func TestSafeCallStartsBeforeAnswerEnds(t *testing.T) {
	started := make(chan string, 1)
	pr := &probe{name: "Probe", safe: true, started: started}
	s := answer(use("a", "Probe", `{}`))
	// Hold the stream open after the tool block until the tool has started
	// (or give up after a while, which fails the test instead of hanging).
	s.events = s.events[:len(s.events)-1]
	s.block = make(chan struct{})
	p := &scripted{steps: []step{s, answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p, pr)
	early := make(chan bool, 1)
	go func() {
		select {
		case <-started:
			early <- true
		case <-time.After(5 * time.Second):
			early <- false
		}
		close(s.block)
	}()
	_, done := drain(a.Submit(context.Background(), "go"))
	if !<-early {
		t.Fatal("the concurrency-safe call did not start while the answer was streaming")
	}
	if done.Reason != StopSuccess || len(pr.calls) != 1 {
		t.Fatalf("done = %+v, calls = %v", done, pr.calls)
	}
}

func TestUnknownToolAndBadInput(t *testing.T) {
	pr := &probe{name: "Probe", safe: true}
	p := &scripted{steps: []step{
		answer(use("a", "Nope", `{}`), use("b", "Probe", `not json`)),
		answer(llm.Text{Text: "ok"}),
	}}
	drain(newTestAgent(t, p, pr).Submit(context.Background(), "go"))
	msgs := p.requests()[1].Messages
	results := msgs[len(msgs)-1].Blocks
	r0 := results[0].(llm.ToolResult)
	if !r0.IsError || !strings.Contains(llm.Message{Blocks: r0.Content}.Text(), "No such tool: Nope. Available tools: Probe") {
		t.Errorf("unknown tool result = %+v", r0)
	}
	r1 := results[1].(llm.ToolResult)
	if !r1.IsError || !strings.Contains(llm.Message{Blocks: r1.Content}.Text(), "not a valid JSON object") {
		t.Errorf("bad input result = %+v", r1)
	}
	if len(pr.calls) != 0 {
		t.Errorf("tool ran with bad input")
	}
}

func TestThreeUnknownToolsStop(t *testing.T) {
	p := &scripted{steps: []step{
		answer(use("a", "Nope", `{}`)),
		answer(use("b", "Nope", `{}`)),
		answer(use("c", "Nope", `{}`)),
		answer(llm.Text{Text: "never"}),
	}}
	_, done := drain(newTestAgent(t, p).Submit(context.Background(), "go"))
	if done.Reason != StopUnknownTools || done.Turns != 3 {
		t.Fatalf("done = %+v", done)
	}
}

func TestMaxTurns(t *testing.T) {
	pr := &probe{name: "Probe", safe: true}
	var steps []step
	for range 5 {
		steps = append(steps, answer(use("x", "Probe", `{}`)))
	}
	p := &scripted{steps: steps}
	a := newTestAgent(t, p, pr)
	a.cfg.MaxTurns = 2
	_, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopMaxTurns || done.Turns != 2 || len(p.requests()) != 2 {
		t.Fatalf("done = %+v, requests = %d", done, len(p.requests()))
	}
	if len(pr.calls) != 1 {
		t.Errorf("tool ran %d times; the 2nd answer's calls must not run", len(pr.calls))
	}
	last, _ := a.Conversation().Last()
	if r := last.Blocks[0].(llm.ToolResult); !r.IsError {
		t.Errorf("unrun call has no error result: %+v", last)
	}
}

func TestRetriesWithBackoffAndRetryAfter(t *testing.T) {
	p := &scripted{steps: []step{
		{err: &llm.Error{Kind: llm.ErrRateLimit, Status: 429, RetryAfter: 3 * time.Second}},
		{err: &llm.Error{Kind: llm.ErrServer, Status: 500}},
		{events: answer(llm.Text{Text: "partial"}).events[:2], midErr: &llm.Error{Kind: llm.ErrConnection, Message: "reset"}},
		answer(llm.Text{Text: "ok"}),
	}}
	a := newTestAgent(t, p)
	var delays []time.Duration
	a.cfg.Retry.Sleep = func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }
	evs, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopSuccess || done.Result != "ok" {
		t.Fatalf("done = %+v", done)
	}
	if len(delays) != 3 || delays[0] < 3*time.Second || delays[1] < time.Second || delays[1] > 1250*time.Millisecond {
		t.Errorf("delays = %v", delays)
	}
	notices, resets := 0, 0
	for _, e := range evs {
		switch e := e.(type) {
		case Notice:
			if e.Retry != nil {
				notices++
			}
		case StreamReset:
			resets++
		}
	}
	if notices != 3 || resets < 1 {
		t.Errorf("retry notices = %d, resets = %d", notices, resets)
	}
}

func TestGivesUpAfterTenAttempts(t *testing.T) {
	var steps []step
	for range 12 {
		steps = append(steps, step{err: &llm.Error{Kind: llm.ErrOverloaded, Status: 529}})
	}
	p := &scripted{steps: steps}
	_, done := drain(newTestAgent(t, p).Submit(context.Background(), "go"))
	if done.Reason != StopError || len(p.requests()) != 10 {
		t.Fatalf("done = %+v after %d requests", done, len(p.requests()))
	}
}

func TestNonRetryableErrorEndsRun(t *testing.T) {
	p := &scripted{steps: []step{{err: &llm.Error{Kind: llm.ErrAuth, Status: 401, Message: "invalid x-api-key"}}}}
	_, done := drain(newTestAgent(t, p).Submit(context.Background(), "go"))
	if done.Reason != StopError || !strings.Contains(done.Err.Error(), "API key") || len(p.requests()) != 1 {
		t.Fatalf("done = %+v", done)
	}
}

func TestFallbackAfterThreeOverloads(t *testing.T) {
	over := step{err: &llm.Error{Kind: llm.ErrOverloaded, Status: 529}}
	p := &scripted{steps: []step{over, over, over, answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p)
	fb := testModel
	fb.ID = "claude-fallback"
	a.cfg.Fallback = &Model{Provider: p, Info: fb}
	_, done := drain(a.Submit(context.Background(), "go"))
	reqs := p.requests()
	if done.Reason != StopSuccess || reqs[3].Model != "claude-fallback" || reqs[2].Model != "claude-test" {
		t.Fatalf("done = %+v; models %s %s", done, reqs[2].Model, reqs[3].Model)
	}
}

func TestMaxTokensRaisesThenContinues(t *testing.T) {
	cut := func(s string) step { return withStop(answer(llm.Text{Text: s}), llm.StopMaxTokens) }
	p := &scripted{steps: []step{cut("a"), cut("b"), answer(llm.Text{Text: "c"})}}
	a := newTestAgent(t, p)
	_, done := drain(a.Submit(context.Background(), "go"))
	reqs := p.requests()
	if done.Reason != StopSuccess || len(reqs) != 3 {
		t.Fatalf("done = %+v, %d requests", done, len(reqs))
	}
	if reqs[0].MaxTokens != defaultMaxTokens || reqs[1].MaxTokens != testModel.MaxOutputTokens {
		t.Errorf("max tokens %d then %d", reqs[0].MaxTokens, reqs[1].MaxTokens)
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if !strings.Contains(last.Text(), "cut off") {
		t.Errorf("continuation prompt missing: %q", last.Text())
	}
	if prev := reqs[2].Messages[len(reqs[2].Messages)-2]; prev.Text() != "b" {
		t.Errorf("partial answer not kept: %q", prev.Text())
	}
}

type countingCompactor struct{ reactive, proactive int }

func (c *countingCompactor) Compact(_ context.Context, _ *llm.Conversation, reactive bool) error {
	if reactive {
		c.reactive++
	} else {
		c.proactive++
	}
	return nil
}

func TestPromptTooLongCompactsOnceAndRetries(t *testing.T) {
	tooLong := step{err: &llm.Error{Kind: llm.ErrPromptTooLong, Status: 400, Message: "prompt is too long"}}
	p := &scripted{steps: []step{tooLong, answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p)
	c := &countingCompactor{}
	a.cfg.Compactor = c
	_, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopSuccess || c.reactive != 1 {
		t.Fatalf("done = %+v, reactive = %d", done, c.reactive)
	}
	p = &scripted{steps: []step{tooLong, tooLong}}
	a = newTestAgent(t, p)
	a.cfg.Compactor = &countingCompactor{}
	_, done = drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopError || !strings.Contains(done.Err.Error(), "context window") {
		t.Fatalf("second prompt-too-long: %+v", done)
	}
}

func TestInterruptKeepsPartialAnswer(t *testing.T) {
	s := answer(llm.Text{Text: "half an answer"})
	s.events = s.events[:2] // start + first delta, then block
	s.block = make(chan struct{})
	p := &scripted{steps: []step{s, answer(llm.Text{Text: "next"})}}
	a := newTestAgent(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := a.Submit(ctx, "go")
	var done LoopComplete
	for e := range ch {
		if _, ok := e.(TextDelta); ok {
			cancel()
		}
		if d, ok := e.(LoopComplete); ok {
			done = d
		}
	}
	if done.Reason != StopInterrupted {
		t.Fatalf("done = %+v", done)
	}
	last, _ := a.Conversation().Last()
	if last.Meta.Status != llm.StatusInterrupted || last.Text() != "half an answer" {
		t.Fatalf("last message = %+v", last)
	}
	// The session stays usable.
	_, done = drain(a.Submit(context.Background(), "again"))
	if done.Reason != StopSuccess || done.Result != "next" {
		t.Fatalf("after interrupt: %+v", done)
	}
}

func TestInterruptDuringToolGivesResults(t *testing.T) {
	started := make(chan string, 1)
	pr := &probe{name: "Probe", safe: false, delay: time.Hour, started: started}
	p := &scripted{steps: []step{answer(use("a", "Probe", `{}`), use("b", "Probe", `{}`))}}
	a := newTestAgent(t, p, pr)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, done := drain(a.Submit(ctx, "go"))
	if done.Reason != StopInterrupted {
		t.Fatalf("done = %+v", done)
	}
	msgs := a.Conversation().Messages()
	norm := llm.Normalize(msgs)
	if len(norm) != len(msgs) {
		t.Errorf("conversation needed repair after interrupt: %d vs %d messages", len(norm), len(msgs))
	}
	last := msgs[len(msgs)-1]
	if len(last.Blocks) != 2 {
		t.Fatalf("want 2 results, got %+v", last)
	}
}

type fixedGate struct {
	v          Verdict
	remembered []Approval
}

func (g *fixedGate) Check(context.Context, tools.Tool, llm.ToolUse) Verdict { return g.v }
func (g *fixedGate) Remember(_ llm.ToolUse, _ Verdict, a Approval) {
	g.remembered = append(g.remembered, a)
}

func TestDenialGoesBackToModel(t *testing.T) {
	pr := &probe{name: "Probe"}
	p := &scripted{steps: []step{answer(use("a", "Probe", `{}`)), answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p, pr)
	a.cfg.Gate = &fixedGate{v: Verdict{Behavior: Deny, Reason: "not allowed here"}}
	_, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopSuccess || len(done.Denials) != 1 || len(pr.calls) != 0 {
		t.Fatalf("done = %+v", done)
	}
	msgs := p.requests()[1].Messages
	r := msgs[len(msgs)-1].Blocks[0].(llm.ToolResult)
	if !r.IsError || !strings.Contains(llm.Message{Blocks: r.Content}.Text(), "not allowed here") {
		t.Errorf("denial result = %+v", r)
	}
}

func TestApprovalRequest(t *testing.T) {
	for _, allow := range []bool{true, false} {
		pr := &probe{name: "Probe"}
		p := &scripted{steps: []step{answer(use("a", "Probe", `{}`)), answer(llm.Text{Text: "ok"})}}
		a := newTestAgent(t, p, pr)
		g := &fixedGate{v: Verdict{Behavior: Ask, Reason: "edits need approval"}}
		a.cfg.Gate = g
		for e := range a.Submit(context.Background(), "go") {
			if req, ok := e.(ApprovalRequest); ok {
				req.Reply <- Approval{Allow: allow, Message: "use the other file"}
			}
		}
		if ran := len(pr.calls) == 1; ran != allow {
			t.Errorf("allow=%v: tool ran=%v", allow, ran)
		}
		if len(g.remembered) != 1 {
			t.Errorf("gate not told the answer")
		}
		if !allow {
			msgs := p.requests()[1].Messages
			text := llm.Message{Blocks: msgs[len(msgs)-1].Blocks[0].(llm.ToolResult).Content}.Text()
			if !strings.Contains(text, "use the other file") {
				t.Errorf("denial message lost: %q", text)
			}
		}
	}
}

func TestBudgetStopsRun(t *testing.T) {
	pr := &probe{name: "Probe", safe: false}
	p := &scripted{steps: []step{answer(use("a", "Probe", `{}`)), answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p, pr)
	a.cfg.MaxBudgetUSD = 0.0001
	_, done := drain(a.Submit(context.Background(), "go"))
	if done.Reason != StopMaxBudget || len(pr.calls) != 0 || len(p.requests()) != 1 {
		t.Fatalf("done = %+v", done)
	}
}

func TestRecorderSeesMessagesBeforeConversation(t *testing.T) {
	p := &scripted{steps: []step{answer(llm.Text{Text: "ok"})}}
	a := newTestAgent(t, p)
	rec := &recorder{conv: a.Conversation()}
	a.cfg.Recorder = rec
	drain(a.Submit(context.Background(), "go"))
	if len(rec.msgs) != 2 || rec.err != nil {
		t.Fatalf("recorded %d messages, err %v", len(rec.msgs), rec.err)
	}
}

type recorder struct {
	conv *llm.Conversation
	msgs []llm.Message
	err  error
}

func (r *recorder) Record(m llm.Message) error {
	if r.conv.Len() != len(r.msgs) {
		r.err = errors.New("conversation moved on before the record")
	}
	r.msgs = append(r.msgs, m)
	return nil
}
