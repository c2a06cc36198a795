package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

func TestRoundTripEveryBlockType(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	msgs := []llm.Message{
		{ID: "m1", Role: llm.RoleUser, Blocks: []llm.Block{
			llm.Text{Text: "look at <this> & \"that\"\n\ttabbed ✓"},
			llm.Image{MediaType: "image/png", Data: "iVBORw0KGgo="},
		}, Meta: llm.Meta{Time: at}},
		{ID: "m2", Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Thinking{Thinking: "let me think", Signature: "sig=="},
			llm.RedactedThinking{Data: "opaque"},
			llm.Text{Text: "running it"},
			llm.ToolUse{ID: "tu1", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la","timeout":5}`)},
			llm.ToolUse{ID: "tu2", Name: "Read", Input: json.RawMessage(`{"file_path":"/x"}`)},
		}, Meta: llm.Meta{Time: at, Model: "claude-x", Status: llm.StatusComplete, StopReason: llm.StopToolUse,
			Usage: &llm.Usage{InputTokens: 10, OutputTokens: 20, CacheCreationInputTokens: 30, CacheReadInputTokens: 40}}},
		{ID: "m3", Role: llm.RoleUser, Blocks: []llm.Block{
			llm.ToolResult{ToolUseID: "tu1", Content: []llm.Block{llm.Text{Text: "a\nb"}, llm.Image{MediaType: "image/jpeg", Data: "/9j/"}}},
			llm.ToolResult{ToolUseID: "tu2", Content: []llm.Block{llm.Text{Text: "no such file"}}, IsError: true},
		}},
		{ID: "m4", Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "<system-reminder>x</system-reminder>"}}, Meta: llm.Meta{Reminder: true}},
		{ID: "m5", Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "done"}}, Meta: llm.Meta{Status: llm.StatusInterrupted}},
	}
	mustAppend(t, sess, msgs...)
	for _, rec := range []Record{
		{Type: TypeUsage, Usage: &llm.Usage{InputTokens: 1, OutputTokens: 2}},
		{Type: TypeUsage, Usage: &llm.Usage{InputTokens: 3, CacheReadInputTokens: 4}},
		{Type: TypeModel, Model: "anthropic/claude-y"},
		{Type: TypeMode, Mode: "acceptEdits"},
		{Type: TypeTitle, Title: "Named session"},
	} {
		if err := sess.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}

	l, err := st.Load(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.Messages, msgs) {
		got, _ := json.Marshal(l.Messages)
		want, _ := json.Marshal(msgs)
		t.Fatalf("messages differ after reload\ngot  %s\nwant %s", got, want)
	}
	if l.Skipped != 0 || l.Dropped != 0 || l.Unknown != 0 {
		t.Errorf("clean file: skipped %d dropped %d unknown %d", l.Skipped, l.Dropped, l.Unknown)
	}
	if l.Model != "anthropic/claude-y" || l.Mode != "acceptEdits" || l.Title != "Named session" {
		t.Errorf("model %q mode %q title %q", l.Model, l.Mode, l.Title)
	}
	if want := (llm.Usage{InputTokens: 4, OutputTokens: 2, CacheReadInputTokens: 4}); l.Usage != want {
		t.Errorf("usage %+v, want %+v", l.Usage, want)
	}
	if time.Since(l.LastActivity) > time.Minute {
		t.Errorf("last activity %v", l.LastActivity)
	}
	// Every line of the file is one JSON record with a type and a time.
	for i, line := range strings.Split(strings.TrimSuffix(readFile(t, sess.Path()), "\n"), "\n") {
		var head struct {
			Type string    `json:"type"`
			TS   time.Time `json:"ts"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil || head.Type == "" || head.TS.IsZero() {
			t.Errorf("line %d is not a typed, timed record: %s", i+1, line)
		}
	}
}

func TestLoadToleratesDamage(t *testing.T) {
	st, _, _ := testStore(t)
	if err := os.MkdirAll(st.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	unknown := `{"type":"hologram","ts":"2030-01-01T00:00:00Z","message":"a newer shape"}` + "\n"
	content := msgLine(t, prompt("u1", "first")) +
		"this is not json\n" +
		msgLine(t, reply("a1", "one")) +
		unknown +
		`{"type":"message","ts":"2026-01-01T00:00:00Z"}` + "\n" + // a message record with no message
		"\n" +
		msgLine(t, prompt("u2", "second")) +
		msgLine(t, llm.Message{ID: "a2", Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Text{Text: "calling"}, llm.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{}`)},
		}}) +
		msgLine(t, prompt("u3", "typed while the tool ran"))
	truncated := msgLine(t, reply("a3", "cut short"))
	content += truncated[:len(truncated)/2]
	path := filepath.Join(st.Dir(), "damaged.jsonl")
	writeFile(t, path, content)

	l, err := st.Load("damaged")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l.Messages); got != "u1 a1 u2" {
		t.Errorf("messages %q, want u1 a1 u2 (cut before the unanswered tool_use)", got)
	}
	if l.Skipped != 3 || l.Dropped != 2 || l.Unknown != 1 {
		t.Errorf("skipped %d dropped %d unknown %d, want 3 2 1", l.Skipped, l.Dropped, l.Unknown)
	}

	// Resuming continues after the cut, keeps every byte already there
	// (the unknown record too) and starts new records on a fresh line.
	sess, _ := mustOpen(t, st, "damaged")
	mustAppend(t, sess, prompt("u4", "again"))
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, path)
	if !strings.HasPrefix(after, content+"\n") {
		t.Fatal("resume changed bytes already in the file")
	}
	l, err = st.Load("damaged")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l.Messages); got != "u1 a1 u2 u4" || l.Dropped != 0 {
		t.Errorf("after resume: messages %q dropped %d, want u1 a1 u2 u4, 0", got, l.Dropped)
	}
}

