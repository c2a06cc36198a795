package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm/llmtest"
	codasession "github.com/coda-cli/coda/internal/session"
)

// rewinder is the app's side of /rewind over the agent's conversation:
// the code side only records what it was asked.
type rewinder struct {
	fakeSession
	ag        *agent.Agent
	dir       string
	conflicts []string
	codeCalls []bool // force of each RewindCode call
}

func (r *rewinder) Info() commands.Info { return commands.Info{Cwd: r.dir} }

func (r *rewinder) Prompts() []commands.RewindPoint {
	var out []commands.RewindPoint
	for _, m := range r.ag.Conversation().Messages() {
		if text, ok := promptText(m); ok {
			out = append(out, commands.RewindPoint{ID: m.ID, Text: text, Time: m.Meta.Time})
		}
	}
	return out
}

func (r *rewinder) RewindConversation(id string) error {
	msgs := r.ag.Conversation().Messages()
	for i, m := range msgs {
		if m.ID == id {
			r.ag.Conversation().Replace(msgs[:i])
			return nil
		}
	}
	return nil
}

func (r *rewinder) RewindCode(_ string, force bool) ([]string, error) {
	r.codeCalls = append(r.codeCalls, force)
	if len(r.conflicts) > 0 && !force {
		return nil, &codasession.ConflictError{Paths: r.conflicts}
	}
	return r.conflicts, nil
}

// twoPrompts is a session where two prompts were answered.
func twoPrompts(t *testing.T) (*session, *rewinder, *harness) {
	t.Helper()
	s := newSession(t)
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("answer one")), llmtest.Reply(llmtest.Text("answer two")))
	r := &rewinder{ag: s.ag, dir: s.dir}
	o := s.options()
	o.Session = r
	h := newHarness(t, o)
	for _, p := range []string{"first try", "second try"} {
		h.typeText(p)
		h.press("enter")
		h.idle()
	}
	h.waitScreen("answer two")
	return s, r, h
}

// escTwice opens the rewind list.
func escTwice(h *harness) {
	h.t.Helper()
	h.press("esc")
	if !strings.Contains(h.view(), "Press Esc again to rewind") {
		h.t.Fatalf("one Esc: no hint\n%s", h.view())
	}
	h.press("esc")
	h.waitFor("the rewind list", func() bool { return h.m.picker != nil })
}

// userTexts are the prompts the transcript shows now.
func userTexts(m *Model) []string {
	var out []string
	for i := range m.tr.len() {
		if u, ok := m.tr.at(i).(*userEntry); ok {
			out = append(out, u.text)
		}
	}
	return out
}

