package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/commands"
)

// picker is a list a command asked the user to choose from (/model,
// /rewind, /resume).
type picker struct {
	title   string // the first line heads the picker; the rest is a note
	choices []commands.Choice
	sel     int
	then    func(ctx context.Context, value string) (commands.Result, error)
	// ui is the recorder of the command that opened the picker; then
	// records its own calls there.
	ui *uiRecorder
}

// pickerRows is how many choices show at once; the list scrolls.
const pickerRows = 12

func newPicker(title string, choices []commands.Choice, then func(context.Context, string) (commands.Result, error)) *picker {
	p := &picker{title: title, choices: choices, then: then}
	for i, c := range choices {
		if c.Current {
			p.sel = i
		}
	}
	return p
}

// heading is the picker's first line.
func (p *picker) heading() string {
	h, _, _ := strings.Cut(p.title, "\n")
	return h
}

// key moves the selection; it returns the chosen value, or done with an
// empty value when the picker was cancelled.
func (p *picker) key(k tea.KeyPressMsg) (value string, done bool) {
	switch s := k.String(); s {
	case "up", "k", "shift+tab":
		p.sel = (p.sel - 1 + len(p.choices)) % max(len(p.choices), 1)
	case "down", "j", "tab":
		p.sel = (p.sel + 1) % max(len(p.choices), 1)
	case "enter":
		if len(p.choices) == 0 {
			return "", true
		}
		return p.choices[p.sel].Value, true
	case "esc", "ctrl+c":
		return "", true
	default:
		for _, c := range p.choices {
			if c.Key != "" && strings.EqualFold(c.Key, s) {
				return c.Value, true
			}
		}
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
			if i := int(s[0] - '1'); i < len(p.choices) {
				return p.choices[i].Value, true
			}
		}
	}
	return "", false
}

func (p *picker) view(th *theme, width int) string {
	var b strings.Builder
	heading, note, _ := strings.Cut(p.title, "\n")
	b.WriteString(th.bold.Render(truncate(heading, width-4)) + "\n")
	if note != "" {
		for _, line := range strings.Split(note, "\n") {
			b.WriteString(th.dim.Render(truncate(line, width-4)) + "\n")
		}
	}
	first := 0
	if p.sel >= pickerRows {
		first = p.sel - pickerRows + 1
	}
	last := min(first+pickerRows, len(p.choices))
	for i := first; i < last; i++ {
		c := p.choices[i]
		line := fmt.Sprintf("%d. %s", i+1, c.Label)
		if c.Current {
			line += " ✓"
		}
		if c.Detail != "" {
			line += "  " + th.dim.Render(c.Detail)
		}
		if i == p.sel {
			b.WriteString(th.selected.Render(truncate("❯ "+line, width-4)))
		} else {
			b.WriteString(truncate("  "+line, width-4))
		}
		b.WriteString("\n")
	}
	if more := len(p.choices) - last; more > 0 {
		b.WriteString(th.dim.Render(fmt.Sprintf("  … %d more", more)) + "\n")
	}
	b.WriteString(th.dim.Render("Enter to choose · Esc to cancel"))
	return box(th.border, b.String(), width)
}