func TestLoadEmptyFile(t *testing.T) {
	st, _, _ := testStore(t)
	writeFile(t, filepath.Join(st.Dir(), "empty.jsonl"), "")
	l, err := st.Load("empty")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Messages) != 0 || l.Skipped != 0 || l.Title != "" {
		t.Errorf("empty file loaded as %+v", l)
	}
	sess, l := mustOpen(t, st, "empty")
	if len(l.Messages) != 0 {
		t.Errorf("open empty: %d messages", len(l.Messages))
	}
	sess.Close()
	if _, err := os.Stat(sess.Path()); err != nil {
		t.Fatal("closing a resumed session without messages removed it")
	}
	sess, _ = mustOpen(t, st, "empty")
	mustAppend(t, sess, prompt("u1", "hello"))
	sess.Close()
	if l, _ := st.Load("empty"); ids(l.Messages) != "u1" {
		t.Errorf("got %q", ids(l.Messages))
	}
}

func TestCompactBoundaryReplacesEarlierMessages(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "build the thing"), reply("a1", "built"), prompt("u2", "test it"), reply("a2", "tested"))
	summary := []llm.Message{
		{ID: "s1", Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "Summary: built and tested"}}, Meta: llm.Meta{Reminder: true}},
		prompt("u2", "test it"),
		reply("a2", "tested"),
	}
	if err := sess.Append(Record{Type: TypeCompact, Compact: &Compact{Trigger: "auto", Messages: summary}}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, sess, prompt("u3", "ship it"), reply("a3", "shipped"))
	if got := sess.Prompts(); len(got) != 2 || got[0].ID != "u2" || got[1].ID != "u3" {
		t.Errorf("prompts after compaction %+v", got)
	}
	sess.Close()

	l, err := st.Load(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(l.Messages); got != "s1 u2 a2 u3 a3" {
		t.Errorf("messages %q", got)
	}
	if l.Title != "build the thing" {
		t.Errorf("title %q: the first prompt of the session, even once compacted away", l.Title)
	}
}

