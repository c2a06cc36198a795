package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

func TestStableEndSplitsOnlyFinishedBlocks(t *testing.T) {
	cases := []struct {
		text string
		want string // the stable prefix
	}{
		{"one paragraph still growing", ""},
		{"first\n\nsecond", ""}, // the last line may still grow
		{"first\n\nsecond\n", "first\n\n"},
		{"para\n\n```go\nx := 1\n\ny := 2\n", "para\n\n"}, // a blank line inside a fence is no boundary
		{"```go\nx\n```\n\nafter\n", "```go\nx\n```\n\n"},
		{"- item\n\n  continued\n", ""}, // indented: the item goes on
		{"- a\n\n- b\n", "- a\n\n"},
		{"~~~\n```\n~~~\n\nnext\n", "~~~\n```\n~~~\n\n"}, // only the opening fence closes
	}
	for _, c := range cases {
		if got := c.text[:stableEnd(c.text)]; got != c.want {
			t.Errorf("stableEnd(%q) keeps %q, want %q", c.text, got, c.want)
		}
	}
}

func TestStreamedMarkdownRendersLikeTheWhole(t *testing.T) {
	text := "# Title\n\nSome **bold** text that goes on for a while.\n\n```go\nfunc f() {}\n```\n\n1. one\n2. two\n"
	md := newMarkdown()
	var streamed assistantEntry
	for i := 0; i < len(text); i += 7 {
		streamed.s.append(text[i:min(i+7, len(text))])
	}
	streamed.close()
	whole := newAssistant(text)
	rc := &renderCtx{th: &theme{}, md: md}
	if a, b := streamed.render(rc, 60, false), whole.render(rc, 60, false); a != b {
		t.Fatalf("streamed and whole renderings differ:\n%s\n---\n%s", a, b)
	}
	if n := len(streamed.s.chunks); n < 3 {
		t.Errorf("only %d chunks: blocks were not rendered as they completed", n)
	}
}

func TestMarkdownOutputHasNoPadding(t *testing.T) {
	out := newMarkdown().render("A short line.\n\n- item", 60)
	for _, l := range strings.Split(stripANSI(out), "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line padded: %q", l)
		}
	}
	if strings.HasPrefix(stripANSI(out), "\n") || strings.HasSuffix(stripANSI(out), "\n") {
		t.Errorf("blank lines around: %q", out)
	}
}

func TestEditorKeys(t *testing.T) {
	var e editor
	for _, k := range []string{"h", "e", "l", "l", "o", "space", "w", "o", "r", "l", "d"} {
		if k == "space" {
			e.key(tea.KeyPressMsg{Code: ' ', Text: " "})
			continue
		}
		e.key(keyMsg(k))
	}
	steps := []struct {
		key  string
		text string
		pos  int
	}{
		{"ctrl+a", "hello world", 0},
		{"alt+right", "hello world", 5},
		{"ctrl+k", "hello", 5},
		{"ctrl+w", "", 0},
	}
	for _, s := range steps {
		e.key(keyMsg(s.key))
		if e.String() != s.text || e.pos != s.pos {
			t.Fatalf("after %s: %q at %d, want %q at %d", s.key, e.String(), e.pos, s.text, s.pos)
		}
	}
	e.set("line one\nline two")
	if !e.moveVertical(-1, 40) || e.pos != 8 {
		t.Fatalf("up from the end of line two: pos %d", e.pos)
	}
	if e.moveVertical(-1, 40) {
		t.Fatal("up from the first row should fall through to history")
	}
	if e.key(keyMsg("ctrl+x")) {
		t.Error("an unknown control key was taken as text")
	}
}

func TestEditorWrapsAtSpacesAndPlacesTheCursor(t *testing.T) {
	var e editor
	e.set("alpha beta gamma delta")
	rows, cr, cc := e.layout(12)
	var got []string
	for _, r := range rows {
		got = append(got, string(e.buf[r.start:r.end]))
	}
	if strings.Join(got, "|") != "alpha beta |gamma delta" {
		t.Fatalf("rows = %q", got)
	}
	if cr != 1 || cc != 11 {
		t.Errorf("cursor at row %d col %d, want 1, 11", cr, cc)
	}
	e.pos = 11 // the start of "gamma"
	if _, cr, cc = e.layout(12); cr != 1 || cc != 0 {
		t.Errorf("cursor at a wrap: row %d col %d, want 1, 0", cr, cc)
	}
	e.set("wide 漢字漢字漢字")
	for _, r := range func() []row { rows, _, _ := e.layout(8); return rows }() {
		if w := runesWidth(e.buf[r.start:r.end]); w > 7 {
			t.Errorf("row %q is %d columns wide", string(e.buf[r.start:r.end]), w)
		}
	}
}

