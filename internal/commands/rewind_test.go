package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/session"
)

// rewindSession is a Session that can rewind; it records what was asked.
type rewindSession struct {
	fakeSession
	prompts   []RewindPoint
	conflicts []string // RewindCode refuses without force while set
	restored  []string
	codeCalls []bool // the force of each RewindCode call
	convTo    []string
}

func (r *rewindSession) Info() Info {
	return Info{SessionID: "sess-1", Cwd: "/p"}
}

func (r *rewindSession) Prompts() []RewindPoint { return r.prompts }

func (r *rewindSession) RewindConversation(id string) error {
	r.convTo = append(r.convTo, id)
	return nil
}

func (r *rewindSession) RewindCode(id string, force bool) ([]string, error) {
	r.codeCalls = append(r.codeCalls, force)
	if len(r.conflicts) > 0 && !force {
		return nil, &session.ConflictError{Paths: r.conflicts}
	}
	return r.restored, nil
}

func rewindContext(t *testing.T) (Context, *rewindSession, *fakeUI) {
	t.Helper()
	ui := &fakeUI{}
	c, _ := testContext(ui)
	now := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	rs := &rewindSession{prompts: []RewindPoint{
		{ID: "p1", Text: "add a greeting", Time: now.Add(-2 * time.Hour)},
		{ID: "p2", Text: "make it louder", Time: now.Add(-5 * time.Minute)},
	}}
	c.Session = rs
	c.Now = func() time.Time { return now }
	return c, rs, ui
}

func TestRewindListsPromptsNewestFirstWithTheBashNote(t *testing.T) {
	c, _, ui := rewindContext(t)
	run(t, c, "/rewind")
	if !strings.Contains(ui.title, "Rewind to before which prompt?") || !strings.Contains(ui.title, "Bash commands are not tracked") {
		t.Errorf("title %q", ui.title)
	}
	if len(ui.choices) != 3 {
		t.Fatalf("choices %+v", ui.choices)
	}
	want := []string{"Edit your last prompt", "make it louder", "add a greeting"}
	for i, w := range want {
		if ui.choices[i].Label != w {
			t.Errorf("choice %d = %q, want %q", i+1, ui.choices[i].Label, w)
		}
	}
	if ui.choices[1].Detail != "5m ago" || ui.choices[2].Detail != "2h ago" {
		t.Errorf("ages: %q, %q", ui.choices[1].Detail, ui.choices[2].Detail)
	}
}

func TestRewindCodeAndConversation(t *testing.T) {
	c, rs, ui := rewindContext(t)
	rs.restored = []string{"/p/a.txt", "/p/src/b.txt"}
	run(t, c, "/rewind")
	ui.pick(t, ui.choices[1].Value) // "make it louder"
	if !strings.Contains(ui.title, "make it louder") || !strings.Contains(ui.title, "Bash commands are not tracked") {
		t.Errorf("second screen title %q", ui.title)
	}
	var labels []string
	for _, ch := range ui.choices {
		labels = append(labels, ch.Label)
	}
	if strings.Join(labels, "|") != "Restore code and conversation|Restore conversation only|Restore code only" {
		t.Fatalf("choices %v", labels)
	}
	res := ui.pick(t, ui.choices[0].Value)
	if len(rs.codeCalls) != 1 || rs.codeCalls[0] || len(rs.convTo) != 1 || rs.convTo[0] != "p2" {
		t.Fatalf("code calls %v, conversation rewound to %v", rs.codeCalls, rs.convTo)
	}
	if !ui.reloaded || ui.input == nil || *ui.input != "make it louder" {
		t.Errorf("reloaded %v, input %v", ui.reloaded, ui.input)
	}
	if !strings.Contains(res.Output, "Restored 2 files: a.txt, src/b.txt.") {
		t.Errorf("output %q", res.Output)
	}
}

