// Package agent is the loop: it sends the conversation to the model, runs
// the tools the model asks for, and repeats until the model answers without
// tool calls. Everything a UI needs leaves as typed events; features hang on
// the loop through the seams in Config rather than being written into it.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// Model is a provider and one of its models.
type Model struct {
	Provider llm.Provider
	Info     llm.ModelInfo
}

// Gate decides whether a tool call may run. The permission engine
// implements it; nil allows everything.
type Gate interface {
	Check(ctx context.Context, t tools.Tool, use llm.ToolUse) Verdict
	// Remember is told the human's answer to an Ask, so "allow always" can
	// be saved and "allow once" can last the session.
	Remember(use llm.ToolUse, verdict Verdict, a Approval)
}

// Behavior is a Gate's answer.
type Behavior int

const (
	Allow Behavior = iota
	Ask
	Deny
)

// Verdict is a Gate's decision about one call.
type Verdict struct {
	Behavior    Behavior
	Reason      string
	Suggestions []string
}

// Compactor shrinks the conversation when it nears the context window.
// Compact is called before every request (reactive=false: only if needed)
// and after a prompt-too-long error (reactive=true: must shrink).
type Compactor interface {
	Compact(ctx context.Context, conv *llm.Conversation, reactive bool) error
}

// Recorder makes messages durable (the session transcript). Record is
// called before a message joins the in-memory conversation.
type Recorder interface {
	Record(m llm.Message) error
}

// Config wires an agent. Only Model, Tools and Env are required.
type Config struct {
	Model    Model
	Fallback *Model // used after repeated overload
	System   string
	Tools    *tools.Registry
	Env      *tools.Env
	Conv     *llm.Conversation // nil: a new one

	MaxTurns     int     // model requests per run; 0 = 100
	MaxBudgetUSD float64 // 0 = no limit
	MaxTokens    int     // output tokens per request; 0 = a default below the model's max
	Thinking     *llm.ThinkingConfig

	Gate      Gate
	Compactor Compactor
	Recorder  Recorder
	// Reminders returns context to add to the next user message as
	// <system-reminder> blocks (plan mode, todo nudges...).
	Reminders func() []string
	// ProcessResults may rewrite a tool-result message before it is
	// recorded (large results persisted to disk).
	ProcessResults func(results []llm.ToolResult) []llm.ToolResult

	Retry       RetryPolicy
	MaxParallel int // concurrency-safe calls run at once; 0 = 10
	// Log receives the debug record: requests, retries with the provider's
	// raw error bodies, tool timings. nil discards it.
	Log *slog.Logger
}

// Agent runs turns over one conversation. Runs are sequential: Submit must
// not be called again before the previous run's channel is closed.
type Agent struct {
	cfg  Config
	conv *llm.Conversation

	mu       sync.Mutex
	out      chan<- Event // the running Submit's channel, nil between runs
	model    Model
	total    llm.Usage
	cost     float64
	context  int
	overload int
}

// New returns an agent. It does not contact the model.
func New(cfg Config) *Agent {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 100
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 10
	}
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	conv := cfg.Conv
	if conv == nil {
		conv = llm.NewConversation()
	}
	return &Agent{cfg: cfg, conv: conv, model: cfg.Model}
}

// Conversation is the agent's conversation (readers take snapshots).
func (a *Agent) Conversation() *llm.Conversation { return a.conv }

// Model is the model currently in use (it changes after a fallback).
func (a *Agent) Model() Model {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model
}

// SetModel switches models for the next request.
func (a *Agent) SetModel(m Model) {
	a.mu.Lock()
	a.model = m
	a.mu.Unlock()
}

// AppendMessage adds a message from outside the loop (the output of a
// shell command the user ran) between runs: recorded first, like every
// message, then added to the conversation.
func (a *Agent) AppendMessage(m llm.Message) error {
	if a.cfg.Recorder != nil {
		if err := a.cfg.Recorder.Record(m); err != nil {
			return err
		}
	}
	a.conv.Append(m)
	return nil
}

// Totals reports usage and cost over the agent's lifetime.
func (a *Agent) Totals() (llm.Usage, float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total, a.cost
}

// Submit starts a run for a user prompt. The channel is closed after the
// LoopComplete event; the consumer must drain it.
func (a *Agent) Submit(ctx context.Context, prompt string) <-chan Event {
	return a.SubmitBlocks(ctx, []llm.Block{llm.Text{Text: prompt}})
}

// SubmitBlocks is Submit with arbitrary user content (text, images).
func (a *Agent) SubmitBlocks(ctx context.Context, content []llm.Block) <-chan Event {
	out := make(chan Event, 256)
	a.mu.Lock()
	a.out = out
	a.mu.Unlock()
	go func() {
		defer close(out)
		r := &run{agent: a, out: out, started: time.Now()}
		done := r.loop(ctx, content)
		a.mu.Lock()
		a.out = nil
		a.mu.Unlock()
		out <- done
	}()
	return out
}

// Emit sends an event from a seam (a compaction the Compactor made) to the
// running Submit's consumer. It must be called from the loop's goroutine,
// as seams are; between runs the event is dropped.
func (a *Agent) Emit(e Event) {
	a.mu.Lock()
	out := a.out
	a.mu.Unlock()
	if out != nil {
		out <- e
	}
}