func TestRewindConversation(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "one"), reply("a1", "1"), prompt("u2", "two"), reply("a2", "2"), prompt("u3", "three"), reply("a3", "3"))
	got := sess.Prompts()
	if len(got) != 3 || got[1].ID != "u2" || got[1].Text != "two" || got[1].Time.IsZero() {
		t.Fatalf("prompts %+v", got)
	}

	msgs, err := sess.RewindConversation("u2")
	if err != nil {
		t.Fatal(err)
	}
	if ids(msgs) != "u1 a1" {
		t.Errorf("rewind returned %q, want u1 a1", ids(msgs))
	}
	if p := sess.Prompts(); len(p) != 1 || p[0].ID != "u1" {
		t.Errorf("prompts after rewind %+v", p)
	}
	if _, err := sess.RewindConversation("u3"); err == nil {
		t.Error("rewinding to a prompt the conversation no longer has succeeded")
	}
	mustAppend(t, sess, prompt("u4", "four"), reply("a4", "4"))
	sess.Close()

	sess2, l := mustOpen(t, st, sess.ID())
	if ids(l.Messages) != "u1 a1 u4 a4" {
		t.Errorf("reload after rewind: %q", ids(l.Messages))
	}
	if p := sess2.Prompts(); len(p) != 2 || p[1].ID != "u4" {
		t.Errorf("prompts after reload %+v", p)
	}
}

func TestResumeRecordsTheCut(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "go"), llm.Message{ID: "a1", Role: llm.RoleAssistant, Blocks: []llm.Block{
		llm.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{}`)},
	}})
	sess.Close() // as if the process died while the tool ran

	sess, l := mustOpen(t, st, sess.ID())
	if ids(l.Messages) != "u1" || l.Dropped != 1 {
		t.Fatalf("resume: %q dropped %d", ids(l.Messages), l.Dropped)
	}
	mustAppend(t, sess, reply("a2", "picking up"), prompt("u2", "next"), reply("a3", "ok"))
	sess.Close()
	l, err := st.Load(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if ids(l.Messages) != "u1 a2 u2 a3" || l.Dropped != 0 {
		t.Errorf("second resume lost what followed the cut: %q dropped %d", ids(l.Messages), l.Dropped)
	}
}

func TestEmptySessionLeavesNothing(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	if err := sess.Append(Record{Type: TypeMode, Mode: "plan"}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(st.Dir())
	if len(entries) != 0 {
		t.Errorf("a session without messages left %d entries", len(entries))
	}
	if err := sess.AppendMessage(prompt("u", "late")); err == nil {
		t.Error("append after Close succeeded")
	}
}

func TestConcurrentAppends(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				id := string(rune('a'+g)) + strings.Repeat("x", i)
				if err := sess.AppendMessage(reply(id, strings.Repeat("y", i*100))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := sess.Sync(); err != nil {
		t.Fatal(err)
	}
	l, err := st.Load(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Messages) != 400 || l.Skipped != 0 {
		t.Errorf("%d messages, %d skipped; want 400, 0", len(l.Messages), l.Skipped)
	}
}

func TestAppendRejectsIncompleteRecord(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	if err := sess.Append(Record{Type: TypeMessage}); err == nil {
		t.Error("message record without a message accepted")
	}
	if err := sess.Append(Record{}); err == nil {
		t.Error("record without a type accepted")
	}
	// A type from an extension is written and ignored on load.
	if err := sess.Append(Record{Type: "x-extension", Title: "kept"}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, sess, prompt("u1", "hi"))
	l, err := st.Load(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if l.Unknown != 1 || ids(l.Messages) != "u1" {
		t.Errorf("unknown %d messages %q", l.Unknown, ids(l.Messages))
	}
	if !errors.Is(func() error { _, err := st.Load("nope"); return err }(), ErrNotFound) {
		t.Error("loading a missing session is not ErrNotFound")
	}
}
