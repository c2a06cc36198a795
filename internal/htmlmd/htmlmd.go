// Package htmlmd converts an HTML page to Markdown for a model to read: the
// main content's headings, paragraphs, links, lists, code, emphasis and
// tables, without scripts, styles, navigation and other page furniture.
package htmlmd

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is a converted HTML document.
type Page struct {
	Title    string // the <title>, whitespace collapsed
	Markdown string
}

// Convert parses an HTML document and renders its main content as
// Markdown. base, when not nil, makes relative links and image sources
// absolute. Markup too deeply nested to parse still yields its text, as
// plain paragraphs; the only errors are r's.
func Convert(r io.Reader, base *url.URL) (Page, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return Page{}, fmt.Errorf("read HTML: %w", err)
	}
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		return plainText(src), nil
	}
	c := &converter{base: base, hasBlock: make(map[*html.Node]bool)}
	md := strings.Join(c.blocks(mainContent(doc)), "\n\n")
	return Page{Title: title(doc), Markdown: md}, nil
}

// String converts an HTML fragment or document held in a string.
func String(s string, base *url.URL) (string, error) {
	p, err := Convert(strings.NewReader(s), base)
	return p.Markdown, err
}

type converter struct {
	base     *url.URL
	hasBlock map[*html.Node]bool // memo for containsBlock
}

// mainContent picks the part of the page worth reading: <main> (or
// role=main), else a lone <article>, else <body>.
func mainContent(doc *html.Node) *html.Node {
	var body, main *html.Node
	var articles []*html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch {
		case main == nil && (n.DataAtom == atom.Main || attr(n, "role") == "main"):
			main = n
		case n.DataAtom == atom.Article:
			articles = append(articles, n)
		case body == nil && n.DataAtom == atom.Body:
			body = n
		}
	}
	switch {
	case main != nil:
		return main
	case len(articles) == 1:
		return articles[0]
	case body != nil:
		return body
	}
	return doc
}

func title(doc *html.Node) string {
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			return strings.TrimSpace(collapseSpace(textContent(n)))
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Svg {
			return "" // <title> inside SVG labels a drawing, not the page
		}
	}
	return ""
}

// skipped elements are page furniture or not text at all.
var skipped = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Math: true, atom.Canvas: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Nav: true,
	atom.Footer: true, atom.Aside: true, atom.Button: true, atom.Select: true,
	atom.Input: true, atom.Textarea: true, atom.Audio: true, atom.Video: true,
	atom.Map: true, atom.Dialog: true, atom.Link: true,
	atom.Meta: true,
}

func skip(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return n.Type == html.CommentNode
	}
	if skipped[n.DataAtom] {
		return true
	}
	if hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
		return true
	}
	switch attr(n, "role") {
	case "navigation", "banner", "contentinfo", "search", "dialog":
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

// containers are block elements whose content flows on as blocks.
var containers = map[atom.Atom]bool{
	atom.Html: true, atom.Body: true, atom.Main: true, atom.Article: true,
	atom.Section: true, atom.Div: true, atom.Header: true, atom.P: true,
	atom.Figure: true, atom.Figcaption: true, atom.Details: true,
	atom.Summary: true, atom.Address: true, atom.Center: true, atom.Form: true,
	atom.Fieldset: true, atom.Legend: true, atom.Hgroup: true, atom.Search: true,
	atom.Li: true, atom.Caption: true, atom.Tbody: true, atom.Thead: true,
	atom.Tfoot: true, atom.Tr: true, atom.Td: true, atom.Th: true,
	atom.Picture: true,
}

// structural are block elements with their own Markdown form.
var structural = map[atom.Atom]bool{
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Pre: true,
	atom.Blockquote: true, atom.Table: true, atom.Hr: true, atom.Dl: true,
	atom.Dt: true, atom.Dd: true,
}

func isBlock(n *html.Node) bool {
	return n.Type == html.ElementNode && (containers[n.DataAtom] || structural[n.DataAtom])
}

// containsBlock reports whether a block element lies below n.
func (c *converter) containsBlock(n *html.Node) bool {
	if v, ok := c.hasBlock[n]; ok {
		return v
	}
	v := false
	for ch := n.FirstChild; ch != nil && !v; ch = ch.NextSibling {
		if skip(ch) {
			continue
		}
		v = isBlock(ch) || c.containsBlock(ch)
	}
	c.hasBlock[n] = v
	return v
}

// blocks renders the content of n as Markdown blocks (paragraphs, headings,
// lists...), to be joined by blank lines.
func (c *converter) blocks(n *html.Node) []string {
	b := &blockWriter{c: c}
	b.children(n)
	b.flush()
	return b.out
}

// blockWriter collects blocks; inline content gathers in para until a
// block element ends the paragraph.
type blockWriter struct {
	c    *converter
	out  []string
	para strings.Builder
}

func (b *blockWriter) add(block string) {
	if block = strings.TrimRight(block, " \n"); strings.TrimSpace(block) != "" {
		b.out = append(b.out, block)
	}
}

func (b *blockWriter) flush() {
	b.add(cleanParagraph(b.para.String()))
	b.para.Reset()
}

func (b *blockWriter) children(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		b.node(ch)
	}
}

func (b *blockWriter) node(n *html.Node) {
	switch {
	case n.Type == html.TextNode:
		b.para.WriteString(collapseSpace(n.Data))
		return
	case n.Type == html.DocumentNode:
		b.children(n)
		return
	case n.Type != html.ElementNode || skip(n):
		return
	}
	c := b.c
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		b.flush()
		level := int(n.Data[1] - '0')
		if t := oneLine(c.inlineChildren(n)); t != "" {
			b.add(strings.Repeat("#", level) + " " + t)
		}
	case atom.Ul, atom.Ol:
		b.flush()
		b.add(c.list(n))
	case atom.Pre:
		b.flush()
		b.add(c.pre(n))
	case atom.Blockquote:
		b.flush()
		b.add(prefixLines(strings.Join(c.blocks(n), "\n\n"), "> "))
	case atom.Table:
		b.flush()
		if md, ok := c.table(n); ok {
			b.add(md)
		} else {
			b.children(n) // a layout table: its cells are just containers
			b.flush()
		}
	case atom.Hr:
		b.flush()
		b.add("---")
	case atom.Br:
		b.para.WriteString("\n")
	case atom.Dl, atom.Dt:
		b.flush()
		b.children(n)
		b.flush()
	case atom.Dd:
		b.flush()
		b.add(": " + indent(strings.Join(c.blocks(n), "\n"), 2))
	default:
		if containers[n.DataAtom] {
			b.flush()
			b.children(n)
			b.flush()
		} else if c.containsBlock(n) && n.DataAtom != atom.A {
			b.children(n) // e.g. a <span> or custom element around blocks
		} else {
			b.para.WriteString(c.inline(n))
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
