package compact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// What a summary must not lose goes back in as system reminders on the
// summary message: the project instructions, the files the model was
// working on, its todo list and its plan.

// fileTools are the tools whose file_path input names a file the model
// has seen.
var fileTools = map[string]bool{"Read": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

func (c *Compactor) attachments(head, tail []llm.Message) []string {
	var out []string
	if f := c.o.Instructions; f != nil {
		if text := strings.TrimSpace(f()); text != "" {
			out = append(out, text)
		}
	}
	out = append(out, c.recentFiles(head, tail)...)
	if env := c.o.Env; env != nil && env.Todos != nil {
		if items := env.Todos.List(); len(items) > 0 {
			out = append(out, todoText(items))
		}
	}
	if f := c.o.Plan; f != nil {
		if plan := strings.TrimSpace(f()); plan != "" {
			out = append(out, "The plan you are following, as it stood at the summary:\n\n"+plan)
		}
	}
	return out
}

func todoText(items []tools.Todo) string {
	var b strings.Builder
	b.WriteString("Your todo list at the time of the summary (keep it up to date with TodoWrite):")
	for i, t := range items {
		fmt.Fprintf(&b, "\n%d. [%s] %s", i+1, t.Status, t.Content)
	}
	return b.String()
}

// recentFiles re-attaches the files the head read or edited most recently
// (not those the tail shows anyway): the current content when small
// enough, otherwise the path.
func (c *Compactor) recentFiles(head, tail []llm.Message) []string {
	inTail := make(map[string]bool)
	for _, m := range tail {
		for _, u := range m.ToolUses() {
			if p := c.filePath(u); p != "" {
				inTail[p] = true
			}
		}
	}
	seen := make(map[string]bool)
	var paths []string
	for i := len(head) - 1; i >= 0 && len(paths) < c.o.Files; i-- {
		uses := head[i].ToolUses()
		for j := len(uses) - 1; j >= 0 && len(paths) < c.o.Files; j-- {
			p := c.filePath(uses[j])
			if p == "" || seen[p] || inTail[p] {
				continue
			}
			seen[p] = true
			if env := c.o.Env; env != nil && env.Files != nil && !env.Files.Seen(p) {
				continue
			}
			paths = append(paths, p)
		}
	}
	var out []string
	for _, p := range paths {
		if text := c.fileAttachment(p); text != "" {
			out = append(out, text)
		}
	}
	return out
}

// filePath is the absolute file a file tool call worked on, or "".
func (c *Compactor) filePath(u llm.ToolUse) string {
	if !fileTools[u.Name] {
		return ""
	}
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(u.Input, &in) != nil {
		return ""
	}
	p := in.FilePath
	if p == "" {
		p = in.NotebookPath
	}
	if p == "" {
		return ""
	}
	if c.o.Env != nil {
		return c.o.Env.Abs(p)
	}
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// fileAttachment renders one file as Read shows it (numbered lines), or
// names it when it is too large, binary or gone.
func (c *Compactor) fileAttachment(path string) string {
	limit := c.o.FileTokens * 4
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	tooLarge := fmt.Sprintf("You read or edited %s earlier in this session. It is too large to repeat after the summary (about %d tokens); Read it again if you need its content.",
		path, (info.Size()+3)/4)
	if info.Size() > int64(limit) {
		return tooLarge
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return ""
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fmt.Sprintf("You read %s earlier in this session (a binary file); Read it again if you need it.", path)
	}
	numbered := numberLines(string(data))
	if Tokens(numbered) > c.o.FileTokens {
		return tooLarge
	}
	if env := c.o.Env; env != nil && env.Files != nil {
		// The model sees the current content now, so edits may go ahead.
		env.Files.Record(path, data, info.ModTime())
	}
	return fmt.Sprintf("The current content of %s, which you read or edited earlier in this session (numbered as Read shows it):\n%s", path, numbered)
}

func numberLines(text string) string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return "(empty file)"
	}
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d\t%s", i+1, line)
	}
	return b.String()
}
