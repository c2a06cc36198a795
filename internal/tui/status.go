package tui

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// loadBranch asks git for the current branch, for the status line.
func (m *Model) loadBranch() tea.Cmd {
	dir := m.o.ProjectDir
	if dir == "" {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", "branch", "--show-current")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return branchMsg("")
		}
		return branchMsg(strings.TrimSpace(string(out)))
	}
}

// activityLine is the spinner line while something runs.
func (m *Model) activityLine() string {
	if !m.isBusy() {
		return ""
	}
	var what string
	var started time.Time
	switch {
	case m.run != nil:
		started = m.run.started
		what = "Working"
		if m.run.interrupted {
			what = "Stopping"
		} else if m.dialog != nil {
			what = "Waiting for your answer"
		} else if t, ok := currentTodo(m.todos); ok && t.ActiveForm != "" {
			what = t.ActiveForm
		} else if m.run.thinking != nil {
			what = "Thinking"
		}
	default:
		what = "Running " + m.busy
	}
	line := m.th.accent.Render(spinnerFrames[m.frame%len(spinnerFrames)]+" ") + truncate(what, m.width/2) + "…"
	var facts []string
	if !started.IsZero() {
		facts = append(facts, shortDuration(m.now().Sub(started)))
	}
	facts = append(facts, "esc to interrupt")
	return line + m.th.dim.Render(" ("+strings.Join(facts, " · ")+")")
}

// statusLine shows the model, the permission mode, context and cost, the
// branch and background work. What does not fit is left out, least
// useful first.
func (m *Model) statusLine() string {
	model := ""
	window := 0
	if m.o.Agent != nil {
		info := m.o.Agent.Model().Info
		model, window = info.ID, info.ContextWindow
	}
	dim := m.th.dim.Render
	var left []string // styled parts
	if model != "" {
		left = append(left, dim(model))
	}
	left = append(left, m.modeLabel())
	if window > 0 && m.contextTokens > 0 {
		left = append(left, dim(fmt.Sprintf("ctx %d%%", 100*m.contextTokens/window)))
	}
	if n := m.usage.TotalInput() + m.usage.OutputTokens; n > 0 {
		left = append(left, dim(shortCount(n)+" tok"))
	}
	if m.cost > 0 {
		left = append(left, dim(fmt.Sprintf("$%.2f", m.cost)))
	}
	var right []string
	if m.shells > 0 {
		right = append(right, plural(m.shells, "shell")+" running")
	}
	if m.branch != "" {
		right = append(right, "⎇ "+m.branch)
	}
	sep := dim(" · ")
	for _, withHint := range []bool{true, false} {
		parts := left
		if withHint {
			// The hint goes right after the mode it cycles.
			n := min(2, len(left))
			parts = append(append(append([]string(nil), left[:n]...), dim("(shift+tab)")), left[n:]...)
		}
		l := "  " + strings.Join(parts, sep)
		l = strings.Replace(l, sep+dim("(shift+tab)"), dim(" (shift+tab)"), 1)
		for r := len(right); r >= 0; r-- {
			if r == 0 {
				if cols(l) <= m.width {
					return l
				}
				continue
			}
			rs := dim(strings.Join(right[:r], " · "))
			if gap := m.width - cols(l) - cols(rs) - 1; gap >= 2 {
				return l + strings.Repeat(" ", gap) + rs
			}
		}
	}
	return truncate("  "+strings.Join(left, sep), m.width)
}

func (m *Model) modeLabel() string {
	var s string
	switch m.mode {
	case "acceptEdits":
		s = "⏵⏵ accept edits"
	case "plan":
		s = "⏸ plan mode"
	case "bypassPermissions":
		s = "⚠ bypass permissions"
	case "dontAsk":
		s = "dontAsk mode"
	default:
		return m.th.dim.Render("default mode")
	}
	if st, ok := m.th.modes[m.mode]; ok {
		return st.Render(s)
	}
	return s
}
