package compact

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// summaryPrompt asks for the summary. The model drafts an <analysis> first
// (thinking on paper makes the summary more complete), then the <summary>,
// which is all that is kept.
const summaryPrompt = `Your task is to write a detailed summary of the conversation so far. It replaces the conversation: afterwards you continue the work from this summary (and the most recent messages, which are kept as they are), so it must hold everything needed to carry on without losing context. If the conversation begins with the summary of an earlier part, fold that summary into yours and keep everything it lists.

First, inside <analysis> tags, go through the conversation in order. For each part note what the user asked for and meant, what you did and how, the decisions made, file names, code snippets, function signatures and edits, the errors met and how they were fixed, and the user's feedback, especially where they asked you to do something differently. Check that nothing technical is missing.

Then write the summary inside <summary> tags, with these sections:

1. Primary request and intent: everything the user asked for, in detail.
2. Key technical concepts: the technologies, frameworks and ideas involved.
3. Files and code: every file read, changed or created, why it matters, and the key snippets (whole when short), with a note on each change.
4. Errors and fixes: each error met and how it was fixed, including what the user said about it.
5. Problem solving: the problems solved and any troubleshooting still under way.
6. All user messages: every message the user wrote (not tool results), verbatim and in order.
7. Pending tasks: what you were asked to do and have not done yet.
8. Current work: precisely what you were doing just before this summary, with file names and code.
9. Next step: the next step, only if it follows directly from the user's latest request and the current work; quote the latest messages word for word to show where you left off. If the last task was finished, say so and propose nothing new.

Answer with text only. Tools are unavailable for this answer: do not call any.`

// Retries of the summary request.
const (
	// maxTrimRetries is how often a summary request over the window is
	// retried with the oldest rounds dropped to cover the reported excess.
	maxTrimRetries = 3
	// trimFraction of the rounds is dropped when the excess is unknown,
	// and once more after maxTrimRetries.
	trimFraction = 0.2
	// maxTransientRetries is how often a rate-limited or overloaded
	// summary request is retried.
	maxTransientRetries = 2
)

// summarize asks the model for a summary of head and returns its text.
func (c *Compactor) summarize(ctx context.Context, head []llm.Message, focus string, lim limits) (string, error) {
	if len(head) == 0 {
		return "", errors.New("nothing to summarise")
	}
	prompt := summaryPrompt
	if focus = strings.TrimSpace(focus); focus != "" {
		prompt += "\n\nThe user asked the summary to pay special attention to the following:\n" + focus
	}
	msgs := head
	trims, transient := 0, 0
	for {
		provider, info := c.o.Model()
		req := llm.Request{
			Model: info.ID, System: c.o.System, Tools: c.tools(), NoTools: true, Cache: true,
			MaxTokens: lim.summary,
			Messages:  append(append([]llm.Message(nil), msgs...), llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: prompt}}}),
		}
		c.lastCall = c.o.Now()
		text, err := streamText(ctx, provider, req)
		if err == nil {
			return extractSummary(text)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		apiErr, ok := llm.AsError(err)
		switch {
		case ok && apiErr.Kind == llm.ErrPromptTooLong && trims <= maxTrimRetries:
			trims++
			fraction := 0.0
			gap := excessTokens(apiErr.Message)
			if gap <= 0 || trims > maxTrimRetries {
				fraction = trimFraction
			}
			next, dropped := dropOldest(msgs, gap, fraction)
			if !dropped {
				return "", fmt.Errorf("summary request: %w (nothing older left to drop)", err)
			}
			msgs = next
		case ok && apiErr.Retryable() && transient < maxTransientRetries:
			transient++
			if err := sleep(ctx, c.o.RetryDelay(transient, apiErr.RetryAfter)); err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("summary request: %w", err)
		}
	}
}

// streamText runs one request and returns the text of the answer.
func streamText(ctx context.Context, p llm.Provider, req llm.Request) (string, error) {
	s, err := p.Stream(ctx, req)
	if err != nil {
		return "", err
	}
	defer s.Close()
	texts := make(map[int]string)
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if done, ok := ev.(llm.BlockDone); ok {
			if t, ok := done.Block.(llm.Text); ok {
				texts[done.Index] = t.Text
			}
		}
	}
	idx := make([]int, 0, len(texts))
	for i := range texts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(texts[i])
	}
	return b.String(), nil
}

