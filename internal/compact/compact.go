// Package compact keeps a conversation inside the model's context window,
// in layers from cheapest to dearest: large tool results go to disk as they
// arrive (ProcessResults); old tool results are cleared to one-line
// placeholders when the provider's cache is cold anyway or a full
// compaction is due (micro-compaction, no model call); and the older part
// of the conversation is replaced by a summary the model writes, keeping
// the recent tail verbatim (auto, reactive after prompt-too-long, and
// manual /compact).
package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// Defaults of Options' limits, in tokens unless said otherwise.
const (
	DefaultResultTokens   = 25000 // one tool result above this goes to disk
	DefaultMessageTokens  = 50000 // one message's results together
	DefaultSummaryReserve = 20000 // room kept for the summary answer
	DefaultMargin         = 13000 // kept below the window besides the reserve
	DefaultHardMargin     = 3000  // past window minus this, compact even with the breaker open
	DefaultTailTokens     = 10000 // the verbatim tail's target size
	DefaultTailMessages   = 5     // the tail holds at least this many messages when they fit
	DefaultKeepResults    = 5     // micro-compaction keeps this many newest results
	DefaultCacheTTL       = 5 * time.Minute
	DefaultFiles          = 5    // files re-attached after a compaction
	DefaultFileTokens     = 5000 // larger files are re-attached by path only
	DefaultMaxFailures    = 3    // failed auto-compactions in a row before giving up
)

// Options configure a Compactor. Model is required; zero limits take the
// defaults above.
type Options struct {
	// Model is the model in use: the summary is asked of it, and its
	// window sets the thresholds.
	Model func() (llm.Provider, llm.ModelInfo)
	// System and Tools are what the agent sends with every request; the
	// summary request sends the same so the provider's cache prefix holds.
	System string
	Tools  func() []llm.ToolSpec
	// Dir is the session directory: tool results are written to
	// Dir/tool-results. "" cuts large results instead.
	Dir string
	// Env gives the files to re-attach and the todo list; nil skips them.
	Env *tools.Env
	// Instructions returns the project instructions (AGENTS.md, rules) to
	// put back after a compaction; nil or "" skips them.
	Instructions func() string
	// Plan returns the current plan to put back after a compaction.
	Plan func() string
	// OnBoundary is told of every compaction that changed the
	// conversation, after the change.
	OnBoundary func(Boundary)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	ResultTokens   int
	MessageTokens  int
	SummaryReserve int
	Margin         int
	HardMargin     int
	TailTokens     int
	TailMessages   int
	KeepResults    int
	CacheTTL       time.Duration
	Files          int
	FileTokens     int
	MaxFailures    int
	// RetryDelay is the wait before retrying a summary request that failed
	// transiently (rate limit, overload); nil waits a second, then two, or
	// what the provider asked.
	RetryDelay func(attempt int, after time.Duration) time.Duration
}

// Boundary describes one compaction, for the session transcript and the
// event stream (stream-json's compact_boundary).
type Boundary struct {
	Trigger    string // "auto" or "manual"
	Micro      bool   // old tool results were cleared; no summary was written
	PreTokens  int    // estimated context before
	PostTokens int    // estimated context after
	// Messages is the whole conversation after the compaction; a session
	// resumed from the boundary starts from exactly these.
	Messages []llm.Message
}

// Compactor implements agent.Compactor and the agent's ProcessResults.
type Compactor struct {
	o Options

	mu       sync.Mutex
	failures int // failed automatic compactions in a row
	overhead int // system prompt and tools, learned from reported usage
	lastCall time.Time
}

// New returns a Compactor.
func New(o Options) *Compactor {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.ResultTokens, DefaultResultTokens)
	def(&o.MessageTokens, DefaultMessageTokens)
	def(&o.SummaryReserve, DefaultSummaryReserve)
	def(&o.Margin, DefaultMargin)
	def(&o.HardMargin, DefaultHardMargin)
	def(&o.TailTokens, DefaultTailTokens)
	def(&o.TailMessages, DefaultTailMessages)
	def(&o.KeepResults, DefaultKeepResults)
	def(&o.Files, DefaultFiles)
	def(&o.FileTokens, DefaultFileTokens)
	def(&o.MaxFailures, DefaultMaxFailures)
	if o.CacheTTL <= 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryDelay == nil {
		o.RetryDelay = defaultRetryDelay
	}
	return &Compactor{o: o}
}

func defaultRetryDelay(attempt int, after time.Duration) time.Duration {
	if after > 0 {
		return min(after, 30*time.Second)
	}
	return time.Duration(attempt) * time.Second
}

