package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// The built-in reminder sources. Each keeps its own small state; all are
// safe to call from one goroutine at a time (the agent's loop) and guard
// themselves anyway.

// StartReminder yields the project instructions with the first user
// message of a conversation (again after Reset).
func (p *Project) StartReminder() ReminderSource {
	return func() []string {
		p.mu.Lock()
		if p.sent {
			p.mu.Unlock()
			return nil
		}
		p.sent = true
		p.mu.Unlock()
		if text := p.Instructions(); text != "" {
			return []string{text}
		}
		return nil
	}
}

// AlreadySent marks the instructions as present in the conversation when
// one of msgs carries them word for word (a resumed session), so they are
// not sent twice. Instructions that changed since are sent again.
func (p *Project) AlreadySent(msgs []llm.Message) {
	text := p.Instructions()
	if text == "" {
		return
	}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if t, ok := b.(llm.Text); ok && strings.Contains(t.Text, text) {
				p.mu.Lock()
				p.sent = true
				p.mu.Unlock()
				return
			}
		}
	}
}

// TouchReminder yields the rules and nested AGENTS.md files that apply to
// files the model has read or written since the last call.
func (p *Project) TouchReminder(files *tools.FileState) ReminderSource {
	return func() []string {
		if text := p.Touch(files.Paths()); text != "" {
			return []string{text}
		}
		return nil
	}
}

// DefaultTodoNudgeAfter is how many user messages may pass without the
// todo list changing before the model is reminded of it.
const DefaultTodoNudgeAfter = 10

// TodoNudge reminds the model of its todo list when the list has
// unfinished items and has not changed for after user messages (about as
// many requests). The count starts over after each nudge.
func TodoNudge(todos *tools.Todos, after int) ReminderSource {
	if after <= 0 {
		after = DefaultTodoNudgeAfter
	}
	var (
		mu    sync.Mutex
		last  []tools.Todo
		quiet int
	)
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		cur := todos.List()
		if !slices.Equal(cur, last) {
			last, quiet = cur, 0
			return nil
		}
		if !slices.ContainsFunc(cur, func(t tools.Todo) bool { return t.Status != "completed" }) {
			return nil
		}
		if quiet++; quiet < after {
			return nil
		}
		quiet = 0
		return []string{todoNudgeText(cur)}
	}
}

func todoNudgeText(items []tools.Todo) string {
	var b strings.Builder
	b.WriteString("The TodoWrite tool has not been used for a while. If the list below no longer matches what you are doing, update it: mark finished items completed, drop stale ones, add what is missing. If it is still accurate, carry on. Do not mention this reminder to the user.\n\nYour todo list:")
	for i, t := range items {
		fmt.Fprintf(&b, "\n%d. [%s] %s", i+1, t.Status, t.Content)
	}
	return b.String()
}

// maxWatchedFileBytes bounds the files ChangedFiles re-reads to compare.
const maxWatchedFileBytes = 32 << 20

// ChangedFiles reminds the model of files that changed on disk since it
// last read or wrote them (the user edited them, a formatter or a git
// command rewrote them), and of files that disappeared. Each change is
// reported once.
func ChangedFiles(files *tools.FileState) ReminderSource {
	w := &changeWatch{files: files, verified: map[string]time.Time{},
		reported: map[string]time.Time{}, gone: map[string]bool{}}
	return w.check
}

type changeWatch struct {
	files *tools.FileState

	mu       sync.Mutex
	verified map[string]time.Time // mtime at which the content matched what the model saw
	reported map[string]time.Time // mtime already reported as changed
	gone     map[string]bool      // reported as deleted
}

func (w *changeWatch) check() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var changed, deleted []string
	for _, p := range w.files.Paths() {
		info, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !w.gone[p] {
				w.gone[p] = true
				deleted = append(deleted, p)
			}
			continue
		}
		delete(w.gone, p)
		mt := info.ModTime()
		if v, ok := w.verified[p]; ok && v.Equal(mt) {
			continue
		}
		if r, ok := w.reported[p]; ok && r.Equal(mt) {
			continue
		}
		if !info.Mode().IsRegular() || info.Size() > maxWatchedFileBytes {
			continue
		}
		content, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if w.files.CheckFresh(p, content, mt) == nil {
			w.verified[p] = mt
			delete(w.reported, p)
			continue
		}
		w.reported[p] = mt
		changed = append(changed, p)
	}
	var out []string
	if len(changed) > 0 {
		out = append(out, "These files changed on disk since you last read or wrote them (the user, a formatter or another program edited them):\n- "+
			strings.Join(changed, "\n- ")+"\nWhat you saw of them may be out of date: Read them again before relying on their content or editing them.")
	}
	if len(deleted) > 0 {
		out = append(out, "These files you read or wrote no longer exist on disk:\n- "+strings.Join(deleted, "\n- "))
	}
	return out
}
