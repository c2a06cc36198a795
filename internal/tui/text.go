package tui

import (
	"fmt"
	"strings"
	"time"

	xansi "github.com/charmbracelet/x/ansi"
)

func stripANSI(s string) string { return xansi.Strip(s) }

// cols is the number of terminal columns s takes.
func cols(s string) int { return xansi.StringWidth(s) }

// plainWrap wraps s at width, breaking words that are longer.
func plainWrap(s string, w int) string { return xansi.Wrap(s, max(w, 1), "") }

// truncate cuts s to w columns, ending with an ellipsis when cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	return xansi.Truncate(s, w, "…")
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// indent prefixes every line of s: first with head, the rest with rest.
func indent(s, head, rest string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = head + l
		} else if l == "" {
			lines[i] = strings.TrimRight(rest, " ")
		} else {
			lines[i] = rest + l
		}
	}
	return strings.Join(lines, "\n")
}

// lastLines keeps the last n lines of s and says how many were dropped.
func lastLines(s string, n int) (string, int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "", 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s, 0
	}
	return strings.Join(lines[len(lines)-n:], "\n"), len(lines) - n
}

// firstLines keeps the first n lines of s and says how many were dropped.
func firstLines(s string, n int) (string, int) {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "", 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s, 0
	}
	return strings.Join(lines[:n], "\n"), len(lines) - n
}

// countLines counts the lines of s, ignoring a final newline.
func countLines(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// shortCount writes 950, 12.3k, 1.2M.
func shortCount(n int) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

// shortDuration writes 0.4s, 12s, 3m05s.
func shortDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// plural writes "1 line", "3 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
