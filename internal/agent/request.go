package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// defaultMaxTokens is the output limit of a first attempt; an answer cut
// there is retried once with the model's full limit.
const defaultMaxTokens = 32000

// request sends the conversation and returns the complete assistant
// message, already appended. It owns retries, the fallback model, the
// raised output limit and the reactive compaction after prompt-too-long.
func (r *run) request(ctx context.Context) (llm.Message, error) {
	a := r.agent
	policy := a.cfg.Retry
	maxTokens := 0
	raised, reactive := false, false
	for attempt := 1; ; {
		model := a.Model()
		if maxTokens == 0 {
			maxTokens = r.firstMaxTokens(model)
		}
		req := r.buildRequest(model, maxTokens)
		began := time.Now()
		msg, err := r.attempt(ctx, model, req)
		r.apiTime += time.Since(began)
		r.logRequest(model, req, msg, err, time.Since(began))
		if err == nil {
			a.mu.Lock()
			a.overload = 0
			a.mu.Unlock()
			r.account(model, usageOf(msg))
			if msg.Meta.StopReason == llm.StopMaxTokens && len(msg.ToolUses()) == 0 &&
				!raised && maxTokens < model.Info.MaxOutputTokens {
				raised = true
				maxTokens = model.Info.MaxOutputTokens
				r.cancelEarly()
				r.emit(StreamReset{})
				r.emit(Notice{Text: fmt.Sprintf("answer hit the output limit; retrying with %d tokens", maxTokens)})
				continue
			}
			r.modelStop = msg.Meta.StopReason
			r.appendMessage(msg)
			return msg, nil
		}
		r.cancelEarly()
		if ctx.Err() != nil {
			return llm.Message{}, ctx.Err()
		}
		apiErr, ok := llm.AsError(err)
		if ok && apiErr.Kind == llm.ErrPromptTooLong && !reactive && a.cfg.Compactor != nil {
			reactive = true
			r.emit(StreamReset{})
			r.emit(Notice{Text: "prompt too long: compacting the conversation and retrying"})
			if cerr := a.cfg.Compactor.Compact(ctx, a.conv, true); cerr != nil {
				return llm.Message{}, fmt.Errorf("prompt too long, and compaction failed: %w", cerr)
			}
			continue
		}
		if !ok || !apiErr.Retryable() {
			return llm.Message{}, describe(err)
		}
		if attempt >= policy.MaxAttempts {
			return llm.Message{}, fmt.Errorf("model request failed after %d attempts: %w", attempt, describe(err))
		}
		r.noteOverload(apiErr)
		delay := policy.Delay(attempt, apiErr.RetryAfter)
		r.emit(StreamReset{})
		r.emit(Notice{
			Text: fmt.Sprintf("%s; retrying in %.1fs (attempt %d/%d)", apiErr.Error(), delay.Seconds(), attempt+1, policy.MaxAttempts),
			Retry: &RetryInfo{Attempt: attempt, MaxRetries: policy.MaxAttempts - 1, Delay: delay,
				Status: apiErr.Status, Err: apiErr.Kind.String()},
		})
		if err := policy.Sleep(ctx, delay); err != nil {
			return llm.Message{}, err
		}
		attempt++
	}
}

func (r *run) logRequest(m Model, req llm.Request, msg llm.Message, err error, took time.Duration) {
	log := r.agent.cfg.Log
	if err != nil {
		attrs := []any{"model", m.Info.Key(), "messages", len(req.Messages), "duration", took, "error", err}
		if e, ok := llm.AsError(err); ok {
			attrs = append(attrs, "status", e.Status, "kind", e.Kind.String(), "body", e.Body)
		}
		log.Warn("model request failed", attrs...)
		return
	}
	u := usageOf(msg)
	log.Info("model request", "model", m.Info.Key(), "messages", len(req.Messages), "duration", took,
		"stop", msg.Meta.StopReason, "input", u.InputTokens, "cache_read", u.CacheReadInputTokens,
		"cache_write", u.CacheCreationInputTokens, "output", u.OutputTokens)
}

// describe turns provider errors into the short message a user needs.
func describe(err error) error {
	e, ok := llm.AsError(err)
	if !ok {
		return err
	}
	switch e.Kind {
	case llm.ErrAuth:
		return fmt.Errorf("the API rejected the key (%s): check the API key setting or environment variable", e.Message)
	case llm.ErrNotFound:
		return fmt.Errorf("not found (%s): check the model name and base URL", e.Message)
	case llm.ErrPromptTooLong:
		return fmt.Errorf("the conversation no longer fits the model's context window (%s): start a new session or /compact", e.Message)
	}
	return err
}

// noteOverload counts overloads in a row and switches to the fallback
// model after the third.
func (r *run) noteOverload(e *llm.Error) {
	a := r.agent
	a.mu.Lock()
	if e.Kind != llm.ErrOverloaded {
		a.overload = 0
		a.mu.Unlock()
		return
	}
	a.overload++
	switchTo := a.cfg.Fallback
	if a.overload < 3 || switchTo == nil || a.model.Info.Key() == switchTo.Info.Key() {
		a.mu.Unlock()
		return
	}
	a.overload = 0
	a.model = *switchTo
	a.mu.Unlock()
	r.emit(Notice{Text: fmt.Sprintf("model overloaded repeatedly; switching to fallback model %s", switchTo.Info.Key())})
}

