package tui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// maxHistory is how many prompts are kept in memory for Up/Down.
const maxHistory = 1000

// history is the prompts typed in this project, oldest first, kept in a
// JSON-lines file so they survive the session. Up/Down walk it; the text
// being typed is kept as the draft below the newest entry.
type history struct {
	path    string // "" keeps history in memory only
	entries []string
	idx     int // len(entries) means the draft
	draft   string
}

type historyLine struct {
	Prompt string    `json:"prompt"`
	Time   time.Time `json:"time"`
}

// loadHistory reads the history file; a missing or damaged file gives
// what could be read.
func loadHistory(path string) *history {
	h := &history{path: path}
	if path != "" {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var l historyLine
				if json.Unmarshal(sc.Bytes(), &l) == nil && l.Prompt != "" {
					h.entries = append(h.entries, l.Prompt)
				}
			}
			f.Close()
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	h.idx = len(h.entries)
	return h
}

// add records a submitted prompt and returns to the draft.
func (h *history) add(prompt string, now time.Time) error {
	h.idx = len(h.entries)
	h.draft = ""
	if len(h.entries) > 0 && h.entries[len(h.entries)-1] == prompt {
		h.idx = len(h.entries)
		return nil
	}
	h.entries = append(h.entries, prompt)
	if len(h.entries) > maxHistory {
		h.entries = h.entries[1:]
	}
	h.idx = len(h.entries)
	if h.path == "" {
		return nil
	}
	data, err := json.Marshal(historyLine{Prompt: prompt, Time: now})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("prompt history %s: %w", h.path, werr)
	}
	return nil
}

// older steps back from current (the editor's text), reporting the entry
// to show.
func (h *history) older(current string) (string, bool) {
	if h.idx == 0 {
		return "", false
	}
	if h.idx == len(h.entries) {
		h.draft = current
	}
	h.idx--
	return h.entries[h.idx], true
}

// newer steps forward; past the newest entry it returns the draft.
func (h *history) newer() (string, bool) {
	if h.idx >= len(h.entries) {
		return "", false
	}
	h.idx++
	if h.idx == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.idx], true
}

// last is the newest entry.
func (h *history) last() (string, bool) {
	if len(h.entries) == 0 {
		return "", false
	}
	return h.entries[len(h.entries)-1], true
}
