package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/tools"
)

// approvalGrace is how long after the dialog opens keys are ignored, so
// that typing that was under way when it appeared cannot answer it.
const approvalGrace = 400 * time.Millisecond

// approval is the dialog asking whether a tool call may run. It replaces
// the input box (whose text is kept) until it is answered.
type approval struct {
	req      agent.ApprovalRequest
	opened   time.Time
	options  []approvalOption
	sel      int
	preview  preview
	feedback *editor // set while typing what to do instead
}

type approvalOption struct {
	label        string
	answer       agent.Approval
	needsMessage bool
}

func newApproval(req agent.ApprovalRequest, now time.Time, cwd string) *approval {
	a := &approval{req: req, opened: now}
	if req.Tool == "ExitPlanMode" {
		a.options = []approvalOption{
			{label: "Yes, and auto-accept edits", answer: agent.Approval{Allow: true, Mode: "acceptEdits"}},
			{label: "Yes, and approve each edit", answer: agent.Approval{Allow: true, Mode: "default"}},
			{label: "No, keep planning", answer: agent.Approval{Allow: false}},
			{label: "No, and tell coda what to change", needsMessage: true},
		}
		a.preview = preview{plan: str(toolInput(req.Input), "plan")}
		return a
	}
	a.options = append(a.options, approvalOption{label: "Yes", answer: agent.Approval{Allow: true}})
	if len(req.Suggestions) > 0 {
		a.options = append(a.options, approvalOption{
			label:  "Yes, and don't ask again for " + strings.Join(req.Suggestions, ", "),
			answer: agent.Approval{Allow: true, Always: true},
		})
	}
	a.options = append(a.options,
		approvalOption{label: "No", answer: agent.Approval{Allow: false}},
		approvalOption{label: "No, and tell coda what to do differently", needsMessage: true},
	)
	a.preview = newPreview(req.Tool, req.Input, cwd)
	return a
}

// approvalAction is what a key did to the dialog.
type approvalAction int

const (
	approvalPending approvalAction = iota
	approvalAnswered
	approvalInterrupt // deny and stop the turn
)

// key handles a key press. When it returns approvalAnswered, answer holds
// the reply.
func (a *approval) key(k tea.KeyPressMsg, now time.Time) (approvalAction, agent.Approval) {
	if k.String() == "ctrl+c" {
		return approvalInterrupt, agent.Approval{}
	}
	if now.Sub(a.opened) < approvalGrace {
		return approvalPending, agent.Approval{}
	}
	if a.feedback != nil {
		switch k.String() {
		case "esc":
			a.feedback = nil
		case "enter":
			msg := strings.TrimSpace(a.feedback.String())
			return approvalAnswered, agent.Approval{Allow: false, Message: msg}
		default:
			a.feedback.key(k)
		}
		return approvalPending, agent.Approval{}
	}
	switch s := k.String(); s {
	case "up", "k", "shift+tab":
		a.sel = (a.sel - 1 + len(a.options)) % len(a.options)
	case "down", "j", "tab":
		a.sel = (a.sel + 1) % len(a.options)
	case "enter":
		return a.choose(a.sel)
	case "esc":
		return approvalInterrupt, agent.Approval{}
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
			if i := int(s[0] - '1'); i < len(a.options) {
				a.sel = i
				return a.choose(i)
			}
		}
	}
	return approvalPending, agent.Approval{}
}

func (a *approval) choose(i int) (approvalAction, agent.Approval) {
	if a.options[i].needsMessage {
		a.feedback = &editor{}
		return approvalPending, agent.Approval{}
	}
	return approvalAnswered, a.options[i].answer
}