func TestRewindCodeOnlyKeepsTheConversation(t *testing.T) {
	c, rs, ui := rewindContext(t)
	run(t, c, "/rewind")
	ui.pick(t, ui.choices[2].Value) // "add a greeting"
	res := ui.pick(t, "code")
	if len(rs.codeCalls) != 1 || len(rs.convTo) != 0 || ui.reloaded || ui.input != nil {
		t.Fatalf("code %v conversation %v reloaded %v", rs.codeCalls, rs.convTo, ui.reloaded)
	}
	if res.Output != "No file needed restoring." {
		t.Errorf("output %q", res.Output)
	}
	ui.reloaded = false
	run(t, c, "/rewind")
	ui.pick(t, ui.choices[2].Value)
	ui.pick(t, "conversation")
	if len(rs.codeCalls) != 1 || len(rs.convTo) != 1 || rs.convTo[0] != "p1" || !ui.reloaded {
		t.Fatalf("conversation only: code %v conversation %v", rs.codeCalls, rs.convTo)
	}
}

func TestRewindAsksBeforeOverwritingTheUsersChanges(t *testing.T) {
	c, rs, ui := rewindContext(t)
	rs.conflicts = []string{"/p/a.txt", "/elsewhere/b.txt"}
	run(t, c, "/rewind")
	ui.pick(t, ui.choices[1].Value)
	ui.pick(t, "both")
	for _, want := range []string{"These files changed since coda edited them:", "\n  a.txt", "\n  /elsewhere/b.txt", "Overwrite them? [y/N]"} {
		if !strings.Contains(ui.title, want) {
			t.Errorf("confirmation lacks %q:\n%s", want, ui.title)
		}
	}
	if ui.choices[0].Key != "n" || ui.choices[1].Key != "y" {
		t.Errorf("keys: %+v", ui.choices)
	}
	if len(rs.convTo) != 0 {
		t.Fatal("the conversation was rewound although the files were not")
	}
	res := ui.pick(t, "no")
	if !strings.Contains(res.Output, "nothing was changed") || len(rs.codeCalls) != 1 || len(rs.convTo) != 0 {
		t.Fatalf("declining: %q, code %v, conversation %v", res.Output, rs.codeCalls, rs.convTo)
	}

	run(t, c, "/rewind")
	ui.pick(t, ui.choices[1].Value)
	ui.pick(t, "both")
	ui.pick(t, "yes")
	if got := rs.codeCalls; len(got) != 3 || got[1] || !got[2] {
		t.Fatalf("force on the calls: %v", got)
	}
	if len(rs.convTo) != 1 || rs.convTo[0] != "p2" {
		t.Fatalf("after overwriting, conversation rewound to %v", rs.convTo)
	}
}

func TestRewindEditLastPrompt(t *testing.T) {
	c, rs, ui := rewindContext(t)
	run(t, c, "/rewind")
	res := ui.pick(t, ui.choices[0].Value)
	if len(rs.convTo) != 1 || rs.convTo[0] != "p2" || len(rs.codeCalls) != 0 {
		t.Fatalf("conversation %v code %v", rs.convTo, rs.codeCalls)
	}
	if ui.input == nil || *ui.input != "make it louder" || !strings.Contains(res.Output, "edit it") {
		t.Errorf("input %v, output %q", ui.input, res.Output)
	}
}

func TestRewindWithoutPromptsOrUI(t *testing.T) {
	c, rs, ui := rewindContext(t)
	rs.prompts = nil
	if out := run(t, c, "/rewind"); !strings.Contains(out.Output, "Nothing to rewind") || ui.then != nil {
		t.Errorf("no prompts: %q", out.Output)
	}
	c.UI = nil
	if _, err := Dispatch(context.Background(), "/rewind", c); err == nil {
		t.Error("/rewind without a UI should explain itself")
	}
	c2, _ := testContext(&fakeUI{})
	if _, err := Dispatch(context.Background(), "/checkpoint", c2); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("a session that cannot rewind: %v", err)
	}
}