func TestFuzzyRanksPrefixesAndWordStartsFirst(t *testing.T) {
	files := []string{"internal/tui/model.go", "cmd/coda/main.go", "internal/tui/markdown.go", "README.md"}
	got := fuzzyRank("md", files, 0)
	if len(got) != 4 || files[got[0]] != "README.md" {
		var names []string
		for _, i := range got {
			names = append(names, files[i])
		}
		t.Errorf("md ranks %q", names)
	}
	if got := fuzzyRank("mark", files, 1); files[got[0]] != "internal/tui/markdown.go" {
		t.Errorf("mark ranks %s first", files[got[0]])
	}
	if _, ok := fuzzyScore("xyz", "model"); ok {
		t.Error("xyz matched model")
	}
	if a, _ := fuzzyScore("mod", "model"); a <= func() int { s, _ := fuzzyScore("mod", "internal/tui/model.go"); return s }() {
		t.Error("a prefix match should beat a match deep in a path")
	}
}

func TestToolTitlesAndSummaries(t *testing.T) {
	in := func(v map[string]any) json.RawMessage { return raw(v) }
	titles := map[string]struct {
		name  string
		input json.RawMessage
	}{
		"Bash(go test ./... …)":    {"Bash", in(map[string]any{"command": "go test ./...\necho done"})},
		"Read(internal/x.go)":      {"Read", in(map[string]any{"file_path": "/p/internal/x.go"})},
		"Grep(TODO in cmd)":        {"Grep", in(map[string]any{"pattern": "TODO", "path": "/p/cmd"})},
		"Read(/elsewhere/y.go)":    {"Read", in(map[string]any{"file_path": "/elsewhere/y.go"})},
		"mcp__db__query(select 1)": {"mcp__db__query", in(map[string]any{"sql": "select 1"})},
		"Weird":                    {"Weird", json.RawMessage(`not json`)},
	}
	for want, c := range titles {
		if got := toolTitle(c.name, c.input, "/p"); got != want {
			t.Errorf("title = %q, want %q", got, want)
		}
	}
	text := func(s string) tools.Result { return tools.Result{Content: []llm.Block{llm.Text{Text: s}}} }
	summaries := []struct {
		name string
		res  tools.Result
		want string
	}{
		{"Bash", tools.Result{Display: tools.BashDisplay{ExitCode: 2, Output: "boom"}}, "exit 2"},
		{"Bash", tools.Result{Display: tools.BashDisplay{ShellID: "bash_1"}}, "running in the background as bash_1"},
		{"Read", text("     1\ta\n     2\tb\n"), "read 2 lines"},
		{"Edit", tools.Result{Display: tools.NewFileDiff("/p/a", "a\n", "b\nc\n", false)}, "+2 -1"},
		{"Write", tools.Result{Display: tools.NewFileDiff("/p/a", "", "b\nc\n", true)}, "created, 2 lines"},
		{"Edit", tools.Result{IsError: true, Content: []llm.Block{llm.Text{Text: "old_string not found\nhint"}}}, "old_string not found"},
	}
	for _, c := range summaries {
		if got := toolSummary(c.name, nil, c.res); got != c.want {
			t.Errorf("%s summary = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestToolBodyCollapsesAndExpands(t *testing.T) {
	out := strings.Repeat("line\n", 30)
	res := tools.Result{Content: []llm.Block{llm.Text{Text: out}}, Display: tools.BashDisplay{Output: out}}
	rc := &renderCtx{th: &theme{}, md: newMarkdown()}
	collapsed := stripANSI(toolBody(rc, "Bash", nil, res, 80, false))
	if n := strings.Count(collapsed, "line\n") + 1; n > collapsedOutput+1 || !strings.Contains(collapsed, "25 lines earlier") {
		t.Errorf("collapsed body:\n%s", collapsed)
	}
	if expanded := toolBody(rc, "Bash", nil, res, 80, true); strings.Count(expanded, "line") != 30 {
		t.Errorf("expanded body has %d lines", strings.Count(expanded, "line"))
	}
}

func TestRetriesShowAsOneLine(t *testing.T) {
	h := newHarness(t, Options{})
	r := fakeRun(h)
	for i := 1; i <= 3; i++ {
		h.m.onEvent(r, agentNoticeRetry(i))
	}
	if n := strings.Count(h.view(), "retrying in"); n != 1 {
		t.Fatalf("%d retry lines:\n%s", n, h.view())
	}
	if !strings.Contains(h.view(), "attempt 4 of 10") {
		t.Errorf("retry line not updated:\n%s", h.view())
	}
}

func agentNoticeRetry(attempt int) agent.Notice {
	return agent.Notice{Text: "overloaded", Retry: &agent.RetryInfo{Attempt: attempt, MaxRetries: 9, Delay: time.Second, Status: 529, Err: "overloaded"}}
}
