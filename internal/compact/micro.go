package compact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coda-cli/coda/internal/llm"
)

// Layer 4: micro-compaction clears old tool results without asking the
// model anything. It rewrites old messages, so it runs only when the
// provider's cache is cold anyway or a full compaction is due.

const (
	clearedPrefix = "[Old tool result cleared to save context: "
	// minClearTokens: smaller results are not worth a placeholder.
	minClearTokens = 200
	// maxInputShown caps the tool input quoted in a placeholder.
	maxInputShown = 200
)

// micro returns a copy of msgs in which every tool result except the
// newest KeepResults is replaced by a one-line placeholder, and how many
// it replaced. msgs is not modified.
func (c *Compactor) micro(msgs []llm.Message) ([]llm.Message, int) {
	type at struct{ msg, block int }
	uses := make(map[string]llm.ToolUse)
	var results []at
	for i, m := range msgs {
		for j, b := range m.Blocks {
			switch v := b.(type) {
			case llm.ToolUse:
				uses[v.ID] = v
			case llm.ToolResult:
				results = append(results, at{i, j})
			}
		}
	}
	if len(results) <= c.o.KeepResults {
		return msgs, 0
	}
	out := append([]llm.Message(nil), msgs...)
	copied := make(map[int]bool)
	n := 0
	for _, p := range results[:len(results)-c.o.KeepResults] {
		r := out[p.msg].Blocks[p.block].(llm.ToolResult)
		if blockTokens(r) < minClearTokens || cleared(r) {
			continue
		}
		if !copied[p.msg] {
			out[p.msg].Blocks = append([]llm.Block(nil), out[p.msg].Blocks...)
			copied[p.msg] = true
		}
		out[p.msg].Blocks[p.block] = c.placeholder(r, uses[r.ToolUseID])
		n++
	}
	if n == 0 {
		return msgs, 0
	}
	for i := range out {
		// The reported usage measured the old content.
		out[i].Meta.Usage = nil
	}
	return out, n
}

func cleared(r llm.ToolResult) bool {
	return len(r.Content) == 1 && strings.HasPrefix(textOf(r.Content[0]), clearedPrefix)
}

func textOf(b llm.Block) string {
	if t, ok := b.(llm.Text); ok {
		return t.Text
	}
	return ""
}

// placeholder replaces r with a line naming the call and where its full
// output can be read again: the persisted file, written now if need be.
func (c *Compactor) placeholder(r llm.ToolResult, use llm.ToolUse) llm.ToolResult {
	name := use.Name
	if name == "" {
		name = "tool"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s %s.", clearedPrefix, name, shortInput(use.Input))
	text := resultText(r)
	where := persistedPath(text)
	if where == "" && strings.TrimSpace(text) != "" {
		if p, err := c.writeResult(r.ToolUseID, text); err == nil {
			where = fmt.Sprintf("%s (%s)", p, humanBytes(len(text)))
		}
	}
	switch {
	case where != "":
		fmt.Fprintf(&b, " Its full output is saved in %s; Read that file if you need it again.]", where)
	case strings.TrimSpace(text) == "":
		b.WriteString(" Run the tool again if you need its output.]")
	default:
		b.WriteString(" Its full output is in the session transcript; run the tool again if you need it.]")
	}
	return llm.ToolResult{ToolUseID: r.ToolUseID, IsError: r.IsError, Content: []llm.Block{llm.Text{Text: b.String()}}}
}

// persistedPath finds the file a <persisted-output> block points to.
func persistedPath(text string) string {
	const marker = "Full output saved to: "
	if !strings.HasPrefix(text, "<persisted-output>") {
		return ""
	}
	i := strings.Index(text, marker)
	if i < 0 {
		return ""
	}
	rest := text[i+len(marker):]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	return strings.TrimSpace(rest)
}

// shortInput renders a tool input compactly, cut to maxInputShown.
func shortInput(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			s = string(b)
		}
	}
	if s == "" {
		s = "{}"
	}
	if len(s) > maxInputShown {
		cut := maxInputShown
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
