package htmlmd

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// plainText is the fallback for markup the parser refuses: the text of
// the document, a paragraph per block element, without scripts and styles.
// The tokenizer keeps no tree, so no nesting is too deep for it.
func plainText(src []byte) Page {
	z := html.NewTokenizer(bytes.NewReader(src))
	var page Page
	var paras []string
	var para strings.Builder
	flush := func() {
		if t := cleanParagraph(para.String()); t != "" {
			paras = append(paras, t)
		}
		para.Reset()
	}
	hidden := 0 // depth inside elements whose text is not content
	inTitle := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		name, _ := z.TagName()
		a := atom.Lookup(name)
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			switch {
			case a == atom.Title:
				inTitle = tt == html.StartTagToken
			case skipped[a] && !void[a]:
				if tt == html.StartTagToken {
					hidden++
				}
			case a == atom.Br:
				para.WriteString("\n")
			case containers[a] || structural[a]:
				flush()
			}
		case html.EndTagToken:
			switch {
			case a == atom.Title:
				inTitle = false
			case skipped[a] && !void[a]:
				hidden = max(0, hidden-1)
			case containers[a] || structural[a]:
				flush()
			}
		case html.TextToken:
			switch {
			case inTitle:
				page.Title = strings.TrimSpace(collapseSpace(string(z.Text())))
			case hidden == 0:
				para.WriteString(collapseSpace(string(z.Text())))
			}
		}
	}
	flush()
	page.Markdown = strings.Join(paras, "\n\n")
	return page
}

// void elements have no end tag, so they cannot enclose hidden text.
var void = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true,
	atom.Hr: true, atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true,
	atom.Param: true, atom.Source: true, atom.Track: true, atom.Wbr: true,
}