// run is the state of one Submit.
type run struct {
	agent   *Agent
	out     chan<- Event
	started time.Time

	turns       int
	usage       llm.Usage
	cost        float64
	apiTime     time.Duration
	lastText    string
	modelStop   llm.StopReason
	unknownRun  int
	continues   int
	denials     []Denial
	recordError bool
	early       *earlyStarts
}

func (r *run) emit(e Event) { r.out <- e }

func (r *run) loop(ctx context.Context, content []llm.Block) LoopComplete {
	a := r.agent
	defer r.cancelEarly()
	r.appendMessage(r.userMessage(content))
	for {
		if err := ctx.Err(); err != nil {
			return r.finish(StopInterrupted, err)
		}
		if a.cfg.Compactor != nil {
			if err := a.cfg.Compactor.Compact(ctx, a.conv, false); err != nil {
				r.emit(Notice{Text: "compaction failed: " + err.Error()})
			}
		}
		r.turns++
		msg, err := r.request(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return r.finish(StopInterrupted, ctx.Err())
			}
			r.emit(ErrorEvent{Err: err})
			return r.finish(StopError, err)
		}
		r.lastText = msg.Text()
		uses := msg.ToolUses()
		if len(uses) == 0 {
			if msg.Meta.StopReason == llm.StopMaxTokens && r.continues < 3 {
				r.continues++
				r.appendMessage(r.reminderMessage("Your response was cut off because it exceeded the output token limit. Continue exactly where you stopped, without repeating anything."))
				continue
			}
			r.emit(TurnComplete{Turn: r.turns, Usage: usageOf(msg)})
			return r.finish(StopSuccess, nil)
		}
		if r.turns >= a.cfg.MaxTurns {
			r.cancelEarly()
			r.appendMessage(r.userMessage(notRun(uses, "Not run: the maximum number of turns was reached.")))
			err := fmt.Errorf("reached the maximum of %d turns (raise it with --max-turns)", a.cfg.MaxTurns)
			return r.finish(StopMaxTurns, err)
		}
		if b := a.cfg.MaxBudgetUSD; b > 0 && r.cost >= b {
			r.appendMessage(r.userMessage(r.earlyOrNotRun(uses, "Not run: the cost budget was reached.")))
			err := fmt.Errorf("reached the budget of $%.2f (spent $%.4f; raise it with --max-budget-usd)", b, r.cost)
			return r.finish(StopMaxBudget, err)
		}
		results := r.runTools(ctx, uses)
		if p := a.cfg.ProcessResults; p != nil {
			results = p(results)
		}
		blocks := make([]llm.Block, len(results))
		for i, res := range results {
			blocks[i] = res
		}
		r.appendMessage(r.userMessage(blocks))
		r.emit(TurnComplete{Turn: r.turns, Usage: usageOf(msg)})
		if ctx.Err() != nil {
			return r.finish(StopInterrupted, ctx.Err())
		}
		if r.unknownRun >= 3 {
			err := errors.New("the model called tools that do not exist three times in a row")
			r.emit(ErrorEvent{Err: err})
			return r.finish(StopUnknownTools, err)
		}
	}
}

func (r *run) finish(reason StopReason, err error) LoopComplete {
	if reason == StopInterrupted {
		err = errors.New("interrupted by user")
	}
	return LoopComplete{
		Reason: reason, Turns: r.turns, Result: r.lastText, Err: err,
		Usage: r.usage, CostUSD: r.cost, Duration: time.Since(r.started),
		APIDuration: r.apiTime, ModelStop: r.modelStop, Denials: r.denials,
	}
}

// userMessage builds a user message, adding pending reminders to it.
func (r *run) userMessage(content []llm.Block) llm.Message {
	m := llm.Message{ID: newID("msg"), Role: llm.RoleUser, Blocks: content,
		Meta: llm.Meta{Time: time.Now(), Status: llm.StatusComplete}}
	var reminders []string
	if f := r.agent.cfg.Reminders; f != nil {
		reminders = append(reminders, f()...)
	}
	if env := r.agent.cfg.Env; env != nil {
		reminders = append(reminders, env.TakeReminders()...)
	}
	for _, text := range reminders {
		m.Blocks = append(m.Blocks, llm.Text{Text: WrapReminder(text)})
	}
	return m
}

func (r *run) reminderMessage(text string) llm.Message {
	m := r.userMessage([]llm.Block{llm.Text{Text: WrapReminder(text)}})
	m.Meta.Reminder = true
	return m
}

// WrapReminder puts text in the <system-reminder> envelope models are
// trained to read as context from the harness, not from the user.
func WrapReminder(text string) string {
	return "<system-reminder>\n" + strings.TrimSpace(text) + "\n</system-reminder>"
}

// appendMessage records m, then adds it to the conversation.
func (r *run) appendMessage(m llm.Message) {
	if rec := r.agent.cfg.Recorder; rec != nil {
		if err := rec.Record(m); err != nil && !r.recordError {
			r.recordError = true
			r.emit(Notice{Text: "could not save the session transcript: " + err.Error()})
		}
	}
	r.agent.conv.Append(m)
	r.emit(MessageAppended{Message: m})
}

func notRun(uses []llm.ToolUse, why string) []llm.Block {
	out := make([]llm.Block, len(uses))
	for i, u := range uses {
		out[i] = llm.ToolResult{ToolUseID: u.ID, Content: []llm.Block{llm.Text{Text: why}}, IsError: true}
	}
	return out
}

func usageOf(m llm.Message) llm.Usage {
	if m.Meta.Usage == nil {
		return llm.Usage{}
	}
	return *m.Meta.Usage
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}
