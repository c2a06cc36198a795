package htmlmd

import (
	"net/url"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func convert(t *testing.T, src string) string {
	t.Helper()
	base, _ := url.Parse("https://example.com/docs/page.html")
	md, err := String(src, base)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name, html, want string
	}{
		{"headings and paragraphs",
			"<h1>Title</h1><p>First   paragraph\n with  spaces.</p><h3>Sub <em>head</em></h3><p>Second.</p>",
			"# Title\n\nFirst paragraph with spaces.\n\n### Sub *head*\n\nSecond."},
		{"links resolve against the base",
			`<p>See <a href="/api">the API</a>, <a href="other.html">other</a> and <a href="https://go.dev/">Go</a>.</p>`,
			"See [the API](https://example.com/api), [other](https://example.com/docs/other.html) and [Go](https://go.dev/)."},
		{"anchors and script links keep only their text",
			`<p><a href="#top">Top</a> <a href="javascript:void(0)">Click</a> <a>bare</a></p>`,
			"Top Click bare"},
		{"emphasis keeps spaces outside the markers",
			"<p>a<em> b </em>c <strong>bold</strong> <b><i>both</i></b> <del>gone</del></p>",
			"a *b* c **bold** ***both*** ~~gone~~"},
		{"inline code with backticks",
			"<p>Run <code>go test</code> or <code>a`b</code>.</p>",
			"Run `go test` or ``a`b``."},
		{"pre becomes a fenced block with its language",
			"<pre><code class=\"language-go\">func main() {\n\tfmt.Println(\"&lt;hi&gt;\")\n}\n</code></pre>",
			"```go\nfunc main() {\n\tfmt.Println(\"<hi>\")\n}\n```"},
		{"fence longer than backticks inside",
			"<pre>```\nx\n```</pre>",
			"````\n```\nx\n```\n````"},
		{"unordered and nested lists",
			"<ul><li>one</li><li>two<ul><li>two.a</li><li>two.b</li></ul></li><li><p>three</p></li></ul>",
			"- one\n- two\n  - two.a\n  - two.b\n- three"},
		{"ordered list with start",
			`<ol start="3"><li>c</li><li>d<pre>code</pre></li></ol>`,
			"3. c\n4. d\n   ```\n   code\n   ```"},
		{"blockquote",
			"<blockquote><p>quoted</p><p>more</p></blockquote>",
			"> quoted\n>\n> more"},
		{"table with header",
			"<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a|b</td><td><b>1</b></td></tr><tr><td>c</td></tr></tbody></table>",
			"| Name | Value |\n| --- | --- |\n| a\\|b | **1** |\n| c |  |"},
		{"layout table is read as blocks",
			"<table><tr><td><p>only</p><p>column</p></td></tr></table>",
			"only\n\ncolumn"},
		{"noise is dropped",
			`<nav><a href="/">Home</a></nav><script>alert(1)</script><style>p{}</style><p>Body</p><div hidden>secret</div><div style="display: none">x</div><footer>(c)</footer><!-- comment -->`,
			"Body"},
		{"images",
			`<p><img src="/logo.png" alt="Logo"> <img src="data:image/png;base64,AAAA" alt="inline"></p>`,
			"![Logo](https://example.com/logo.png) inline"},
		{"line breaks and rules",
			"<p>line one<br>line two</p><hr><p>after</p>",
			"line one\nline two\n\n---\n\nafter"},
		{"a link around blocks is flattened",
			`<a href="/card"><div><h3>Card title</h3><p>Card text</p></div></a>`,
			"[Card title Card text](https://example.com/card)"},
		{"span around blocks keeps the blocks",
			"<span><p>one</p><p>two</p></span>",
			"one\n\ntwo"},
		{"entities and non-breaking spaces",
			"<p>a&nbsp;&amp;&nbsp;b &lt;tag&gt;</p>",
			"a & b <tag>"},
		{"definition list",
			"<dl><dt>Term</dt><dd>Meaning</dd></dl>",
			"Term\n\n: Meaning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := convert(t, tt.html); got != tt.want {
				t.Errorf("got:\n%s\n\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestConvertPicksMainContent(t *testing.T) {
	page := `<!doctype html><html><head><title>  The  Page </title><style>body{}</style></head>
<body><header><a href="/">Site</a><nav><a href="/a">A</a></nav></header>
<main><h1>Article</h1><p>Text of the article.</p></main>
<aside>Related links</aside><footer>Copyright</footer></body></html>`
	base, _ := url.Parse("https://example.com/")
	p, err := Convert(strings.NewReader(page), base)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "The Page" {
		t.Errorf("title = %q", p.Title)
	}
	if want := "# Article\n\nText of the article."; p.Markdown != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", p.Markdown, want)
	}
}

func TestConvertSingleArticle(t *testing.T) {
	md := convert(t, `<body><div class="menu">Menu</div><article><p>Story</p></article></body>`)
	if md != "Story" {
		t.Errorf("got %q, want the article only", md)
	}
}

func TestConvertWithoutBaseKeepsRelativeLinks(t *testing.T) {
	md, err := String(`<a href="x/y.html">y</a>`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if md != "[y](x/y.html)" {
		t.Errorf("got %q", md)
	}
}

func TestConvertSurvivesDeepAndBrokenMarkup(t *testing.T) {
	deep := strings.Repeat("<div><span>", 200) + "deep text" + strings.Repeat("</span></div>", 200)
	if md := convert(t, deep); md != "deep text" {
		t.Errorf("deep nesting: got %q", md)
	}
	if md := convert(t, "<p>unclosed <b>bold <i>both<p>next"); md != "unclosed **bold *both***\n\n***next***" {
		t.Errorf("broken markup: got %q", md)
	}
}

func TestConvertTooDeepFallsBackToText(t *testing.T) {
	deep := "<html><head><title>Deep</title><style>x{}</style></head><body><p>intro</p>" +
		strings.Repeat("<div>", 1000) + "inner <b>text</b><script>no()</script><embed src=x> after" +
		strings.Repeat("</div>", 1000) + "</body></html>"
	p, err := Convert(strings.NewReader(deep), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Deep" || p.Markdown != "intro\n\ninner text after" {
		t.Errorf("got title %q, markdown %q", p.Title, p.Markdown)
	}
}