// limits are the thresholds for the model in use.
type limits struct {
	window      int
	threshold   int // auto-compact at or above
	hard        int // compact even with the breaker open
	microTarget int // micro-compaction alone must get below this
	result      int
	message     int
	tailMin     int
	tailMax     int
	summary     int // max tokens of the summary answer
}

func (c *Compactor) limits() limits {
	_, info := c.o.Model()
	w := info.ContextWindow
	if w <= 0 {
		w = 200000
	}
	reserve := c.o.SummaryReserve
	if info.MaxOutputTokens > 0 {
		reserve = min(reserve, info.MaxOutputTokens)
	}
	l := limits{window: w, summary: reserve}
	l.threshold = max(w-reserve-c.o.Margin, w/2)
	l.hard = max(w-c.o.HardMargin, l.threshold)
	// Clearing results alone must leave about as much room as a summary
	// would, or the cache is given up again a few turns later.
	l.microTarget = min(l.threshold-w/5, w*2/5)
	l.result = min(c.o.ResultTokens, w/4)
	l.message = max(min(c.o.MessageTokens, w/4), l.result)
	l.tailMax = w / 10
	l.tailMin = min(c.o.TailTokens, l.tailMax)
	return l
}

// fixed estimates what every request carries besides the messages: the
// system prompt and tools when known, else what reported usage implied.
func (c *Compactor) fixed() int {
	n := Tokens(c.o.System)
	for _, t := range c.tools() {
		n += Tokens(t.Name) + Tokens(t.Description) + Tokens(string(t.InputSchema)) + 10
	}
	if n == 0 {
		return c.overhead
	}
	return n
}

func (c *Compactor) tools() []llm.ToolSpec {
	if c.o.Tools == nil {
		return nil
	}
	return c.o.Tools()
}

// estimate is the context msgs fill: the last reported input plus an
// estimate of what came after it, or a full estimate when no usage is
// known (a fresh or just-compacted conversation).
func (c *Compactor) estimate(msgs []llm.Message) int {
	j := lastUsage(msgs)
	if j < 0 {
		return c.fixed() + estimateMessages(msgs)
	}
	u := *msgs[j].Meta.Usage
	if rest := u.TotalInput() - estimateMessages(msgs[:j]); rest > 0 {
		c.overhead = rest
	}
	return u.TotalInput() + u.OutputTokens + estimateMessages(msgs[j+1:])
}

// Estimate returns the estimated context the conversation fills, as the
// compactor sees it.
func (c *Compactor) Estimate(conv *llm.Conversation) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.estimate(conv.Messages())
}

// Compact is agent.Compactor: before each request (reactive=false) it
// compacts when the context is over the threshold, and after a
// prompt-too-long error (reactive=true) it always compacts.
func (c *Compactor) Compact(ctx context.Context, conv *llm.Conversation, reactive bool) error {
	var events []Boundary
	err := func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.auto(ctx, conv, reactive, &events)
	}()
	c.emit(events)
	return err
}

// CompactNow summarises the conversation at the user's request (/compact),
// with their focus instructions, whatever its size.
func (c *Compactor) CompactNow(ctx context.Context, conv *llm.Conversation, instructions string) error {
	var events []Boundary
	err := func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		msgs := conv.Messages()
		if len(msgs) == 0 {
			return errors.New("nothing to compact yet")
		}
		b, err := c.full(ctx, conv, msgs, "manual", instructions, c.estimate(msgs), false)
		if err != nil {
			return err
		}
		c.failures = 0
		events = append(events, b)
		return nil
	}()
	c.emit(events)
	return err
}

// CompactWith is CompactNow under the name the slash-command package
// looks for (commands.ManualCompactor).
func (c *Compactor) CompactWith(ctx context.Context, conv *llm.Conversation, instructions string) error {
	return c.CompactNow(ctx, conv, instructions)
}

func (c *Compactor) emit(events []Boundary) {
	if c.o.OnBoundary == nil {
		return
	}
	for _, b := range events {
		c.o.OnBoundary(b)
	}
}