func TestEscTwiceOpensTheRewindListAndRestoresCodeAndConversation(t *testing.T) {
	s, r, h := twoPrompts(t)
	r.conflicts = []string{s.dir + "/notes.txt"}
	escTwice(h)
	view := h.view()
	for _, want := range []string{"Rewind to before which prompt?", "Changes made by Bash commands are not tracked",
		"1. Edit your last prompt", "2. second try", "3. first try"} {
		if !strings.Contains(view, want) {
			t.Errorf("rewind list lacks %q:\n%s", want, view)
		}
	}
	h.press("2")
	h.waitFor("the choice of what to restore", func() bool { return h.m.picker != nil })
	view = h.view()
	for _, want := range []string{"Rewind to before “second try”", "Changes made by Bash commands are not tracked",
		"1. Restore code and conversation", "2. Restore conversation only", "3. Restore code only"} {
		if !strings.Contains(view, want) {
			t.Errorf("second screen lacks %q:\n%s", want, view)
		}
	}
	h.press("1")
	h.waitFor("the overwrite question", func() bool { return h.m.picker != nil })
	view = h.view()
	for _, want := range []string{"These files changed since coda edited them:", "  notes.txt", "Overwrite them? [y/N]"} {
		if !strings.Contains(view, want) {
			t.Errorf("confirmation lacks %q:\n%s", want, view)
		}
	}
	if n := s.ag.Conversation().Len(); n != 4 {
		t.Fatalf("the conversation changed before the files were restored: %d messages", n)
	}
	h.press("y")
	h.waitScreen("the prompt is back in the input")
	h.idle()
	if len(r.codeCalls) != 2 || r.codeCalls[0] || !r.codeCalls[1] {
		t.Errorf("RewindCode force: %v", r.codeCalls)
	}
	if got := h.m.ed.String(); got != "second try" {
		t.Errorf("input %q, want the rewound prompt", got)
	}
	if got := userTexts(h.m); len(got) != 1 || got[0] != "first try" {
		t.Errorf("the transcript shows the prompts %q after the rewind", got)
	}
	if screen := h.screen(); !strings.Contains(screen, "Restored") || !strings.Contains(screen, "notes.txt.") {
		t.Errorf("no word on the restored file:\n%s", h.screen())
	}

	// The next request carries the conversation as rewound.
	s.srv.Enqueue(llmtest.Reply(llmtest.Text("answer three")))
	h.press("ctrl+e")
	h.typeText(", again")
	h.press("enter")
	h.idle()
	reqs := s.srv.Requests()
	last := reqs[len(reqs)-1]
	if got := last.Messages(); len(got) != 3 {
		t.Errorf("the request after the rewind has %d messages, want 3", len(got))
	}
	if body := string(last.Body); strings.Contains(body, "answer two") || !strings.Contains(body, "second try, again") {
		t.Errorf("the request after the rewind:\n%s", body)
	}
}

func TestRewindDeclinedOverwriteChangesNothing(t *testing.T) {
	s, r, h := twoPrompts(t)
	r.conflicts = []string{s.dir + "/notes.txt"}
	escTwice(h)
	h.press("3") // first try
	h.waitFor("the choice of what to restore", func() bool {
		return h.m.picker != nil && strings.Contains(h.view(), "Restore code only")
	})
	h.press("1") // code and conversation
	h.waitFor("the overwrite question", func() bool {
		return h.m.picker != nil && strings.Contains(h.view(), "Overwrite them?")
	})
	h.press("n")
	h.waitScreen("Rewind cancelled: nothing was changed.")
	h.idle()
	if n := s.ag.Conversation().Len(); n != 4 || len(r.codeCalls) != 1 || !h.m.ed.empty() {
		t.Errorf("declining changed something: %d messages, code calls %v, input %q", n, r.codeCalls, h.m.ed.String())
	}
}

func TestRewindFirstEntryEditsTheLastPrompt(t *testing.T) {
	s, r, h := twoPrompts(t)
	escTwice(h)
	h.press("enter") // the first entry is selected
	h.waitScreen("edit it and press Enter")
	h.idle()
	if got := h.m.ed.String(); got != "second try" {
		t.Errorf("input %q", got)
	}
	if n := s.ag.Conversation().Len(); n != 2 || len(r.codeCalls) != 0 {
		t.Errorf("%d messages, code calls %v", n, r.codeCalls)
	}
}

func TestEscTwiceWhileAPromptIsTypedDoesNotRewind(t *testing.T) {
	_, _, h := twoPrompts(t)
	h.typeText("draft")
	h.press("esc", "esc")
	if h.m.picker != nil || h.m.ed.String() != "draft" {
		t.Fatalf("Esc twice on a typed prompt: picker %v, input %q", h.m.picker != nil, h.m.ed.String())
	}
	// Up still recalls the previous prompts.
	h.press("ctrl+u", "up")
	if got := h.m.ed.String(); got != "second try" {
		t.Errorf("Up recalled %q", got)
	}
}

// resumer is the app's side of /resume.
type resumer struct {
	fakeSession
	infos   []codasession.Info
	locked  map[string]int
	resumed []string
}

func (r *resumer) Info() commands.Info { return commands.Info{SessionID: "current"} }

func (r *resumer) Sessions() ([]codasession.Info, error) { return r.infos, nil }