func TestTypedText(t *testing.T) {
	for in, want := range map[string]string{
		"fix the bug": "fix the bug",
		"fix it<system-reminder>\nbe nice\n</system-reminder>":                "fix it",
		"hi<system-reminder>\nAs you answer, use the proj":                    "hi",
		"<bash-input>git status</bash-input><bash-stdout>clean</bash-stdout>": "!git status",
	} {
		if got := TypedText(in); got != want {
			t.Errorf("TypedText(%q) = %q, want %q", in, got, want)
		}
	}
}

// resumeSession is a Session that can switch to another one.
type resumeSession struct {
	fakeSession
	infos   []session.Info
	locked  map[string]int // id -> pid holding it
	resumed []string       // id, or "fork:"+id
}

func (r *resumeSession) Sessions() ([]session.Info, error) { return r.infos, nil }

func (r *resumeSession) Resume(_ context.Context, id string, fork bool) error {
	if pid, ok := r.locked[id]; ok && !fork {
		return &session.LockedError{ID: id, PID: pid}
	}
	if fork {
		id = "fork:" + id
	}
	r.resumed = append(r.resumed, id)
	return nil
}

func TestResumePicksAnotherSessionAndForksALockedOne(t *testing.T) {
	ui := &fakeUI{}
	c, _ := testContext(ui)
	now := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	c.Now = func() time.Time { return now }
	rs := &resumeSession{locked: map[string]int{"s-busy": 4242}, infos: []session.Info{
		{ID: "sess-1", Title: "this one", Messages: 4, LastActivity: now},
		{ID: "s-busy", Title: "refactor the parser<system-reminder>\nAs you", Messages: 12, GitBranch: "main", LastActivity: now.Add(-3 * time.Hour)},
		{ID: "s-empty", Messages: 0, LastActivity: now.Add(-time.Hour)},
		{ID: "s-old", Title: "write docs", Messages: 1, LastActivity: now.Add(-50 * time.Hour)},
	}}
	c.Session = rs
	run(t, c, "/resume")
	if len(ui.choices) != 2 {
		t.Fatalf("the current and empty sessions are listed: %+v", ui.choices)
	}
	if ch := ui.choices[0]; ch.Label != "refactor the parser" || ch.Detail != "3h ago · 12 messages · main" || ch.Value != "s-busy" {
		t.Errorf("first choice %+v", ch)
	}
	if ch := ui.choices[1]; ch.Detail != "2d ago · 1 message" {
		t.Errorf("second choice %+v", ch)
	}
	ui.pick(t, "s-busy")
	for _, want := range []string{"s-busy", "pid 4242", "Fork it"} {
		if !strings.Contains(ui.title, want) {
			t.Errorf("lock offer lacks %q: %q", want, ui.title)
		}
	}
	if ui.exited {
		t.Fatal("the UI exited although nothing was resumed")
	}
	res := ui.pick(t, "fork")
	if len(rs.resumed) != 1 || rs.resumed[0] != "fork:s-busy" || !ui.exited || !strings.Contains(res.Output, "Forking") {
		t.Fatalf("resumed %v, exited %v, output %q", rs.resumed, ui.exited, res.Output)
	}
	ui.exited = false
	if out := run(t, c, "/resume s-old"); len(rs.resumed) != 2 || rs.resumed[1] != "s-old" || !ui.exited || !strings.Contains(out.Output, "Resuming session s-old") {
		t.Fatalf("by id: %v %q", rs.resumed, out.Output)
	}
}

func TestResumeWithNothingElseToResume(t *testing.T) {
	ui := &fakeUI{}
	c, _ := testContext(ui)
	c.Session = &resumeSession{infos: []session.Info{{ID: "sess-1", Messages: 3}}}
	if out := run(t, c, "/resume"); !strings.Contains(out.Output, "No other session") || ui.then != nil {
		t.Errorf("output %q", out.Output)
	}
	if _, err := Dispatch(context.Background(), "/resume", Context{Session: &fakeSession{}, UI: ui, Commands: c.Commands}); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Error("a session that cannot resume should say so")
	}
}
