package agent

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// call is a tool_use checked against the registry.
type call struct {
	use     llm.ToolUse
	tool    tools.Tool // nil when the call failed before running
	fail    *llm.ToolResult
	safe    bool
	unknown bool // the model named a tool that does not exist
}

func (r *run) prepare(use llm.ToolUse) call {
	c := call{use: use}
	t, ok := r.agent.cfg.Tools.Get(use.Name)
	if !ok {
		c.unknown = true
		c.fail = errorResult(use.ID, fmt.Sprintf("No such tool: %s. Available tools: %s.",
			use.Name, strings.Join(r.agent.cfg.Tools.Names(), ", ")))
		return c
	}
	if !isObject(use.Input) {
		c.fail = errorResult(use.ID, fmt.Sprintf("The input to %s is not a valid JSON object: %s. Call the tool again with a JSON object matching its schema.",
			use.Name, truncate(string(use.Input), 200)))
		return c
	}
	c.tool = t
	c.safe = t.ConcurrencySafe(use.Input)
	return c
}

// runTools executes the calls of one answer and returns their results in
// the original order. Consecutive concurrency-safe calls run in parallel;
// the rest one at a time.
func (r *run) runTools(ctx context.Context, uses []llm.ToolUse) []llm.ToolResult {
	defer r.cancelEarly()
	results := make([]llm.ToolResult, len(uses))
	calls := make([]call, len(uses))
	for i, u := range uses {
		calls[i] = r.prepare(u)
		if calls[i].unknown {
			r.unknownRun++
		} else {
			r.unknownRun = 0
		}
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if calls[i].safe {
			for j < len(calls) && calls[j].safe {
				j++
			}
		}
		r.runBatch(ctx, calls[i:j], results[i:j])
		i = j
	}
	return results
}

// runBatch authorizes the calls in order (approvals are asked one at a
// time), then runs the allowed ones concurrently, bounded.
func (r *run) runBatch(ctx context.Context, calls []call, results []llm.ToolResult) {
	sem := make(chan struct{}, r.agent.cfg.MaxParallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		if p := r.early.take(c.use.ID); p != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-p.done
				results[i] = p.result
			}()
			continue
		}
		if ctx.Err() != nil {
			results[i] = *errorResult(c.use.ID, "Interrupted by user before the tool ran.")
			continue
		}
		if c.fail != nil {
			results[i] = *c.fail
			r.emit(ToolFinished{ID: c.use.ID, Name: c.use.Name, Input: c.use.Input, Result: toResult(*c.fail)})
			continue
		}
		if denied := r.authorize(ctx, c); denied != nil {
			results[i] = *denied
			r.emit(ToolFinished{ID: c.use.ID, Name: c.use.Name, Input: c.use.Input, Result: toResult(*denied)})
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = r.execute(ctx, c)
		}()
		if !c.safe {
			wg.Wait()
		}
	}
	wg.Wait()
}

// authorize asks the gate; nil means the call may run.
func (r *run) authorize(ctx context.Context, c call) *llm.ToolResult {
	g := r.agent.cfg.Gate
	if g == nil {
		return nil
	}
	v := g.Check(ctx, c.tool, c.use)
	switch v.Behavior {
	case Allow:
		return nil
	case Deny:
		r.denials = append(r.denials, Denial{ToolName: c.use.Name, ToolUseID: c.use.ID, Input: c.use.Input})
		return errorResult(c.use.ID, "Permission denied: "+v.Reason)
	}
	reply := make(chan Approval, 1)
	r.emit(ApprovalRequest{ID: c.use.ID, Tool: c.use.Name, Input: c.use.Input, Reason: v.Reason,
		Suggestions: v.Suggestions, Reply: reply})
	var ans Approval
	select {
	case ans = <-reply:
	case <-ctx.Done():
		return errorResult(c.use.ID, "Interrupted by user before the tool ran.")
	}
	g.Remember(c.use, v, ans)
	if ans.Allow {
		return nil
	}
	r.denials = append(r.denials, Denial{ToolName: c.use.Name, ToolUseID: c.use.ID, Input: c.use.Input})
	msg := "The user denied this tool call."
	if ans.Message != "" {
		msg += " They said: " + ans.Message
	}
	return errorResult(c.use.ID, msg)
}

