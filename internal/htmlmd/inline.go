package htmlmd

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// inline renders n as inline Markdown (text, links, emphasis, code).
func (c *converter) inline(n *html.Node) string {
	switch {
	case n.Type == html.TextNode:
		return collapseSpace(n.Data)
	case n.Type != html.ElementNode || skip(n):
		return ""
	}
	switch n.DataAtom {
	case atom.Br:
		return "\n"
	case atom.Img:
		return c.image(n)
	case atom.A:
		return c.link(n)
	case atom.Em, atom.I, atom.Cite, atom.Dfn, atom.Var:
		return wrap("*", c.inlineChildren(n))
	case atom.Strong, atom.B:
		return wrap("**", c.inlineChildren(n))
	case atom.Del, atom.S, atom.Strike:
		return wrap("~~", c.inlineChildren(n))
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		return codeSpan(collapseSpace(textContent(n)))
	case atom.Q:
		return "\"" + c.inlineChildren(n) + "\""
	}
	if isBlock(n) {
		// A block inside inline content (a <div> in a link): keep words apart.
		return " " + c.inlineChildren(n) + " "
	}
	return c.inlineChildren(n)
}

func (c *converter) inlineChildren(n *html.Node) string {
	var b strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		b.WriteString(c.inline(ch))
	}
	return b.String()
}

func (c *converter) link(n *html.Node) string {
	text := c.inlineChildren(n)
	href := c.resolve(attr(n, "href"))
	t := oneLine(text)
	if href == "" || t == "" {
		return text
	}
	lead, _, trail := splitSpace(text)
	return lead + "[" + strings.ReplaceAll(t, "]", "\\]") + "](" + href + ")" + trail
}

func (c *converter) image(n *html.Node) string {
	alt := oneLine(attr(n, "alt"))
	src := c.resolve(attr(n, "src"))
	if src == "" || strings.HasPrefix(src, "data:") {
		return alt // inline data would drown the text
	}
	return "![" + alt + "](" + src + ")"
}

// resolve makes a link target absolute; "" for targets a reader cannot
// follow (scripts, anchors within the same page).
func (c *converter) resolve(raw string) string {
	raw = strings.TrimSpace(raw)
	lower := strings.ToLower(raw)
	if raw == "" || strings.HasPrefix(raw, "#") || strings.HasPrefix(lower, "javascript:") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return strings.ReplaceAll(raw, " ", "%20")
	}
	if c.base != nil {
		u = c.base.ResolveReference(u)
	}
	return strings.ReplaceAll(u.String(), ")", "%29")
}

// list renders <ul> or <ol> with "- " or "1. " markers; item content is
// indented under its marker so nested lists and code stay inside it.
func (c *converter) list(n *html.Node) string {
	ordered := n.DataAtom == atom.Ol
	num := 1
	if v := attr(n, "start"); v != "" {
		num = atoiOr(v, 1)
	}
	var items []string
	var walk func(*html.Node)
	walk = func(parent *html.Node) {
		for ch := parent.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode || skip(ch) {
				if ch.Type == html.TextNode && strings.TrimSpace(ch.Data) != "" {
					items = append(items, "- "+oneLine(ch.Data))
				}
				continue
			}
			switch ch.DataAtom {
			case atom.Li:
				marker := "- "
				if ordered {
					marker = itoa(num) + ". "
					num++
				}
				body := strings.Join(c.blocks(ch), "\n")
				items = append(items, strings.TrimRight(marker+indent(body, len(marker)), " "))
			case atom.Ul, atom.Ol:
				// A list directly inside a list belongs to the item before it.
				nested := c.list(ch)
				if len(items) > 0 && nested != "" {
					pad := 2
					if ordered {
						pad = 3
					}
					items[len(items)-1] += "\n" + strings.Repeat(" ", pad) + indent(nested, pad)
				} else if nested != "" {
					items = append(items, nested)
				}
			default:
				walk(ch) // wrappers such as <div> around <li>s
			}
		}
	}
	walk(n)
	return strings.Join(items, "\n")
}

// pre renders preformatted text as a fenced code block, with the language
// from a "language-x" or "lang-x" class when there is one.
func (c *converter) pre(n *html.Node) string {
	text := strings.ReplaceAll(textContent(n), "\u00a0", " ")
	text = strings.Trim(text, "\n")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	lang := language(n)
	for ch := n.FirstChild; ch != nil && lang == ""; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ch.DataAtom == atom.Code {
			lang = language(ch)
		}
	}
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + text + "\n" + fence
}

func language(n *html.Node) string {
	for _, class := range strings.Fields(attr(n, "class")) {
		for _, prefix := range []string{"language-", "lang-"} {
			if l, ok := strings.CutPrefix(class, prefix); ok {
				return l
			}
		}
	}
	return ""
}

// table renders a data table as a Markdown pipe table. ok is false for a
// layout table (nested tables, a single column), which reads better as
// plain blocks.
func (c *converter) table(n *html.Node) (md string, ok bool) {
	var rows [][]string
	var caption string
	var walk func(*html.Node) bool
	walk = func(parent *html.Node) bool {
		for ch := parent.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode || skip(ch) {
				continue
			}
			switch ch.DataAtom {
			case atom.Caption:
				caption = oneLine(c.inlineChildren(ch))
			case atom.Thead, atom.Tbody, atom.Tfoot:
				if !walk(ch) {
					return false
				}
			case atom.Tr:
				row, ok := c.tableRow(ch)
				if !ok {
					return false
				}
				rows = append(rows, row)
			}
		}
		return true
	}
	if !walk(n) || len(rows) == 0 {
		return "", false
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width < 2 {
		return "", false
	}
	var b strings.Builder
	if caption != "" {
		b.WriteString(caption + "\n\n")
	}
	for i, r := range rows {
		for len(r) < width {
			r = append(r, "")
		}
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
		}
	}
	return b.String(), true
}

func (c *converter) tableRow(tr *html.Node) ([]string, bool) {
	var row []string
	for cell := tr.FirstChild; cell != nil; cell = cell.NextSibling {
		if cell.Type != html.ElementNode || (cell.DataAtom != atom.Td && cell.DataAtom != atom.Th) || skip(cell) {
			continue
		}
		for d := range cell.Descendants() {
			if d.Type == html.ElementNode && d.DataAtom == atom.Table {
				return nil, false
			}
		}
		text := oneLine(strings.Join(c.blocks(cell), " "))
		row = append(row, strings.ReplaceAll(text, "|", "\\|"))
		for span := min(atoiOr(attr(cell, "colspan"), 1), 20); span > 1; span-- {
			row = append(row, "")
		}
	}
	return row, true
}