// extractSummary keeps what is inside <summary>; an answer without one is
// a failed compaction. A summary cut off by the output limit keeps what
// arrived.
func extractSummary(text string) (string, error) {
	start := strings.LastIndex(text, "<summary>")
	if start < 0 {
		return "", errors.New("the model's answer has no <summary>")
	}
	body := text[start+len("<summary>"):]
	if end := strings.Index(body, "</summary>"); end >= 0 {
		body = body[:end]
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return "", errors.New("the model's <summary> is empty")
	}
	return body, nil
}

// excessPatterns find "N tokens > M" (Anthropic) and OpenAI's "maximum
// context length is M tokens. However, your messages resulted in N tokens".
var (
	anthropicExcess = regexp.MustCompile(`(\d+) tokens > (\d+)`)
	openaiExcess    = regexp.MustCompile(`maximum context length is (\d+) tokens.*?resulted in (\d+) tokens`)
)

// excessTokens is by how much a prompt-too-long error says the prompt was
// over, or 0 when it does not say.
func excessTokens(msg string) int {
	if m := anthropicExcess.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		limit, _ := strconv.Atoi(m[2])
		return n - limit
	}
	if m := openaiExcess.FindStringSubmatch(msg); m != nil {
		limit, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		return n - limit
	}
	return 0
}

// dropOldest removes the oldest request/response rounds of msgs: enough
// to cover gap tokens, plus the given fraction of the rounds. A round
// starts at an assistant message, so a tool call and its results go
// together; the last round always stays. Leading summaries and notes are
// kept, and the user's own messages from the dropped rounds stay, quoted
// in a new note.
func dropOldest(msgs []llm.Message, gap int, fraction float64) ([]llm.Message, bool) {
	first := 0
	for first < len(msgs) && isSummary(msgs[first]) {
		first++
	}
	var starts []int
	for i := first; i < len(msgs); i++ {
		if msgs[i].Role == llm.RoleAssistant {
			starts = append(starts, i)
		}
	}
	if len(starts) < 2 {
		return msgs, false
	}
	// n counts the rounds dropped: everything before starts[n] goes.
	n := 0
	if gap > 0 {
		for n < len(starts)-1 {
			n++
			if estimateMessages(msgs[first:starts[n]]) >= gap {
				break
			}
		}
	}
	if fraction > 0 {
		n += max(int(float64(len(starts))*fraction), 1)
	}
	n = min(max(n, 1), len(starts)-1)
	cut := starts[n]
	var quoted []string
	for _, m := range msgs[first:cut] {
		if text := userWritten(m); text != "" {
			quoted = append(quoted, text)
		}
	}
	note := "[The oldest part of the conversation was left out so the summary request fits the context window."
	if len(quoted) > 0 {
		note += " The user's messages from that part, verbatim:\n\n" + strings.Join(quoted, "\n\n---\n\n")
	}
	note += "]"
	out := append([]llm.Message(nil), msgs[:first]...)
	out = append(out, llm.Message{ID: newID(), Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: note}}, Meta: llm.Meta{Reminder: true}})
	return append(out, msgs[cut:]...), true
}

// userWritten is the text the user typed in m: its text blocks outside
// system reminders, for user messages coda did not make up.
func userWritten(m llm.Message) string {
	if m.Role != llm.RoleUser || m.Meta.Reminder {
		return ""
	}
	var parts []string
	for _, b := range m.Blocks {
		t, ok := b.(llm.Text)
		if !ok || strings.HasPrefix(t.Text, "<system-reminder>") {
			continue
		}
		parts = append(parts, t.Text)
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// summaryIDPrefix marks the messages compaction writes.
const summaryIDPrefix = "compact_"

func isSummary(m llm.Message) bool { return strings.HasPrefix(m.ID, summaryIDPrefix) }

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return summaryIDPrefix + hex.EncodeToString(b[:])
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
