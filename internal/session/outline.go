package session

import (
	"strings"
	"time"
	"unicode"

	"github.com/coda-cli/coda/internal/llm"
)

// Prompt is a message the user typed, a point /rewind can go back to.
type Prompt struct {
	ID   string    `json:"id"`
	Text string    `json:"text,omitempty"`
	Time time.Time `json:"time,omitzero"`
}

// outline follows the shape of the conversation without holding it: its
// length and where the user's prompts sit. Rewinds are decided here, so
// a full load, a live session and a listing agree on what a rewind keeps.
type outline struct {
	Count   int          `json:"count"`
	Prompts []promptMark `json:"prompts,omitempty"`
}

type promptMark struct {
	Prompt
	At int `json:"at"` // index of the prompt in the conversation
}

func (o *outline) add(m llm.Message, recTime time.Time) {
	if isPrompt(m) {
		t := m.Meta.Time
		if t.IsZero() {
			t = recTime
		}
		o.Prompts = append(o.Prompts, promptMark{Prompt: Prompt{ID: m.ID, Text: typedText(m), Time: t}, At: o.Count})
	}
	o.Count++
}

func (o *outline) reset(msgs []llm.Message, recTime time.Time) {
	o.Count, o.Prompts = 0, nil
	for _, m := range msgs {
		o.add(m, recTime)
	}
}

// rewind applies rw and returns how many messages the conversation keeps.
func (o *outline) rewind(rw Rewind) int {
	keep := max(0, min(rw.Keep, o.Count))
	if at, ok := o.find(rw.Prompt); ok {
		keep = at
	}
	o.truncate(keep)
	return keep
}

func (o *outline) truncate(keep int) {
	o.Count = min(o.Count, keep)
	i := len(o.Prompts)
	for i > 0 && o.Prompts[i-1].At >= keep {
		i--
	}
	o.Prompts = o.Prompts[:i]
}

// find returns the position of the newest prompt with id.
func (o *outline) find(id string) (int, bool) {
	if id == "" {
		return 0, false
	}
	for i := len(o.Prompts) - 1; i >= 0; i-- {
		if o.Prompts[i].ID == id {
			return o.Prompts[i].At, true
		}
	}
	return 0, false
}

func (o *outline) prompts() []Prompt {
	out := make([]Prompt, len(o.Prompts))
	for i, p := range o.Prompts {
		out[i] = p.Prompt
	}
	return out
}

// typedText is what the user typed in m: its text blocks without the
// <system-reminder> blocks coda appends (instructions, notices).
func typedText(m llm.Message) string {
	var b strings.Builder
	for _, blk := range m.Blocks {
		t, ok := blk.(llm.Text)
		if !ok || strings.HasPrefix(strings.TrimSpace(t.Text), "<system-reminder>") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// isPrompt reports whether m is something the user typed: a user message,
// not a reminder, carrying no tool results.
func isPrompt(m llm.Message) bool {
	if m.Role != llm.RoleUser || m.Meta.Reminder {
		return false
	}
	content := false
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case llm.ToolResult:
			return false
		case llm.Text:
			content = content || b.Text != ""
		case llm.Image:
			content = true
		}
	}
	return content
}

// titleLen is about how long a title made from a prompt may be.
const titleLen = 60

// shortTitle makes a one-line title of a prompt: whitespace runs become
// one space, and past titleLen characters it is cut at a word boundary.
func shortTitle(prompt string) string {
	s := strings.Join(strings.FieldsFunc(prompt, unicode.IsSpace), " ")
	r := []rune(s)
	if len(r) <= titleLen {
		return s
	}
	cut := titleLen
	for i := titleLen; i > titleLen*2/3; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ") + "…"
}
