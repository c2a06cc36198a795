package commands

import (
	"fmt"
	"strings"
	"time"
)

// TypedText is what the user typed, from the text coda stored for a
// prompt: the system reminders coda added are cut out, and a shell line
// the user ran ("<bash-input>ls</bash-input>...") reads "!ls" again.
func TypedText(s string) string {
	s = cutTagged(s, "system-reminder")
	if rest, ok := strings.CutPrefix(strings.TrimSpace(s), "<bash-input>"); ok {
		command, _, _ := strings.Cut(rest, "</bash-input>")
		return "!" + strings.TrimSpace(command)
	}
	return strings.TrimSpace(s)
}

// cutTagged removes every <tag>...</tag> span from s; an unclosed one (a
// title cut short) runs to the end.
func cutTagged(s, tag string) string {
	open, end := "<"+tag+">", "</"+tag+">"
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len(end):]
	}
}

// oneLine squeezes s onto one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimRight(string(r[:n-1]), " ") + "…"
	}
	return s
}

// ago says how long before now t was, as a picker shows it.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}
