package llmtest

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Block is one scripted content block of an assistant answer.
type Block struct {
	kind  blockKind
	text  string // text, thinking text or redacted data
	id    string // tool call id; "" means generated when served
	name  string // tool name
	input string // tool input JSON, streamed verbatim
}

type blockKind int

const (
	kindText blockKind = iota
	kindThinking
	kindRedactedThinking
	kindToolCall
)

// Text scripts a text block.
func Text(s string) Block { return Block{kind: kindText, text: s} }

// Thinking scripts a visible thinking block. The fake signs the text as it
// streams it and rejects a later request that sends it back altered.
// Over Chat Completions it streams as delta.reasoning_content, the field
// DeepSeek-style compatible servers use.
func Thinking(text string) Block { return Block{kind: kindThinking, text: text} }

// RedactedThinking scripts an encrypted thinking block carrying data.
// Chat Completions has no such block; the OpenAI side leaves it out.
func RedactedThinking(data string) Block { return Block{kind: kindRedactedThinking, text: data} }

// ToolCall scripts a tool call. An empty id is replaced by a generated one
// ("toolu_..." or "call_...") when the turn is served. inputJSON is streamed
// verbatim, so a test can script malformed input on purpose; "" streams an
// empty input, which clients read as {}.
func ToolCall(id, name, inputJSON string) Block {
	return Block{kind: kindToolCall, id: id, name: name, input: inputJSON}
}

// Turn is one scripted answer: content blocks, or a fault.
type Turn struct {
	blocks     []Block
	stop       string
	usage      *scriptedUsage
	delay      time.Duration
	fault      fault
	retryAfter time.Duration
}

type scriptedUsage struct{ input, output int }

type fault int

const (
	faultNone fault = iota
	faultRateLimited
	faultOverloaded
	faultServerError
	faultPromptTooLong
	faultOverloadedMidStream
	faultDropMidStream
)

// httpFault reports whether the fault answers with an HTTP error status
// instead of a stream.
func (f fault) httpFault() bool {
	switch f {
	case faultRateLimited, faultOverloaded, faultServerError, faultPromptTooLong:
		return true
	}
	return false
}

// Reply scripts an answer made of blocks. Its stop reason is tool_use when
// any block is a ToolCall, end_turn otherwise.
func Reply(blocks ...Block) Turn { return Turn{blocks: blocks} }

// WithStop overrides the stop reason. Either API's vocabulary works and is
// translated for the other: "max_tokens" is served to OpenAI clients as
// "length", "length" to Anthropic clients as "max_tokens".
func (t Turn) WithStop(reason string) Turn {
	t.stop = reason
	return t
}

// WithUsage overrides the computed usage: the answer reports exactly input
// uncached input tokens, no cache reads or writes, and output tokens.
func (t Turn) WithUsage(input, output int) Turn {
	t.usage = &scriptedUsage{input: input, output: output}
	return t
}

// WithDelay pauses d between consecutive events of the stream, so a test
// can interrupt a client mid-answer.
func (t Turn) WithDelay(d time.Duration) Turn {
	t.delay = d
	return t
}

// RateLimited answers 429 with the API's rate-limit error body and a
// retry-after header (whole seconds, rounded up). When retryAfter is not a
// whole number of seconds a retry-after-ms header carries the exact value,
// which both official SDKs prefer.
func RateLimited(retryAfter time.Duration) Turn {
	return Turn{fault: faultRateLimited, retryAfter: retryAfter}
}

// Overloaded answers Anthropic's 529 overloaded_error, or OpenAI's 503.
func Overloaded() Turn { return Turn{fault: faultOverloaded} }

// ServerError answers 500 with the API's internal-error body.
func ServerError() Turn { return Turn{fault: faultServerError} }

// PromptTooLong answers the API's 400 for a prompt over the context window:
// "prompt is too long: N tokens > M maximum" (Anthropic) or
// context_length_exceeded (OpenAI). M is the window set with
// SetContextWindow, else 200000; N is the request's estimate, at least M+1.
func PromptTooLong() Turn { return Turn{fault: faultPromptTooLong} }

// OverloadedMidStream answers HTTP 200, streams blocks completely, then
// fails the stream with an overloaded error event instead of finishing it.
func OverloadedMidStream(blocks ...Block) Turn {
	return Turn{blocks: blocks, fault: faultOverloadedMidStream}
}

// DropMidStream answers HTTP 200, streams blocks completely, then closes
// the TCP connection without finishing the stream.
func DropMidStream(blocks ...Block) Turn {
	return Turn{blocks: blocks, fault: faultDropMidStream}
}

func (t Turn) hasToolCall() bool {
	for _, b := range t.blocks {
		if b.kind == kindToolCall {
			return true
		}
	}
	return false
}

// anthropicStop is the turn's stop reason in Anthropic's vocabulary.
func (t Turn) anthropicStop() string {
	switch t.stop {
	case "":
		if t.hasToolCall() {
			return "tool_use"
		}
		return "end_turn"
	case "stop":
		return "end_turn"
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return t.stop
}

// openAIFinish is the turn's finish_reason in OpenAI's vocabulary.
func (t Turn) openAIFinish() string {
	switch t.anthropicStop() {
	case "end_turn", "stop_sequence", "pause_turn":
		return "stop"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return t.stop
}

// outputTokens estimates the answer's output tokens from its content;
// thinking is the part spent on thinking blocks.
func (t Turn) outputTokens() (total, thinking int) {
	for _, b := range t.blocks {
		switch b.kind {
		case kindToolCall:
			total += estimateTokens(len(b.name) + len(b.input))
		case kindThinking, kindRedactedThinking:
			n := estimateTokens(len(b.text))
			total += n
			thinking += n
		default:
			total += estimateTokens(len(b.text))
		}
	}
	return max(total, 1), thinking
}

// pieces splits s into several fragments at rune boundaries, the way the
// APIs stream deltas: short texts in a few bytes, long ones in up to 256.
func pieces(s string) []string {
	if s == "" {
		return nil
	}
	size := min(max(len(s)/8, 4), 256)
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// joinLines joins the non-empty parts with newlines.
func joinLines(parts []string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}
