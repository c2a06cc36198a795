package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/coda-cli/coda/internal/llm"
)

// answer assembles the chunks of one streamed answer into llm events. Block
// indices are handed out in order of first appearance, so reasoning, which
// servers stream first, gets the block before the text and the tool calls.
type answer struct {
	model   string // the requested model, for servers that do not echo it
	started bool

	nextBlock     int
	thinking      strings.Builder
	thinkingBlock int // -1 until reasoning arrives
	text          strings.Builder
	textBlock     int // -1 until text arrives
	refused       bool

	calls   []*toolCall
	byIndex map[int]*toolCall // the latest call at each wire index
	last    *toolCall         // the call a fragment without index continues

	finishReason string
	usage        llm.Usage
}

// toolCall is one tool call being assembled.
type toolCall struct {
	block   int
	id      string
	name    string
	args    []byte
	started bool // ToolUseStart sent
}

func newAnswer(model string) *answer {
	return &answer{model: model, thinkingBlock: -1, textBlock: -1, byIndex: make(map[int]*toolCall)}
}

// add folds one chunk in and returns the events it yields.
func (a *answer) add(c chunk) []llm.Event {
	var events []llm.Event
	if !a.started {
		events = append(events, a.start(string(c.ID), string(c.Model)))
	}
	if c.Usage != nil {
		a.usage = convertUsage(*c.Usage)
	}
	for _, ch := range c.Choices {
		// Only the first choice is ours; coda never asks for n > 1.
		if ch.Index.Set && ch.Index.Value != 0 {
			continue
		}
		events = a.addDelta(ch.Delta, events)
		if ch.FinishReason != "" {
			a.finishReason = string(ch.FinishReason)
		}
	}
	return events
}

func (a *answer) start(id, model string) llm.Event {
	a.started = true
	if model == "" {
		model = a.model
	}
	return llm.MessageStart{ID: id, Model: model}
}

func (a *answer) addDelta(d delta, events []llm.Event) []llm.Event {
	if r := d.reasoning(); r != "" {
		if a.thinkingBlock < 0 {
			a.thinkingBlock = a.block()
		}
		a.thinking.WriteString(r)
		events = append(events, llm.ThinkingDelta{Index: a.thinkingBlock, Text: r})
	}
	// A refusal is shown like text: it is what the model had to say.
	for _, s := range []lenientString{d.Content, d.Refusal} {
		if s == "" {
			continue
		}
		if a.textBlock < 0 {
			a.textBlock = a.block()
		}
		a.text.WriteString(string(s))
		events = append(events, llm.TextDelta{Index: a.textBlock, Text: string(s)})
	}
	if d.Refusal != "" {
		a.refused = true
	}
	for _, tc := range d.ToolCalls {
		events = a.addToolCall(tc, events)
	}
	return events
}

func (a *answer) block() int {
	a.nextBlock++
	return a.nextBlock - 1
}

// addToolCall folds in one tool-call fragment. Fragments are keyed by their
// index; the quirks of compatible servers are handled here: a missing index
// (or -1) continues the latest call, an index reused with a new id or a new
// name starts a new call, and a missing id is made up when the call starts.
func (a *answer) addToolCall(d toolCallDelta, events []llm.Event) []llm.Event {
	cur := a.last
	if d.Index.Set {
		cur = a.byIndex[d.Index.Value]
	}
	if cur != nil && a.startsNewCall(cur, d) {
		cur = nil
	}
	if cur == nil {
		cur = &toolCall{block: a.block()}
		a.calls = append(a.calls, cur)
	}
	if d.Index.Set {
		a.byIndex[d.Index.Value] = cur
	}
	a.last = cur
	if cur.id == "" && d.ID != "" {
		cur.id = string(d.ID)
	}
	if cur.name == "" && d.Function.Name != "" {
		cur.name = string(d.Function.Name)
	}
	cur.args = append(cur.args, d.Function.Arguments...)
	if !cur.started && cur.name != "" {
		events = append(events, a.startCall(cur))
	}
	return events
}

// startsNewCall reports whether fragment d begins a call other than cur,
// though it carries cur's index.
func (a *answer) startsNewCall(cur *toolCall, d toolCallDelta) bool {
	if d.ID != "" && cur.id != "" {
		return string(d.ID) != cur.id
	}
	if d.Function.Name == "" || cur.name == "" {
		return false
	}
	// No ids to go by: a name on a call that already has one starts another
	// call, unless the server merely repeats the name on every fragment.
	if string(d.Function.Name) != cur.name {
		return true
	}
	return len(cur.args) > 0 && json.Valid(cur.args) && len(d.Function.Arguments) > 0
}

func (a *answer) startCall(c *toolCall) llm.Event {
	c.started = true
	if c.id == "" {
		c.id = fmt.Sprintf("call_%d", slices.Index(a.calls, c))
	}
	return llm.ToolUseStart{Index: c.block, ID: c.id, Name: c.name}
}

// finish returns the closing events: each block done in index order, then
// Stop with the reason and usage.
func (a *answer) finish() []llm.Event {
	var events []llm.Event
	if !a.started {
		events = append(events, a.start("", ""))
	}
	var done []llm.BlockDone
	if a.thinkingBlock >= 0 {
		done = append(done, llm.BlockDone{Index: a.thinkingBlock, Block: llm.Thinking{Thinking: a.thinking.String()}})
	}
	if a.textBlock >= 0 {
		done = append(done, llm.BlockDone{Index: a.textBlock, Block: llm.Text{Text: a.text.String()}})
	}
	for _, c := range a.calls {
		if !c.started {
			events = append(events, a.startCall(c))
		}
		input := bytes.TrimSpace(c.args)
		if len(input) == 0 {
			input = []byte("{}")
		}
		done = append(done, llm.BlockDone{Index: c.block, Block: llm.ToolUse{ID: c.id, Name: c.name, Input: json.RawMessage(input)}})
	}
	slices.SortFunc(done, func(x, y llm.BlockDone) int { return x.Index - y.Index })
	for _, d := range done {
		events = append(events, d)
	}
	return append(events, llm.Stop{Reason: a.stopReason(), Usage: a.usage})
}

// stopReason maps finish_reason. Tool calls decide it whatever the server
// says: some report "stop" after calling tools, and the calls must run.
func (a *answer) stopReason() llm.StopReason {
	if len(a.calls) > 0 {
		return llm.StopToolUse
	}
	switch a.finishReason {
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	}
	if a.refused {
		return llm.StopRefusal
	}
	// "stop", and "tool_calls" without any call, end the turn.
	return llm.StopEndTurn
}

// convertUsage maps OpenAI usage, whose prompt_tokens include the cached
// ones, onto llm.Usage, whose InputTokens exclude them.
func convertUsage(u usage) llm.Usage {
	cached := u.PromptTokensDetails.CachedTokens.Value
	if cached == 0 {
		cached = u.PromptCacheHitTokens.Value
	}
	cached = min(max(cached, 0), u.PromptTokens.Value)
	return llm.Usage{
		InputTokens:          u.PromptTokens.Value - cached,
		CacheReadInputTokens: cached,
		OutputTokens:         u.CompletionTokens.Value,
	}
}
