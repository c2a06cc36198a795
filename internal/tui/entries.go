package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/tools"
)

// renderCtx is what entries need to draw themselves.
type renderCtx struct {
	th    *theme
	md    *markdown
	cwd   string
	now   time.Time
	frame int // spinner frame
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (rc *renderCtx) spinner() string { return spinnerFrames[rc.frame%len(spinnerFrames)] }

// entry is one thing in the transcript: a prompt, an answer, a tool call,
// a notice. A finished entry never changes, so its rendering is cached.
type entry interface {
	render(rc *renderCtx, width int, expanded bool) string
	finished() bool
}

// Prefixes: the first line of an entry carries a marker, the rest are
// indented to line up with its text.
const (
	bulletPrefix = "● "
	contPrefix   = "  "
	resultPrefix = "  ⎿  "
	resultIndent = "     "
)

type userEntry struct{ text string }

func (e *userEntry) finished() bool { return true }
func (e *userEntry) render(rc *renderCtx, width int, _ bool) string {
	return paint(rc.th.user, indent(plainWrap(e.text, width-2), "❯ ", "  "))
}

// assistantEntry is an answer, streamed or whole.
type assistantEntry struct {
	s      mdStream
	closed bool
}

func newAssistant(text string) *assistantEntry {
	a := &assistantEntry{}
	a.s.append(text)
	a.close()
	return a
}

func (e *assistantEntry) finished() bool { return e.closed }
func (e *assistantEntry) close() {
	e.s.finish()
	e.closed = true
}

func (e *assistantEntry) render(rc *renderCtx, width int, _ bool) string {
	return e.renderFrom(rc, width, 0)
}

// renderFrom draws the answer from chunk `from` on: the part not yet in
// the scrollback. Chunk 0 carries the bullet.
func (e *assistantEntry) renderFrom(rc *renderCtx, width int, from int) string {
	w := width - cols(contPrefix)
	var parts []string
	for i := from; i < len(e.s.chunks); i++ {
		parts = append(parts, e.s.chunk(rc.md, i, w))
	}
	if t := e.s.tail(rc.md, w); t != "" {
		parts = append(parts, t)
	}
	body := strings.Join(parts, "\n\n")
	if body == "" {
		return ""
	}
	if from == 0 {
		return indent(body, bulletPrefix, contPrefix)
	}
	return indent(body, contPrefix, contPrefix)
}

// thinkingEntry is reasoning: one dim line unless expanded.
type thinkingEntry struct {
	text    strings.Builder
	started time.Time
	ended   time.Time
	closed  bool
}

func (e *thinkingEntry) finished() bool { return e.closed }
func (e *thinkingEntry) close(now time.Time) {
	if !e.closed {
		e.closed, e.ended = true, now
	}
}

func (e *thinkingEntry) render(rc *renderCtx, width int, expanded bool) string {
	head := "✻ Thinking…"
	if e.closed {
		head = "✻ Thought"
		if d := e.ended.Sub(e.started); d >= time.Second {
			head += " for " + shortDuration(d)
		}
	}
	if !expanded {
		if line := firstLine(e.text.String()); line != "" {
			head = truncate(head+": "+line, width)
		}
		return rc.th.dim.Italic(true).Render(head)
	}
	body := plainWrap(strings.TrimSpace(e.text.String()), width-2)
	return paint(rc.th.dim.Italic(true), indent(head+"\n"+body, "", contPrefix))
}

// toolEntry is one tool call: a spinner while it runs, then its outcome.
type toolEntry struct {
	id, name string
	input    json.RawMessage
	started  time.Time
	done     bool
	res      tools.Result
	dur      time.Duration
}

func (e *toolEntry) finished() bool { return e.done }

func (e *toolEntry) render(rc *renderCtx, width int, expanded bool) string {
	th := rc.th
	title := truncate(toolTitle(e.name, e.input, rc.cwd), width-2)
	if !e.done {
		line := th.accent.Render(rc.spinner()+" ") + th.bold.Render(title)
		if d := rc.now.Sub(e.started); d >= time.Second && !e.started.IsZero() {
			line += th.dim.Render(" · " + shortDuration(d))
		}
		return line
	}
	bullet := th.ok.Render(bulletPrefix)
	if e.res.IsError {
		bullet = th.err.Render(bulletPrefix)
	}
	lines := []string{bullet + th.bold.Render(title)}
	summary := toolSummary(e.name, e.input, e.res)
	if e.dur >= 50*time.Millisecond {
		summary += " · " + shortDuration(e.dur)
	}
	style := th.dim
	if e.res.IsError {
		style = th.err
	}
	lines = append(lines, style.Render(truncate(resultPrefix+summary, width)))
	if body := toolBody(rc, e.name, e.input, e.res, width-cols(resultIndent), expanded); body != "" {
		lines = append(lines, indent(body, resultIndent, resultIndent))
	}
	return strings.Join(lines, "\n")
}

// shellEntry is a command the user ran with "!".
type shellEntry struct {
	command string
	done    bool
	res     tools.Result
}

func (e *shellEntry) finished() bool { return e.done }

func (e *shellEntry) render(rc *renderCtx, width int, expanded bool) string {
	th := rc.th
	head := th.warn.Render("! ") + th.bold.Render(truncate(firstLine(e.command), width-2))
	if !e.done {
		return head + th.dim.Render(" "+rc.spinner())
	}
	out := shellOutput(e.res)
	limit := 10
	if expanded {
		limit = 1 << 30
	}
	tail, dropped := lastLines(out, limit)
	var lines []string
	lines = append(lines, head)
	if dropped > 0 {
		lines = append(lines, th.dim.Render(resultIndent+fmt.Sprintf("… %s earlier", plural(dropped, "line"))))
	}
	if tail != "" {
		lines = append(lines, indent(wrapLines(tail, width-cols(resultIndent)), resultIndent, resultIndent))
	}
	status := shellStatus(e.res)
	style := th.dim
	if e.res.IsError {
		style = th.err
	}
	lines = append(lines, style.Render(resultPrefix+status))
	return strings.Join(lines, "\n")
}

// shellOutput is what a "!" command printed.
func shellOutput(res tools.Result) string {
	if d, ok := res.Display.(tools.BashDisplay); ok {
		return d.Output
	}
	return res.Text()
}

func shellStatus(res tools.Result) string {
	d, ok := res.Display.(tools.BashDisplay)
	switch {
	case !ok && res.IsError:
		return firstLine(res.Text())
	case !ok:
		return "done"
	case d.TimedOut:
		return "timed out"
	case d.Interrupted:
		return "interrupted"
	}
	return fmt.Sprintf("exit %d · %s", d.ExitCode, shortDuration(d.Duration))
}

// commandEntry is a slash command and what it printed.
type commandEntry struct {
	line   string
	output string
	isErr  bool
}

func (e *commandEntry) finished() bool { return true }

func (e *commandEntry) render(rc *renderCtx, width int, _ bool) string {
	head := rc.th.user.Render("❯ " + truncate(e.line, width-2))
	if e.output == "" {
		return head
	}
	style := rc.th.dim
	if e.isErr {
		style = rc.th.err
	}
	body := plainWrap(e.output, width-cols(resultIndent))
	return head + "\n" + paint(style, indent(body, resultPrefix, resultIndent))
}

type noticeLevel int

const (
	noticeInfo noticeLevel = iota
	noticeWarn
	noticeError
)

// noticeEntry is a short line from the harness: a retry, an error, an
// interrupted turn.
type noticeEntry struct {
	text  string
	level noticeLevel
}

func (e *noticeEntry) finished() bool { return true }

func (e *noticeEntry) render(rc *renderCtx, width int, _ bool) string {
	text := plainWrap(e.text, width-cols(resultIndent))
	switch e.level {
	case noticeError:
		return paint(rc.th.err, indent(text, "  ✗ ", "    "))
	case noticeWarn:
		return paint(rc.th.warn, indent(text, "  ⚠ ", "    "))
	}
	return paint(rc.th.dim, indent(text, resultPrefix, resultIndent))
}

// headerEntry opens the session.
type headerEntry struct{ version, model, cwd string }

func (e *headerEntry) finished() bool { return true }

func (e *headerEntry) render(rc *renderCtx, width int, _ bool) string {
	lines := []string{
		rc.th.accent.Render("✻ ") + rc.th.bold.Render("coda") + rc.th.dim.Render(" "+e.version),
	}
	var facts []string
	if e.model != "" {
		facts = append(facts, e.model)
	}
	if e.cwd != "" {
		facts = append(facts, e.cwd)
	}
	if len(facts) > 0 {
		lines = append(lines, rc.th.dim.Render(truncate("  "+strings.Join(facts, " · "), width)))
	}
	lines = append(lines, rc.th.dim.Render(truncate("  /help for commands · Shift+Tab cycles permission modes · Ctrl+O shows the transcript", width)))
	return strings.Join(lines, "\n")
}

// retryEntry is the line of a request being retried; it stays live, and
// changes, until the request gets through or the run ends.
type retryEntry struct {
	text string
	done bool
}

func (e *retryEntry) finished() bool { return e.done }

func (e *retryEntry) render(rc *renderCtx, width int, _ bool) string {
	return rc.th.warn.Render(truncate("  ⚠ "+e.text, width))
}
