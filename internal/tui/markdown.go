package tui

import (
	"regexp"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// markdown renders Markdown for the terminal at a given width. Creating a
// glamour renderer is costly, so one is kept per width (the transcript and
// a dialog use two).
type markdown struct {
	style     ansi.StyleConfig
	renderers map[int]*glamour.TermRenderer
}

// maxRenderers bounds the renderers kept; a resize makes new ones.
const maxRenderers = 4

func newMarkdown() *markdown {
	st := styles.DarkStyleConfig
	zero := uint(0)
	// The transcript supplies its own margins and spacing; the terminal's
	// own foreground colour reads better than a fixed grey on any theme.
	st.Document.Margin = &zero
	st.Document.BlockPrefix = ""
	st.Document.BlockSuffix = ""
	st.Document.Color = nil
	st.CodeBlock.Margin = &zero
	return &markdown{style: st, renderers: map[int]*glamour.TermRenderer{}}
}

// render returns src rendered to at most width columns, without the
// padding glamour adds to fill lines and without blank lines around it.
func (m *markdown) render(src string, width int) string {
	width = max(width, 10)
	r, ok := m.renderers[width]
	if !ok {
		// 24-bit colours skip chroma's nearest-colour search on every
		// render; the output is downsampled to the terminal's profile later.
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStyles(m.style), glamour.WithWordWrap(width),
			glamour.WithChromaFormatter("terminal16m"))
		if err != nil {
			return plainWrap(src, width)
		}
		if len(m.renderers) >= maxRenderers {
			clear(m.renderers)
		}
		m.renderers[width] = r
	}
	// Tabs would be measured as one column and drawn as up to eight.
	out, err := r.Render(strings.ReplaceAll(src, "\t", "    "))
	if err != nil {
		return plainWrap(src, width)
	}
	return tidy(out)
}

// trailingPad matches what glamour appends to fill a line: spaces wrapped
// in colour sequences.
var trailingPad = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// tidy strips the fill at the end of each line and blank lines at both
// ends.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if loc := trailingPad.FindStringIndex(l); loc != nil {
			l = l[:loc[0]]
			if strings.Contains(l, "\x1b[") {
				l += "\x1b[m"
			}
		}
		lines[i] = l
	}
	start, end := 0, len(lines)
	for start < end && blank(lines[start]) {
		start++
	}
	for end > start && blank(lines[end-1]) {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

func blank(line string) bool {
	return strings.TrimSpace(stripANSI(line)) == ""
}

// stableEnd is the length of the prefix of streamed Markdown made of
// complete top-level blocks: those followed by a blank line and the start
// of another block. Rendering that prefix cannot change as more text
// arrives, so it is rendered once; only the rest is redrawn while the
// answer streams. Code fences are never split.
func stableEnd(text string) int {
	end := 0
	fence := ""
	sawBlank := false
	for pos := 0; pos < len(text); {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break // the last line may still grow
		}
		line := text[pos : pos+nl]
		next := pos + nl + 1
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
		case strings.TrimSpace(line) == "":
			sawBlank = true
		default:
			if sawBlank && line[0] != ' ' && line[0] != '\t' {
				end = pos
			}
			sawBlank = false
			if f := fenceOpen(trimmed); f != "" && len(line)-len(trimmed) < 4 {
				fence = f
			}
		}
		pos = next
	}
	return end
}

// fenceOpen returns the fence (``` or ~~~, at least three) that line
// opens, or "".
func fenceOpen(line string) string {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == ch {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// mdStream is an assistant answer arriving in pieces. Complete blocks are
// rendered once; the tail is re-rendered when it changes.
type mdStream struct {
	text   strings.Builder
	stable int      // text[:stable] is in chunks
	chunks []string // raw Markdown of the complete parts, in order
	// rendered caches chunks at one width.
	rendered      []string
	renderedWidth int
	tailSrc       string
	tailOut       string
	tailWidth     int
}

func (s *mdStream) append(delta string) {
	s.text.WriteString(delta)
	full := s.text.String()
	if end := stableEnd(full[s.stable:]); end > 0 {
		s.chunks = append(s.chunks, full[s.stable:s.stable+end])
		s.stable += end
	}
}

// String is the whole text so far.
func (s *mdStream) String() string { return s.text.String() }

// finish treats the tail as complete.
func (s *mdStream) finish() {
	full := s.text.String()
	if rest := full[s.stable:]; strings.TrimSpace(rest) != "" {
		s.chunks = append(s.chunks, rest)
	}
	s.stable = len(full)
}

// chunk renders the i-th complete chunk.
func (s *mdStream) chunk(md *markdown, i, width int) string {
	if s.renderedWidth != width {
		s.rendered, s.renderedWidth = nil, width
	}
	for len(s.rendered) <= i {
		s.rendered = append(s.rendered, md.render(s.chunks[len(s.rendered)], width))
	}
	return s.rendered[i]
}

// tail renders the incomplete rest.
func (s *mdStream) tail(md *markdown, width int) string {
	src := s.text.String()[s.stable:]
	if strings.TrimSpace(src) == "" {
		return ""
	}
	if src != s.tailSrc || width != s.tailWidth {
		s.tailSrc, s.tailWidth = src, width
		s.tailOut = md.render(src, width)
	}
	return s.tailOut
}
