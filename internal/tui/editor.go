package tui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// editor is the multi-line prompt input. The text is a rune slice with a
// cursor index; it is wrapped at the box width only for display.
type editor struct {
	buf []rune
	pos int
}

func (e *editor) String() string { return string(e.buf) }
func (e *editor) empty() bool    { return len(e.buf) == 0 }

// set replaces the text and puts the cursor at its end.
func (e *editor) set(s string) {
	e.buf = []rune(cleanInput(s))
	e.pos = len(e.buf)
}

func (e *editor) reset() { e.buf, e.pos = nil, 0 }

// insert adds s at the cursor.
func (e *editor) insert(s string) {
	r := []rune(cleanInput(s))
	e.buf = append(e.buf[:e.pos], append(r, e.buf[e.pos:]...)...)
	e.pos += len(r)
}

// cleanInput normalises pasted or typed text: CRLF and CR line ends
// become \n, tabs become spaces (a tab has no fixed width to place the
// cursor after), and other control characters are dropped.
func cleanInput(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\t", "    ")
	return strings.Map(func(r rune) rune {
		if r != '\n' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// key applies an editing key and reports whether it was one.
func (e *editor) key(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "left", "ctrl+b":
		e.pos = max(e.pos-1, 0)
	case "right", "ctrl+f":
		e.pos = min(e.pos+1, len(e.buf))
	case "alt+left", "ctrl+left", "alt+b":
		e.pos = e.wordLeft()
	case "alt+right", "ctrl+right", "alt+f":
		e.pos = e.wordRight()
	case "home", "ctrl+a":
		e.pos = e.lineStart()
	case "end", "ctrl+e":
		e.pos = e.lineEnd()
	case "backspace", "ctrl+h":
		if e.pos > 0 {
			e.buf = append(e.buf[:e.pos-1], e.buf[e.pos:]...)
			e.pos--
		}
	case "delete", "ctrl+d":
		if e.pos < len(e.buf) {
			e.buf = append(e.buf[:e.pos], e.buf[e.pos+1:]...)
		}
	case "ctrl+u":
		start := e.lineStart()
		if start == e.pos && start > 0 {
			start-- // at a line start: join with the line above
		}
		e.buf = append(e.buf[:start], e.buf[e.pos:]...)
		e.pos = start
	case "ctrl+k":
		end := e.lineEnd()
		if end == e.pos && end < len(e.buf) {
			end++ // at a line end: join with the line below
		}
		e.buf = append(e.buf[:e.pos], e.buf[end:]...)
	case "ctrl+w", "alt+backspace":
		start := e.wordLeft()
		e.buf = append(e.buf[:start], e.buf[e.pos:]...)
		e.pos = start
	case "shift+enter", "alt+enter", "ctrl+j":
		e.insert("\n")
	default:
		if k.Text == "" || k.Mod.Contains(tea.ModCtrl) || k.Mod.Contains(tea.ModAlt) {
			return false
		}
		e.insert(k.Text)
	}
	return true
}

func (e *editor) lineStart() int {
	i := e.pos
	for i > 0 && e.buf[i-1] != '\n' {
		i--
	}
	return i
}

func (e *editor) lineEnd() int {
	i := e.pos
	for i < len(e.buf) && e.buf[i] != '\n' {
		i++
	}
	return i
}

func (e *editor) wordLeft() int {
	i := e.pos
	for i > 0 && unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	return i
}

func (e *editor) wordRight() int {
	i := e.pos
	for i < len(e.buf) && unicode.IsSpace(e.buf[i]) {
		i++
	}
	for i < len(e.buf) && !unicode.IsSpace(e.buf[i]) {
		i++
	}
	return i
}

// row is one display row of the text: runes [start, end).
type row struct{ start, end int }

// layout wraps the text at w columns, at spaces where it can. It returns
// the rows and the row and column of the cursor. The last column is kept
// free for the cursor.
func (e *editor) layout(w int) (rows []row, cr, cc int) {
	w = max(w-1, 1)
	start, col, lastSpace := 0, 0, -1
	for i := 0; i < len(e.buf); i++ {
		r := e.buf[i]
		if r == '\n' {
			rows = append(rows, row{start, i})
			start, col, lastSpace = i+1, 0, -1
			continue
		}
		rw := max(xansi.StringWidth(string(r)), 0)
		if col+rw > w && col > 0 {
			if r != ' ' && lastSpace >= start {
				// Break after the last space; the word moves down.
				rows = append(rows, row{start, lastSpace + 1})
				start = lastSpace + 1
				col = runesWidth(e.buf[start:i])
			} else {
				rows = append(rows, row{start, i})
				start, col = i, 0
			}
			lastSpace = -1
		}
		if r == ' ' {
			lastSpace = i
		}
		col += rw
	}
	rows = append(rows, row{start, len(e.buf)})
	for i, r := range rows {
		last := i == len(rows)-1
		// A position at a row's end belongs to the next row when that row
		// continues the same line (a wrap), to this one at a newline.
		if e.pos >= r.start && (e.pos < r.end || last || (e.pos == r.end && e.buf[r.end] == '\n')) {
			return rows, i, runesWidth(e.buf[r.start:e.pos])
		}
	}
	return rows, len(rows) - 1, 0
}

func runesWidth(rs []rune) int { return xansi.StringWidth(string(rs)) }

// moveVertical moves the cursor one display row up (-1) or down (+1),
// keeping its column. It reports false at the first or last row, where
// Up and Down walk the history instead.
func (e *editor) moveVertical(dir, w int) bool {
	rows, cr, cc := e.layout(w)
	target := cr + dir
	if target < 0 || target >= len(rows) {
		return false
	}
	r := rows[target]
	col := 0
	pos := r.start
	for pos < r.end {
		rw := xansi.StringWidth(string(e.buf[pos]))
		if col+rw > cc {
			break
		}
		col += rw
		pos++
	}
	e.pos = pos
	return true
}

// view draws at most maxRows rows around the cursor, each prefixed with
// the prompt on the first text row and spaces after. It returns the lines
// and the cursor's line and column within them.
func (e *editor) view(w, maxRows int, prompt string) (lines []string, cy, cx int) {
	pw := cols(prompt)
	rows, cr, cc := e.layout(w - pw)
	first := 0
	if len(rows) > maxRows {
		first = min(max(cr-maxRows/2, 0), len(rows)-maxRows)
	}
	last := min(first+maxRows, len(rows))
	pad := strings.Repeat(" ", pw)
	for i := first; i < last; i++ {
		p := pad
		if i == 0 {
			p = prompt
		}
		lines = append(lines, p+string(e.buf[rows[i].start:rows[i].end]))
	}
	return lines, cr - first, cc + pw
}

// tokenAt returns the whitespace-delimited word ending at the cursor and
// where it starts.
func (e *editor) tokenAt() (string, int) {
	i := e.pos
	for i > 0 && !unicode.IsSpace(e.buf[i-1]) {
		i--
	}
	return string(e.buf[i:e.pos]), i
}

// replaceRange swaps runes [start, e.pos) for s.
func (e *editor) replaceRange(start int, s string) {
	r := []rune(s)
	e.buf = append(e.buf[:start], append(r, e.buf[e.pos:]...)...)
	e.pos = start + len(r)
}
