package agent

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// step is one scripted answer: events to stream, or an error.
type step struct {
	events []llm.Event
	err    error // returned by Stream
	midErr error // returned by Next after events
	block  chan struct{}
}

type scripted struct {
	mu    sync.Mutex
	steps []step
	reqs  []llm.Request
}

func (p *scripted) Name() string { return "anthropic" }

func (p *scripted) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	if len(p.steps) == 0 {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Message: "script exhausted"}
	}
	s := p.steps[0]
	p.steps = p.steps[1:]
	if s.err != nil {
		return nil, s.err
	}
	return &fakeStream{ctx: ctx, s: s}, nil
}

func (p *scripted) requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]llm.Request(nil), p.reqs...)
}

type fakeStream struct {
	ctx context.Context
	s   step
	i   int
}

func (f *fakeStream) Next() (llm.Event, error) {
	if f.ctx.Err() != nil {
		return nil, f.ctx.Err()
	}
	if f.i == len(f.s.events) {
		if f.s.block != nil {
			select {
			case <-f.s.block:
			case <-f.ctx.Done():
				return nil, f.ctx.Err()
			}
			f.s.block = nil
		}
		if f.s.midErr != nil {
			return nil, f.s.midErr
		}
		return nil, io.EOF
	}
	e := f.s.events[f.i]
	f.i++
	return e, nil
}

func (f *fakeStream) Close() error { return nil }

// answer builds the events of a complete answer from blocks.
func answer(blocks ...llm.Block) step {
	evs := []llm.Event{llm.MessageStart{ID: "m", Usage: llm.Usage{InputTokens: 100}}}
	stop := llm.StopEndTurn
	for i, b := range blocks {
		switch v := b.(type) {
		case llm.Text:
			evs = append(evs, llm.TextDelta{Index: i, Text: v.Text})
		case llm.ToolUse:
			stop = llm.StopToolUse
			evs = append(evs, llm.ToolUseStart{Index: i, ID: v.ID, Name: v.Name})
		}
		evs = append(evs, llm.BlockDone{Index: i, Block: b})
	}
	evs = append(evs, llm.Stop{Reason: stop, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}})
	return step{events: evs}
}

func withStop(s step, r llm.StopReason) step {
	last := s.events[len(s.events)-1].(llm.Stop)
	last.Reason = r
	s.events[len(s.events)-1] = last
	return s
}

func use(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

// probe is a test tool that records calls and can block.
type probe struct {
	name    string
	safe    bool
	delay   time.Duration
	mu      sync.Mutex
	running int
	peak    int
	calls   []string
	started chan string
}

func (p *probe) Name() string                         { return p.name }
func (p *probe) Description() string                  { return "probe tool" }
func (p *probe) InputSchema() json.RawMessage         { return json.RawMessage(`{"type":"object"}`) }
func (p *probe) ReadOnly() bool                       { return p.safe }
func (p *probe) ConcurrencySafe(json.RawMessage) bool { return p.safe }
func (p *probe) Run(ctx context.Context, c tools.Call) tools.Result {
	p.mu.Lock()
	p.running++
	p.peak = max(p.peak, p.running)
	p.calls = append(p.calls, string(c.Input))
	p.mu.Unlock()
	if p.started != nil {
		p.started <- c.ID
	}
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	return tools.TextResult("ran " + string(c.Input))
}

var testModel = llm.ModelInfo{Provider: "anthropic", ID: "claude-test", ContextWindow: 200000,
	MaxOutputTokens: 64000, InputPrice: 3, OutputPrice: 15}

func newTestAgent(t *testing.T, p llm.Provider, ts ...tools.Tool) *Agent {
	t.Helper()
	return New(Config{
		Model: Model{Provider: p, Info: testModel},
		Tools: tools.NewRegistry(ts...),
		Env:   tools.NewEnv(t.TempDir()),
		Retry: RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }},
	})
}

// drain collects every event of a run.
func drain(ch <-chan Event) ([]Event, LoopComplete) {
	var evs []Event
	var done LoopComplete
	for e := range ch {
		evs = append(evs, e)
		if d, ok := e.(LoopComplete); ok {
			done = d
		}
	}
	return evs, done
}
