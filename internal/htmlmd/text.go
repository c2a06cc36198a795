package htmlmd

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// collapseSpace turns each run of HTML whitespace (and no-break spaces)
// into one space, as a browser does outside <pre>.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '\u00a0':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteRune(r)
			space = false
		}
	}
	return b.String()
}

// cleanParagraph tidies gathered inline text: single spaces, no blank or
// space-padded lines (lines come only from <br>).
func cleanParagraph(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// oneLine is s on a single line with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// textContent is the raw text below n, with <br> as a newline; skipped
// elements contribute nothing.
func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			switch {
			case ch.Type == html.TextNode:
				b.WriteString(ch.Data)
			case ch.Type == html.ElementNode && ch.DataAtom == atom.Br:
				b.WriteByte('\n')
			case ch.Type == html.ElementNode && !skip(ch):
				walk(ch)
			}
		}
	}
	walk(n)
	return b.String()
}

// wrap puts marker around inner's text, leaving its outer spaces outside
// so "a<em> b </em>c" becomes "a *b* c".
func wrap(marker, inner string) string {
	lead, core, trail := splitSpace(inner)
	if core == "" {
		return inner
	}
	return lead + marker + core + marker + trail
}

func splitSpace(s string) (lead, core, trail string) {
	core = strings.TrimLeft(s, " \n")
	lead = s[:len(s)-len(core)]
	trimmed := strings.TrimRight(core, " \n")
	trail = core[len(trimmed):]
	return lead, trimmed, trail
}

// codeSpan wraps s in enough backticks that none inside ends it.
func codeSpan(s string) string {
	lead, core, trail := splitSpace(s)
	if core == "" {
		return s
	}
	fence := "`"
	for strings.Contains(core, fence) {
		fence += "`"
	}
	if strings.HasPrefix(core, "`") || strings.HasSuffix(core, "`") {
		core = " " + core + " "
	}
	return lead + fence + core + fence + trail
}

// indent prefixes every line but the first with n spaces; blank lines stay
// blank.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" {
			lines[i] = pad + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// prefixLines puts prefix before every line (a blockquote's "> ").
func prefixLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = strings.TrimRight(prefix, " ")
		} else {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return def
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }
