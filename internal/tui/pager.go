package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// pager is the full transcript with every tool result expanded (Ctrl+O),
// drawn on the alternate screen. It renders only the entries on screen,
// so opening it in a long session costs no more than in a short one.
type pager struct {
	top, off int // the first line shown: line off of entry top
}

// lines is entry i as pager lines, with a blank line after it.
func (m *Model) pagerLines(i int) []string {
	s := m.tr.render(m.rc(), i, m.width, true)
	if s == "" {
		return nil
	}
	return append(strings.Split(s, "\n"), "")
}

func (m *Model) openPager() {
	m.pager = &pager{top: m.tr.len()}
	m.pagerBottom()
}

// pagerBottom scrolls so the last line is at the bottom of the screen.
func (m *Model) pagerBottom() {
	p := m.pager
	need := m.pagerHeight()
	p.top, p.off = m.tr.len(), 0
	for p.top > 0 && need > 0 {
		p.top--
		n := len(m.pagerLines(p.top))
		if n >= need {
			p.off = n - need
			return
		}
		need -= n
	}
	p.off = 0
}

func (m *Model) pagerHeight() int { return max(m.height-1, 1) }

// pagerScroll moves the view by n lines (negative is up).
func (m *Model) pagerScroll(n int) {
	p := m.pager
	for ; n < 0; n++ {
		if p.off > 0 {
			p.off--
			continue
		}
		if p.top == 0 {
			return
		}
		p.top--
		p.off = max(len(m.pagerLines(p.top))-1, 0)
	}
	for ; n > 0; n-- {
		if m.pagerAtBottom() {
			return
		}
		p.off++
		if p.off >= len(m.pagerLines(p.top)) {
			p.top++
			p.off = 0
		}
	}
}

// pagerAtBottom reports whether the last line is on screen.
func (m *Model) pagerAtBottom() bool {
	p := m.pager
	need := m.pagerHeight()
	for i := p.top; i < m.tr.len(); i++ {
		n := len(m.pagerLines(i))
		if i == p.top {
			n -= p.off
		}
		need -= n
		if need < 0 {
			return false
		}
	}
	return true
}

func (m *Model) pagerKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "esc", "q", "ctrl+o", "ctrl+c":
		m.pager = nil
	case "up", "k":
		m.pagerScroll(-1)
	case "down", "j", "enter":
		m.pagerScroll(1)
	case "pgup", "b", "ctrl+u":
		m.pagerScroll(-m.pagerHeight() + 1)
	case "pgdown", "space", "f", "ctrl+d":
		m.pagerScroll(m.pagerHeight() - 1)
	case "home", "g":
		m.pager.top, m.pager.off = 0, 0
	case "end", "G":
		m.pagerBottom()
	}
}

func (m *Model) pagerView() string {
	p := m.pager
	h := m.pagerHeight()
	var out []string
	for i := p.top; i < m.tr.len() && len(out) < h; i++ {
		lines := m.pagerLines(i)
		if i == p.top {
			lines = lines[min(p.off, len(lines)):]
		}
		out = append(out, lines...)
	}
	if len(out) > h {
		out = out[:h]
	}
	for len(out) < h {
		out = append(out, "")
	}
	pos := "end"
	if n := m.tr.len(); n > 0 && !m.pagerAtBottom() {
		pos = fmt.Sprintf("%d%%", 100*p.top/n)
	}
	footer := m.th.dim.Render(truncate(fmt.Sprintf("transcript · %s · ↑↓ PgUp PgDn g G to scroll · Esc or Ctrl+O to close", pos), m.width))
	return strings.Join(out, "\n") + "\n" + footer
}