func (r *resumer) Resume(_ context.Context, id string, fork bool) error {
	if pid, ok := r.locked[id]; ok && !fork {
		return &codasession.LockedError{ID: id, PID: pid}
	}
	if fork {
		id = "fork:" + id
	}
	r.resumed = append(r.resumed, id)
	return nil
}

func TestResumePickerSwitchesSessions(t *testing.T) {
	now := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	r := &resumer{infos: []codasession.Info{
		{ID: "current", Title: "what I am doing now", Messages: 2, LastActivity: now},
		{ID: "s-parser", Title: "refactor the parser", Messages: 12, GitBranch: "feature/parser", LastActivity: now.Add(-3 * time.Hour)},
		{ID: "s-docs", Title: "write the docs", Messages: 3, GitBranch: "main", LastActivity: now.Add(-26 * time.Hour)},
	}}
	h := newHarness(t, Options{Session: r})
	h.typeText("/resume")
	h.press("esc", "enter")
	h.waitFor("the session picker", func() bool { return h.m.picker != nil })
	view := h.view()
	for _, want := range []string{"Resume a session", "1. refactor the parser", "3h ago · 12 messages · feature/parser",
		"2. write the docs", "1d ago · 3 messages · main"} {
		if !strings.Contains(view, want) {
			t.Errorf("picker lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "what I am doing now") {
		t.Errorf("the current session is offered:\n%s", view)
	}
	h.press("down", "enter")
	h.waitFor("the UI to exit", func() bool { return h.quit })
	if len(r.resumed) != 1 || r.resumed[0] != "s-docs" {
		t.Fatalf("resumed %v", r.resumed)
	}
	if !strings.Contains(h.screen(), "Resuming session s-docs") {
		t.Errorf("last frame:\n%s", h.view())
	}
}

func TestResumeOffersToForkALockedSession(t *testing.T) {
	r := &resumer{locked: map[string]int{"s-busy": 31337}, infos: []codasession.Info{
		{ID: "s-busy", Title: "busy elsewhere", Messages: 5, LastActivity: time.Date(2025, 3, 4, 9, 0, 0, 0, time.UTC)},
	}}
	h := newHarness(t, Options{Session: r})
	h.typeText("/resume")
	h.press("esc", "enter")
	h.waitFor("the session picker", func() bool { return h.m.picker != nil })
	h.press("1")
	h.waitFor("the fork offer", func() bool { return h.m.picker != nil && strings.Contains(h.view(), "Fork") })
	if view := h.view(); !strings.Contains(view, "open in another coda process (pid 31337)") {
		t.Errorf("fork offer:\n%s", view)
	}
	if h.quit {
		t.Fatal("exited before anything was resumed")
	}
	h.press("f")
	h.waitFor("the UI to exit", func() bool { return h.quit })
	if len(r.resumed) != 1 || r.resumed[0] != "fork:s-busy" {
		t.Fatalf("resumed %v", r.resumed)
	}
}

func TestPickChoosesWithTheKeyboard(t *testing.T) {
	choices := []commands.Choice{{Value: "a", Label: "first"}, {Value: "b", Label: "second", Detail: "1h ago"}}
	m := &pickModel{p: newPicker("Resume a session", choices, nil), th: newTheme(), width: 60}
	if view := stripANSI(m.View().Content); !strings.Contains(view, "Resume a session") || !strings.Contains(view, "2. second  1h ago") {
		t.Fatalf("view:\n%s", view)
	}
	m.Update(keyMsg("down"))
	if _, cmd := m.Update(keyMsg("enter")); cmd == nil || m.chosen != "b" {
		t.Fatalf("chose %q", m.chosen)
	}
	if m.View().Content != "" {
		t.Error("the picker stays on the screen after the choice")
	}
	m = &pickModel{p: newPicker("t", choices, nil), th: newTheme(), width: 60}
	if _, cmd := m.Update(keyMsg("esc")); cmd == nil || m.chosen != "" {
		t.Errorf("Esc chose %q", m.chosen)
	}
}