func (c *Compactor) auto(ctx context.Context, conv *llm.Conversation, reactive bool, events *[]Boundary) error {
	msgs := conv.Messages()
	if len(msgs) == 0 {
		return nil
	}
	lim := c.limits()
	pre := c.estimate(msgs)
	if reactive {
		// The provider said the prompt is too long: whatever the estimate
		// claimed, the conversation must shrink now.
		return c.fullAuto(ctx, conv, msgs, pre, events)
	}
	if c.cacheCold(msgs) {
		if cleared, n := c.micro(msgs); n > 0 {
			post := pre - estimateMessages(msgs) + estimateMessages(cleared)
			conv.Replace(cleared)
			*events = append(*events, Boundary{Trigger: "auto", Micro: true, PreTokens: pre, PostTokens: post, Messages: cleared})
			msgs, pre = cleared, post
		}
	}
	if pre < lim.threshold {
		return nil
	}
	// The cheap step first: clearing old results asks no model, so it runs
	// even when failed summaries have opened the breaker.
	if cleared, n := c.micro(msgs); n > 0 {
		post := pre - estimateMessages(msgs) + estimateMessages(cleared)
		if post < lim.microTarget {
			conv.Replace(cleared)
			*events = append(*events, Boundary{Trigger: "auto", Micro: true, PreTokens: pre, PostTokens: post, Messages: cleared})
			return nil
		}
	}
	if c.failures >= c.o.MaxFailures && pre < lim.hard {
		return nil
	}
	return c.fullAuto(ctx, conv, msgs, pre, events)
}

func (c *Compactor) fullAuto(ctx context.Context, conv *llm.Conversation, msgs []llm.Message, pre int, events *[]Boundary) error {
	// Old tool results are cleared in what the summary request sends: it
	// is smaller for it, and the cache is lost to the summary anyway.
	b, err := c.full(ctx, conv, msgs, "auto", "", pre, true)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.failures++
		if c.failures == c.o.MaxFailures {
			return fmt.Errorf("%w; automatic compaction is off after %d failures in a row (/compact still works)", err, c.failures)
		}
		return err
	}
	c.failures = 0
	*events = append(*events, b)
	return nil
}

// cacheCold reports whether no request has been made for longer than the
// provider's cache lifetime, so rewriting old messages costs nothing.
func (c *Compactor) cacheCold(msgs []llm.Message) bool {
	last := c.lastCall
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == llm.RoleAssistant && !msgs[j].Meta.Time.IsZero() {
			if msgs[j].Meta.Time.After(last) {
				last = msgs[j].Meta.Time
			}
			break
		}
	}
	return !last.IsZero() && c.o.Now().Sub(last) > c.o.CacheTTL
}

// full replaces the older part of the conversation with a summary,
// keeping the tail verbatim. microHead clears old tool results in what
// the summary request sends.
func (c *Compactor) full(ctx context.Context, conv *llm.Conversation, msgs []llm.Message, trigger, focus string, pre int, microHead bool) (Boundary, error) {
	lim := c.limits()
	k := tailStart(msgs, lim.tailMin, c.o.TailMessages, lim.tailMax)
	head, tail := msgs[:k], msgs[k:]
	sent := head
	if microHead {
		sent, _ = c.micro(head)
	}
	summary, err := c.summarize(ctx, sent, focus, lim)
	if err != nil {
		return Boundary{}, err
	}
	out := make([]llm.Message, 0, len(tail)+1)
	out = append(out, c.summaryMessage(summary, trigger, head, tail))
	for _, m := range tail {
		// Usage describes the request that produced m, whose prefix is
		// gone now; the next response reports the new size.
		m.Meta.Usage = nil
		out = append(out, m)
	}
	conv.Replace(out)
	return Boundary{Trigger: trigger, PreTokens: pre, PostTokens: c.fixed() + estimateMessages(out), Messages: out}, nil
}

// summaryMessage is the user message that replaces the head: the summary,
// then what must not be lost with it (instructions, recent files, todos,
// plan) as system reminders.
func (c *Compactor) summaryMessage(summary, trigger string, head, tail []llm.Message) llm.Message {
	var b strings.Builder
	b.WriteString("This session is being continued from an earlier conversation that ran out of context. The summary below covers the earlier part of it")
	if len(tail) > 0 {
		b.WriteString("; the most recent messages follow it unchanged")
	}
	b.WriteString(".\n\n<summary>\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n</summary>")
	if trigger == "auto" {
		b.WriteString("\n\nContinue the conversation from where it left off without asking the user any further questions. Continue with the last task you were asked to work on.")
	}
	blocks := []llm.Block{llm.Text{Text: b.String()}}
	for _, text := range c.attachments(head, tail) {
		blocks = append(blocks, llm.Text{Text: wrapReminder(text)})
	}
	return llm.Message{ID: newID(), Role: llm.RoleUser, Blocks: blocks,
		Meta: llm.Meta{Time: c.o.Now(), Status: llm.StatusComplete, Reminder: true}}
}

// wrapReminder is agent.WrapReminder (this package sits below agent).
func wrapReminder(text string) string {
	return "<system-reminder>\n" + strings.TrimSpace(text) + "\n</system-reminder>"
}