// view draws the dialog in a box as wide as the terminal, its preview cut
// to maxRows.
func (a *approval) view(rc *renderCtx, width, maxRows int) (string, int, int) {
	th := rc.th
	inner := width - 4 // border and padding
	var b strings.Builder
	b.WriteString(th.bold.Render(approvalTitle(a.req.Tool)) + "\n\n")
	if p := a.preview.view(rc, inner, maxRows); p != "" {
		b.WriteString(p + "\n\n")
	}
	if a.req.Reason != "" {
		b.WriteString(paint(th.dim, plainWrap(a.req.Reason, inner)) + "\n\n")
	}
	b.WriteString("Do you want to proceed?\n")
	for i, o := range a.options {
		line := fmt.Sprintf("%d. %s", i+1, o.label)
		if i == a.sel {
			b.WriteString(th.selected.Render(truncate("❯ "+line, inner)))
		} else {
			b.WriteString(truncate("  "+line, inner))
		}
		b.WriteString("\n")
	}
	cy, cx := -1, -1
	if a.feedback != nil {
		lines, y, x := a.feedback.view(inner, 4, "> ")
		b.WriteString("\n" + th.dim.Render("Tell coda what to do instead (Enter to send, Esc to go back):") + "\n")
		cy = strings.Count(b.String(), "\n") + y + 1 // +1 for the top border
		cx = x + 2                                   // border and padding
		b.WriteString(strings.Join(lines, "\n"))
	} else {
		b.WriteString(th.dim.Render("Enter or 1-" + fmt.Sprint(len(a.options)) + " to choose · Esc to deny and stop"))
	}
	return box(th.dialog, b.String(), width), cy, cx
}

func approvalTitle(tool string) string {
	switch tool {
	case "Bash":
		return "Run this command?"
	case "Edit", "MultiEdit":
		return "Edit this file?"
	case "Write":
		return "Write this file?"
	case "NotebookEdit":
		return "Edit this notebook?"
	case "WebFetch":
		return "Fetch this page?"
	case "ExitPlanMode":
		return "coda's plan is ready. Start working on it?"
	}
	return "Use " + tool + "?"
}

// preview is a call's input the way it is best judged: the command for
// Bash, a diff for edits, the JSON otherwise. It is computed once, when
// the dialog opens (reading the file a Write replaces), and drawn at the
// width of each frame.
type preview struct {
	head string // bold: the command or the path
	diff string // a unified diff without headers
	body string // dim: a description, the JSON
	plan string // Markdown: a plan to approve
}

func newPreview(tool string, raw json.RawMessage, cwd string) preview {
	in := toolInput(raw)
	switch tool {
	case "Bash":
		return preview{head: str(in, "command"), body: str(in, "description")}
	case "Edit":
		path := str(in, "file_path")
		return preview{head: relPath(path, cwd),
			diff: tools.NewFileDiff(path, str(in, "old_string"), str(in, "new_string"), false).Diff}
	case "Write":
		path := str(in, "file_path")
		content := str(in, "content")
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		if old, err := os.ReadFile(abs); err == nil {
			return preview{head: relPath(path, cwd), diff: tools.NewFileDiff(path, string(old), content, false).Diff}
		}
		return preview{head: relPath(path, cwd) + " (new file)", diff: tools.NewFileDiff(path, "", content, true).Diff}
	case "WebFetch":
		return preview{head: str(in, "url"), body: str(in, "prompt")}
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		buf.Reset()
		buf.Write(raw)
	}
	return preview{body: buf.String()}
}

func (p preview) view(rc *renderCtx, width, maxRows int) string {
	th := rc.th
	maxRows = max(maxRows, 3)
	var parts []string
	if p.plan != "" {
		out, more := firstLines(rc.md.render(p.plan, width), maxRows)
		parts = append(parts, out)
		if more > 0 {
			parts = append(parts, th.dim.Render(fmt.Sprintf("… %s more (ctrl+o after answering shows it all)", plural(more, "line"))))
		}
	}
	if p.head != "" {
		out, more := firstLines(wrapLines(p.head, width), maxRows)
		parts = append(parts, paint(th.bold, out))
		if more > 0 {
			parts = append(parts, th.dim.Render(fmt.Sprintf("… %s more", plural(more, "line"))))
		}
	}
	if p.diff != "" {
		out, more := firstLines(p.diff, maxRows)
		parts = append(parts, colorDiff(th, out, width, true))
		if more > 0 {
			parts = append(parts, th.dim.Render(fmt.Sprintf("… %s more", plural(more, "line"))))
		}
	}
	if p.body != "" {
		out, more := firstLines(wrapLines(p.body, width), maxRows)
		if more > 0 {
			out += fmt.Sprintf("\n… %s more", plural(more, "line"))
		}
		parts = append(parts, paint(th.dim, out))
	}
	return strings.Join(parts, "\n")
}
