package tui

import (
	"bytes"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// theme holds the styles. Colours are ANSI-256 numbers so that they look
// the same in most terminals; output is downsampled to the terminal's
// profile (none at all under NO_COLOR) before it is written.
type theme struct {
	accent   lipgloss.Style // the assistant bullet, selections
	user     lipgloss.Style // the user's prompts
	dim      lipgloss.Style // secondary text
	bold     lipgloss.Style
	ok       lipgloss.Style
	warn     lipgloss.Style
	err      lipgloss.Style
	added    lipgloss.Style // diff lines
	removed  lipgloss.Style
	hunk     lipgloss.Style
	selected lipgloss.Style // the highlighted row of a list
	border   lipgloss.Style // the input box's frame
	dialog   lipgloss.Style // the approval box's frame
	modes    map[string]lipgloss.Style
}

func newTheme() theme {
	c := lipgloss.Color
	st := lipgloss.NewStyle
	return theme{
		accent:   st().Foreground(c("208")),
		user:     st().Foreground(c("250")),
		dim:      st().Foreground(c("244")),
		bold:     st().Bold(true),
		ok:       st().Foreground(c("71")),
		warn:     st().Foreground(c("178")),
		err:      st().Foreground(c("167")),
		added:    st().Foreground(c("114")),
		removed:  st().Foreground(c("174")),
		hunk:     st().Foreground(c("67")),
		selected: st().Foreground(c("75")).Bold(true),
		border:   st().Foreground(c("240")),
		dialog:   st().Foreground(c("178")),
		modes: map[string]lipgloss.Style{
			"acceptEdits":       st().Foreground(c("141")),
			"plan":              st().Foreground(c("73")),
			"bypassPermissions": st().Foreground(c("167")),
			"dontAsk":           st().Foreground(c("167")),
		},
	}
}

// downsample rewrites the colours of s for profile p. Text printed into
// the scrollback does not pass through bubbletea's renderer, which would
// otherwise do this.
func downsample(s string, p colorprofile.Profile) string {
	if p == colorprofile.TrueColor || p == colorprofile.Unknown {
		return s
	}
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	if _, err := w.WriteString(s); err != nil {
		return s
	}
	return buf.String()
}

// box frames content (already wrapped to width-4 columns) in a rounded
// border width columns wide, with one column of padding inside.
func box(frame lipgloss.Style, content string, width int) string {
	width = max(width, 6)
	inner := width - 4
	lines := strings.Split(content, "\n")
	out := make([]string, 0, len(lines)+2)
	out = append(out, frame.Render("╭"+strings.Repeat("─", width-2)+"╮"))
	side := frame.Render("│")
	for _, l := range lines {
		l = truncate(l, inner)
		out = append(out, side+" "+l+strings.Repeat(" ", max(inner-cols(l), 0))+" "+side)
	}
	out = append(out, frame.Render("╰"+strings.Repeat("─", width-2)+"╯"))
	return strings.Join(out, "\n")
}

// paint styles each line of s on its own. lipgloss pads the lines of a
// multi-line string to one width, which would add trailing blanks.
func paint(st lipgloss.Style, s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = st.Render(l)
		}
	}
	return strings.Join(lines, "\n")
}