func (r *run) firstMaxTokens(m Model) int {
	n := r.agent.cfg.MaxTokens
	if n <= 0 {
		n = min(defaultMaxTokens, m.Info.MaxOutputTokens)
	}
	if t := r.agent.cfg.Thinking; t != nil && !t.Adaptive && n <= t.BudgetTokens {
		n = min(t.BudgetTokens+4096, m.Info.MaxOutputTokens)
	}
	return max(n, 1)
}

func (r *run) buildRequest(m Model, maxTokens int) llm.Request {
	a := r.agent
	msgs := a.conv.Messages()
	for i, msg := range msgs {
		// Thinking is signed by the model that produced it; another model
		// rejects it, so it is dropped after a model switch.
		if msg.Role != llm.RoleAssistant || msg.Meta.Model == "" || msg.Meta.Model == m.Info.ID {
			continue
		}
		kept := make([]llm.Block, 0, len(msg.Blocks))
		for _, b := range msg.Blocks {
			switch b.(type) {
			case llm.Thinking, llm.RedactedThinking:
				continue
			}
			kept = append(kept, b)
		}
		msgs[i].Blocks = kept
	}
	var thinking *llm.ThinkingConfig
	if m.Info.Thinking {
		thinking = a.cfg.Thinking
	}
	return llm.Request{
		Model: m.Info.ID, System: a.cfg.System, Messages: msgs,
		Tools: a.cfg.Tools.Specs(), MaxTokens: maxTokens, Thinking: thinking, Cache: true,
	}
}

// account adds one response's usage to the run and agent totals.
func (r *run) account(m Model, u llm.Usage) {
	a := r.agent
	c := m.Info.Cost(u)
	r.usage = r.usage.Add(u)
	r.cost += c
	a.mu.Lock()
	a.total = a.total.Add(u)
	a.cost += c
	a.context = u.TotalInput() + u.OutputTokens
	ev := UsageUpdate{Total: a.total, CostUSD: a.cost, ContextTokens: a.context}
	a.mu.Unlock()
	r.emit(ev)
}

// attempt streams one answer. On interruption the partial answer is kept
// in the conversation, marked interrupted, with its tool calls answered.
func (r *run) attempt(ctx context.Context, m Model, req llm.Request) (llm.Message, error) {
	msg := llm.Message{ID: newID("msg"), Role: llm.RoleAssistant,
		Meta: llm.Meta{Time: time.Now(), Model: m.Info.ID, Status: llm.StatusStreaming}}
	s, err := m.Provider.Stream(ctx, req)
	if err != nil {
		return msg, err
	}
	defer s.Close()
	r.early = newEarlyStarts(ctx)
	blocks := map[int]llm.Block{}
	partial := map[int]*strings.Builder{}
	var usage llm.Usage
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				r.keepInterrupted(msg, blocks, partial)
				return msg, ctx.Err()
			}
			return msg, err
		}
		switch e := ev.(type) {
		case llm.MessageStart:
			usage = e.Usage
		case llm.TextDelta:
			b := partial[e.Index]
			if b == nil {
				b = &strings.Builder{}
				partial[e.Index] = b
			}
			b.WriteString(e.Text)
			r.emit(TextDelta{Text: e.Text})
		case llm.ThinkingDelta:
			r.emit(ThinkingDelta{Text: e.Text})
		case llm.BlockDone:
			blocks[e.Index] = e.Block
			delete(partial, e.Index)
			if use, ok := e.Block.(llm.ToolUse); ok {
				r.maybeStartEarly(ctx, use)
			}
		case llm.Stop:
			msg.Meta.StopReason = e.Reason
			usage = e.Usage
		}
	}
	if ctx.Err() != nil {
		r.keepInterrupted(msg, blocks, partial)
		return msg, ctx.Err()
	}
	msg.Blocks = ordered(blocks)
	if msg.Meta.StopReason == llm.StopMaxTokens {
		msg.Blocks = dropIncompleteToolUses(msg.Blocks)
	}
	msg.Meta.Status = llm.StatusComplete
	msg.Meta.Usage = &usage
	return msg, nil
}

// keepInterrupted appends what arrived before an interrupt: finished
// blocks and partial text (partial thinking has no signature and cannot be
// sent back), then error results for its tool calls so the conversation
// stays valid.
func (r *run) keepInterrupted(msg llm.Message, blocks map[int]llm.Block, partial map[int]*strings.Builder) {
	for i, b := range partial {
		if b.Len() > 0 {
			blocks[i] = llm.Text{Text: b.String()}
		}
	}
	msg.Blocks = dropIncompleteToolUses(ordered(blocks))
	if len(msg.Blocks) == 0 {
		return
	}
	msg.Meta.Status = llm.StatusInterrupted
	r.appendMessage(msg)
	if uses := msg.ToolUses(); len(uses) > 0 {
		r.appendMessage(r.userMessage(notRun(uses, "Interrupted by user before the tool ran.")))
	}
}

func ordered(blocks map[int]llm.Block) []llm.Block {
	idx := make([]int, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]llm.Block, 0, len(idx))
	for _, i := range idx {
		out = append(out, blocks[i])
	}
	return out
}

// dropIncompleteToolUses removes tool calls whose input was cut off.
func dropIncompleteToolUses(blocks []llm.Block) []llm.Block {
	out := blocks[:0:0]
	for _, b := range blocks {
		if u, ok := b.(llm.ToolUse); ok && !isObject(u.Input) {
			continue
		}
		out = append(out, b)
	}
	return out
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
