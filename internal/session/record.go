package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// Record types written by this version. A reader skips types it does not
// know, so newer versions may add more.
const (
	TypeSession    = "session"    // Start: cwd and git branch when a process opened the session
	TypeMessage    = "message"    // Message: one finished conversation message
	TypeUsage      = "usage"      // Usage: tokens of one model request
	TypeCompact    = "compact"    // Compact: boundary; its messages replace all before it
	TypeModel      = "model"      // Model: the model changed
	TypeMode       = "mode"       // Mode: the permission mode changed
	TypeTitle      = "title"      // Title: a name for the session
	TypeCheckpoint = "checkpoint" // Checkpoint: a file's content before or after a tool changed it
	TypeRewind     = "rewind"     // Rewind: the conversation was cut back
)

// Record is one line of a transcript. Type says which of the optional
// fields is set.
type Record struct {
	Type string    `json:"type"`
	Time time.Time `json:"ts"`

	Start      *Start       `json:"session,omitempty"`
	Message    *llm.Message `json:"message,omitempty"`
	Usage      *llm.Usage   `json:"usage,omitempty"`
	Compact    *Compact     `json:"compact,omitempty"`
	Model      string       `json:"model,omitempty"`
	Mode       string       `json:"mode,omitempty"`
	Title      string       `json:"title,omitempty"`
	Checkpoint *Checkpoint  `json:"checkpoint,omitempty"`
	Rewind     *Rewind      `json:"rewind,omitempty"`
}

// Start describes the process that created, resumed or forked the session.
type Start struct {
	Source     string `json:"source"` // "startup", "resume" or "fork"
	Cwd        string `json:"cwd"`
	GitBranch  string `json:"git_branch,omitempty"`
	ForkedFrom string `json:"forked_from,omitempty"`
	PID        int    `json:"pid,omitempty"`
}

// Compact is a compaction boundary. Messages is the whole conversation
// right after compaction (summary and whatever was kept); on load it
// replaces every message before the boundary.
type Compact struct {
	Trigger  string        `json:"trigger,omitempty"` // "auto", "manual", "reactive"
	Messages []llm.Message `json:"messages"`
}

// Checkpoint records one side of a tool's change to a file. Before is set
// on the record written just before the change: the hash of the blob
// holding the previous content, or Absent. After is set on the record
// written just after it (and after a rewind restored the file): the hash of
// the content now on disk, or Absent.
type Checkpoint struct {
	Prompt string `json:"prompt"` // id of the user message that started the turn
	Path   string `json:"path"`   // absolute
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Mode   uint32 `json:"mode,omitempty"` // permission bits of the previous file
	// Restore marks the After record a code rewind wrote.
	Restore bool `json:"restore,omitempty"`
}

// Absent stands for "the file did not exist" in a Checkpoint.
const Absent = "absent"

// Rewind cuts the conversation back. A /rewind names the prompt: the
// conversation keeps what came before the last message with that id. When
// Prompt is empty or not found, the first Keep messages stay (a resume
// that dropped an unfinished tail writes this).
type Rewind struct {
	Prompt string `json:"prompt,omitempty"`
	Keep   int    `json:"keep"`
}

// encodeRecord renders rec as one JSON line ending in '\n'. HTML is not
// escaped so tool output reads as written when the transcript is opened
// for debugging.
func encodeRecord(buf *bytes.Buffer, rec Record) error {
	if rec.Type == "" {
		return fmt.Errorf("encode record: empty type")
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return fmt.Errorf("encode %s record: %w", rec.Type, err)
	}
	return nil
}
