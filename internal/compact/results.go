package compact

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/coda-cli/coda/internal/llm"
)

// Layer 1: large tool results go to disk. The model sees a short
// <persisted-output> block instead, with the size, the path and a
// preview, and can Read the file. Only new results pass through here, so
// nothing the provider has cached ever changes.

// previewBytes is how much of a persisted output the model sees inline.
const previewBytes = 2000

// resultsDir is where persisted outputs live, under the session directory.
func (c *Compactor) resultsDir() string {
	if c.o.Dir == "" {
		return ""
	}
	return filepath.Join(c.o.Dir, "tool-results")
}

// ProcessResults persists every result over the single-result limit, then,
// while the message's results together exceed the per-message budget, the
// largest of the rest. It is the agent's Config.ProcessResults.
func (c *Compactor) ProcessResults(results []llm.ToolResult) []llm.ToolResult {
	lim := c.limits()
	out := append([]llm.ToolResult(nil), results...)
	sizes := make([]int, len(out))
	total := 0
	for i, r := range out {
		sizes[i] = blockTokens(r)
		total += sizes[i]
	}
	done := make([]bool, len(out))
	shrink := func(i int) {
		out[i] = c.persist(out[i])
		done[i] = true
		n := blockTokens(out[i])
		total += n - sizes[i]
		sizes[i] = n
	}
	for i := range out {
		if sizes[i] > lim.result && textLen(out[i]) > 0 {
			shrink(i)
		}
	}
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })
	for _, i := range order {
		if total <= lim.message {
			break
		}
		if done[i] || textLen(out[i]) <= 2*previewBytes {
			continue
		}
		shrink(i)
	}
	return out
}

func textLen(r llm.ToolResult) int {
	n := 0
	for _, b := range r.Content {
		if t, ok := b.(llm.Text); ok {
			n += len(t.Text)
		}
	}
	return n
}

func resultText(r llm.ToolResult) string {
	var parts []string
	for _, b := range r.Content {
		if t, ok := b.(llm.Text); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// persist writes r's text to the results directory and returns r with the
// text replaced by a <persisted-output> block. Images stay. When the file
// cannot be written, the text is cut to the preview, saying so.
func (c *Compactor) persist(r llm.ToolResult) llm.ToolResult {
	text := resultText(r)
	path, err := c.writeResult(r.ToolUseID, text)
	var block string
	if err != nil {
		block = fmt.Sprintf("<persisted-output>\nOutput too large (%s) and it could not be saved to a file (%v), so only its beginning is shown.\n\nPreview (first %s):\n%s\n</persisted-output>",
			sizeOf(text), err, humanBytes(previewBytes), preview(text))
	} else {
		block = fmt.Sprintf("<persisted-output>\nOutput too large (%s). Full output saved to: %s\nRead that file to see the rest (with offset and limit for a part of it).\n\nPreview (first %s):\n%s\n</persisted-output>",
			sizeOf(text), path, humanBytes(previewBytes), preview(text))
	}
	content := []llm.Block{llm.Text{Text: block}}
	for _, b := range r.Content {
		if _, ok := b.(llm.Text); !ok {
			content = append(content, b)
		}
	}
	r.Content = content
	return r
}

// writeResult saves text as <dir>/tool-results/<id>.txt.
func (c *Compactor) writeResult(id, text string) (string, error) {
	dir := c.resultsDir()
	if dir == "" {
		return "", fmt.Errorf("no session directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, safeName(id)+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// safeName keeps an id usable as a file name whatever the model sent.
func safeName(id string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, id)
	if name == "" {
		return "result"
	}
	return name
}

// preview is the beginning of text, at most previewBytes, ending at a line
// break when one falls in its second half.
func preview(text string) string {
	if len(text) <= previewBytes {
		return text
	}
	cut := previewBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl > previewBytes/2 {
		cut = nl
	}
	return text[:cut] + "\n..."
}

func sizeOf(text string) string {
	return fmt.Sprintf("%s, about %d tokens", humanBytes(len(text)), Tokens(text))
}

func humanBytes(n int) string {
	switch {
	case n >= 1000000:
		return fmt.Sprintf("%.1f MB", float64(n)/1000000)
	case n >= 1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%d bytes", n)
}