// execute runs one authorized call, turning a tool's panic into an error
// result so one bad tool cannot take the session down.
func (r *run) execute(ctx context.Context, c call) (res llm.ToolResult) {
	r.emit(ToolStarted{ID: c.use.ID, Name: c.use.Name, Input: c.use.Input})
	began := time.Now()
	var out tools.Result
	func() {
		defer func() {
			if p := recover(); p != nil {
				out = tools.Errorf("internal error in tool %s: %v\n%s", c.use.Name, p, debug.Stack())
			}
		}()
		out = c.tool.Run(ctx, tools.Call{ID: c.use.ID, Input: c.use.Input, Env: r.agent.cfg.Env})
	}()
	if len(out.Content) == 0 {
		out.Content = []llm.Block{llm.Text{Text: "(no output)"}}
	}
	took := time.Since(began)
	r.agent.cfg.Log.Info("tool", "name", c.use.Name, "id", c.use.ID, "duration", took, "error", out.IsError)
	r.emit(ToolFinished{ID: c.use.ID, Name: c.use.Name, Input: c.use.Input, Result: out, Duration: took})
	return llm.ToolResult{ToolUseID: c.use.ID, Content: out.Content, IsError: out.IsError}
}

// earlyStarts holds concurrency-safe calls started while the answer was
// still streaming.
type earlyStarts struct {
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	started map[string]*pending
	closed  bool // a call that cannot start early was seen: keep order
	wg      sync.WaitGroup
}

type pending struct {
	done   chan struct{}
	result llm.ToolResult
}

func newEarlyStarts(ctx context.Context) *earlyStarts {
	c, cancel := context.WithCancel(ctx)
	return &earlyStarts{ctx: c, cancel: cancel, started: map[string]*pending{}}
}

// take returns the early-started call with id, if any.
func (e *earlyStarts) take(id string) *pending {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started[id]
}

// maybeStartEarly starts use now when it is part of the leading run of
// concurrency-safe calls and the gate allows it without asking.
func (r *run) maybeStartEarly(ctx context.Context, use llm.ToolUse) {
	e := r.early
	if e == nil || e.closed || r.turns >= r.agent.cfg.MaxTurns {
		return
	}
	c := r.prepare(use)
	if c.tool == nil || !c.safe {
		e.closed = true
		return
	}
	if g := r.agent.cfg.Gate; g != nil && g.Check(ctx, c.tool, use).Behavior != Allow {
		e.closed = true
		return
	}
	p := &pending{done: make(chan struct{})}
	e.mu.Lock()
	e.started[use.ID] = p
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(p.done)
		p.result = r.execute(e.ctx, c)
	}()
}

// earlyOrNotRun answers uses without running anything new: calls that
// already started early report their real result, the rest why not.
func (r *run) earlyOrNotRun(uses []llm.ToolUse, why string) []llm.Block {
	out := notRun(uses, why)
	for i, u := range uses {
		if p := r.early.take(u.ID); p != nil {
			<-p.done
			out[i] = p.result
		}
	}
	r.cancelEarly()
	return out
}

// cancelEarly stops and forgets early-started calls (the answer they
// belonged to was discarded, or its results were collected).
func (r *run) cancelEarly() {
	if r.early == nil {
		return
	}
	r.early.cancel()
	r.early.wg.Wait()
	r.early = nil
}

func errorResult(id, text string) *llm.ToolResult {
	return &llm.ToolResult{ToolUseID: id, Content: []llm.Block{llm.Text{Text: text}}, IsError: true}
}

func toResult(tr llm.ToolResult) tools.Result {
	return tools.Result{Content: tr.Content, IsError: tr.IsError}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
