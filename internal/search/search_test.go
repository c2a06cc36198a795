package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture builds a small repository exercising what the searchers must
// agree on: ignore files at several levels, hidden and binary files, long
// lines, CRLF, a byte order mark, Unicode, symlinks and files without a
// final newline.
func fixture(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		".git/info/exclude":        "excluded.txt\n",
		".gitignore":               "*.log\nbuild/\n/top-only.txt\n",
		".ignore":                  "ignored-by-dot-ignore.go\n",
		"excluded.txt":             "alpha excluded\n",
		"top-only.txt":             "alpha top\n",
		"app.log":                  "alpha in a log\n",
		"build/out.go":             "package build // alpha\n",
		"ignored-by-dot-ignore.go": "package x // alpha\n",
		".hidden/secret.go":        "package hidden // alpha\n",
		".env":                     "ALPHA=1\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"alpha\")\n\treturn\n}\n\n" +
			"func helper() int {\n\t// Alpha beta gamma\n\treturn 42\n}\n",
		"README.md": "# Alpha project\n\nSome alpha text.\nMore text.\nEven more.\nalpha again\n",
		"docs/guide.md": "line one\nline two alpha\nline three\nline four\nline five\nline six\n" +
			"line seven alpha\nline eight\nline nine\nline ten\nline eleven\nline twelve alpha\n",
		"docs/unicode.txt":     "héllo wörld\nHÉLLO WÖRLD\nnaïve café alpha\n日本語 alpha テキスト\n",
		"src/a/deep.go":        "package a\n\nfunc Start() {\n\t// start marker\n\tx := 1\n\t// end marker\n}\n",
		"src/a/.gitignore":     "*.gen.go\n!keep.gen.go\n",
		"src/a/x.gen.go":       "package a // alpha generated\n",
		"src/a/keep.gen.go":    "package a // alpha kept\n",
		"src/b/crlf.txt":       "first\r\nalpha crlf\r\nthird\r\n",
		"src/b/bom.txt":        "\uFEFFalpha with bom\nsecond\n",
		"src/b/noeol.txt":      "no newline alpha",
		"src/b/empty.txt":      "",
		"src/b/binary.dat":     "alpha\x00binary\n",
		"src/b/long.txt":       "alpha " + strings.Repeat("x", 700) + "\ncontext " + strings.Repeat("y", 600) + "\nalpha short\n",
		"src/b/many.txt":       strings.Repeat("alpha\nbeta\n", 20),
		"src/c/ml.txt":         "start\nmiddle\nend\nstart again\nend\nlone\n",
		"src/c/colon:name.txt": "alpha in a file with a colon\n",
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "main.go"), filepath.Join(root, "src", "link.go")); err != nil {
		t.Fatal(err)
	}
	return root
}

func builtin(t testing.TB, root string, o Options) (string, error) {
	t.Helper()
	var b strings.Builder
	err := Search(context.Background(), root, o, func(line []byte) bool {
		b.Write(line)
		b.WriteByte('\n')
		return true
	})
	return b.String(), err
}

// ripgrep runs rg with RgArgs; files-mode output is put in path order.
func ripgrep(t testing.TB, rg, root string, o Options) string {
	t.Helper()
	cmd := exec.Command(rg, RgArgs(root, o)...)
	cmd.Dir = root
	if info, err := os.Stat(root); err == nil && !info.IsDir() {
		cmd.Dir = filepath.Dir(root)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("rg %q: %v\n%s", RgArgs(root, o), err, stderr.String())
	}
	if o.Mode == FilesWithMatches {
		paths := strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00")
		if len(paths) == 1 && paths[0] == "" {
			return ""
		}
		sort.Strings(paths)
		return strings.Join(paths, "\n") + "\n"
	}
	return stdout.String()
}

func sortedLines(s string) string {
	if s == "" {
		return s
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

type searchCase struct {
	name string
	path string // relative to the fixture; "" for its root
	o    Options
}

func searchCases() []searchCase {
	content := func(p string) Options { return Options{Pattern: p, Mode: Content, LineNumbers: true, MaxColumns: 500} }
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	return []searchCase{
		{name: "files literal", o: Options{Pattern: "alpha"}},
		{name: "files regex", o: Options{Pattern: `al[p]ha\s`}},
		{name: "count literal", o: Options{Pattern: "alpha", Mode: Count}},
		{name: "count ignore case", o: Options{Pattern: "alpha", Mode: Count, IgnoreCase: true}},
		{name: "content literal", o: content("alpha")},
		{name: "content no line numbers", o: with(content("alpha"), func(o *Options) { o.LineNumbers = false })},
		{name: "content ignore case", o: with(content("ALPHA"), func(o *Options) { o.IgnoreCase = true })},
		{name: "content regex no literal", o: content(`^\s+[a-z]+\(?`)},
		{name: "content anchored", o: content(`^line (one|t\w+)$`)},
		{name: "content word boundary", o: content(`\breturn\b`)},
		{name: "content unicode", o: content(`wörld|café`)},
		{name: "content unicode fold", o: with(content(`héllo`), func(o *Options) { o.IgnoreCase = true })},
		{name: "content context", o: with(content("alpha"), func(o *Options) { o.Before, o.After = 2, 2 })},
		{name: "content after only", o: with(content("alpha"), func(o *Options) { o.After = 3 })},
		{name: "content before only", o: with(content("line"), func(o *Options) { o.Before = 1 })},
		{name: "content wide context", o: with(content("seven"), func(o *Options) { o.Before, o.After = 10, 10 })},
		{name: "content long lines", o: with(content("alpha|context"), func(o *Options) { o.Before = 1 })},
		{name: "content multiline", o: with(content(`start.*?end`), func(o *Options) { o.Multiline = true })},
		{name: "content multiline context", o: with(content(`start\n\w+`), func(o *Options) { o.Multiline, o.Before, o.After = true, 1, 1 })},
		{name: "count multiline", o: Options{Pattern: `start.*?end|lone`, Mode: Count, Multiline: true}},
		{name: "content empty matches", o: content(`x*`)},
		{name: "glob", o: with(content("alpha"), func(o *Options) { o.Globs = []string{"*.go"} })},
		{name: "glob negated", o: with(content("alpha"), func(o *Options) { o.Globs = []string{"!*.txt", "!*.md"} })},
		{name: "glob braces", o: with(content("alpha"), func(o *Options) { o.Globs = []string{"*.{md,txt}"} })},
		{name: "glob anchored", o: with(content("alpha"), func(o *Options) { o.Globs = []string{"src/**"} })},
		{name: "glob overrides gitignore", o: with(content("alpha"), func(o *Options) { o.Globs = []string{"*.log"} })},
		{name: "type go", o: Options{Pattern: "alpha", Type: "go"}},
		{name: "type md content", o: with(content("alpha"), func(o *Options) { o.Type = "md" })},
		{name: "subdirectory", path: "src", o: content("alpha")},
		{name: "single file", path: "docs/guide.md", o: with(content("alpha"), func(o *Options) { o.After = 1 })},
		{name: "explicit binary content", path: "src/b/binary.dat", o: content("alpha")},
		{name: "explicit binary count", path: "src/b/binary.dat", o: Options{Pattern: "alpha|binary", Mode: Count}},
		{name: "explicit symlink", path: "src/link.go", o: content("alpha")},
		{name: "no match", o: content("zzz-not-there")},
	}
}

func TestBuiltinMatchesRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	root := fixture(t)
	for _, c := range searchCases() {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(root, c.path)
			got, err := builtin(t, path, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if c.o.Mode == FilesWithMatches {
				got = sortedLines(got)
			}
			want := ripgrep(t, rg, path, c.o)
			if got != want {
				t.Errorf("built-in and rg differ\n--- rg\n%s--- built-in\n%s", want, got)
			}
		})
	}
}

func TestBuiltinExpectedOutput(t *testing.T) {
	// Independent of rg: what a user reads for the common cases.
	root := fixture(t)
	got, err := builtin(t, root, Options{Pattern: "alpha", Mode: Content, LineNumbers: true, Before: 1, After: 1, Globs: []string{"guide.md"}})
	if err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(root, "docs", "guide.md")
	want := g + "-1-line one\n" + g + ":2:line two alpha\n" + g + "-3-line three\n--\n" +
		g + "-6-line six\n" + g + ":7:line seven alpha\n" + g + "-8-line eight\n--\n" +
		g + "-11-line eleven\n" + g + ":12:line twelve alpha\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	files, err := builtin(t, root, Options{Pattern: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	for _, skipped := range []string{"excluded.txt", "top-only.txt", "app.log", "build/out.go", "ignored-by-dot-ignore.go",
		".hidden/secret.go", "x.gen.go", "binary.dat", "link.go"} {
		if strings.Contains(files, skipped) {
			t.Errorf("%s should be skipped:\n%s", skipped, files)
		}
	}
	for _, found := range []string{"main.go", "README.md", "keep.gen.go", "crlf.txt", "bom.txt", "noeol.txt", "colon:name.txt"} {
		if !strings.Contains(files, found) {
			t.Errorf("%s should be found:\n%s", found, files)
		}
	}
	lines := strings.Split(strings.TrimSpace(files), "\n")
	if !sort.StringsAreSorted(lines) {
		t.Errorf("files not in path order:\n%s", files)
	}
}

func TestChunkedSearchMatchesWholeFile(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		switch {
		case i%97 == 0:
			b.WriteString("needle here\n")
		case i%500 == 1:
			b.WriteString(strings.Repeat("long line ", 40) + "needle\n")
		default:
			b.WriteString("hay hay hay\n")
		}
	}
	b.WriteString("needle at the very end")
	path := filepath.Join(root, "big.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := []Options{
		{Pattern: "needle"},
		{Pattern: "needle", Mode: Count},
		{Pattern: "needle", Mode: Content, LineNumbers: true},
		{Pattern: "needle", Mode: Content, LineNumbers: true, Before: 3, After: 2},
		{Pattern: "ne+dle", Mode: Content, LineNumbers: true, Before: 200, After: 1},
	}
	for _, o := range opts {
		collect := func(chunk int) string {
			var out strings.Builder
			err := search(context.Background(), root, o, chunk, func(line []byte) bool {
				out.Write(line)
				out.WriteByte('\n')
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			return out.String()
		}
		whole := collect(defaultChunkSize)
		for _, chunk := range []int{64, 1000, 4096} {
			if got := collect(chunk); got != whole {
				t.Errorf("%+v with %d-byte chunks differs from the whole-file search:\n%s\nwant\n%s", o, chunk, got, whole)
			}
		}
		if whole == "" {
			t.Errorf("%+v found nothing", o)
		}
	}
}

func TestSearchStopsWhenEmitSaysSo(t *testing.T) {
	root := fixture(t)
	n := 0
	err := Search(context.Background(), root, Options{Pattern: "alpha", Mode: Content}, func([]byte) bool {
		n++
		return n < 3
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("emit called %d times after asking to stop at 3", n)
	}
}

func TestSearchCancelled(t *testing.T) {
	root := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Search(ctx, root, Options{Pattern: "alpha"}, func([]byte) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSearchErrors(t *testing.T) {
	root := fixture(t)
	cases := []struct {
		o    Options
		path string
		want string
	}{
		{o: Options{Pattern: "alpha("}, want: "missing closing )"},
		{o: Options{Pattern: `a\nb`}, want: "multiline"},
		{o: Options{Pattern: "a", Type: "nope"}, want: `unknown file type "nope"`},
		{o: Options{Pattern: "a", Globs: []string{"{a,b"}}, want: "invalid glob"},
		{o: Options{Pattern: "a"}, path: "missing", want: "no such file"},
	}
	for _, c := range cases {
		_, err := builtin(t, filepath.Join(root, c.path), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want it to mention %q", c.o, err, c.want)
		}
	}
	if _, err := builtin(t, root, Options{Pattern: `a\nb`, Multiline: true}); err != nil {
		t.Errorf("multiline newline pattern refused: %v", err)
	}
}

func TestRequiredLiteral(t *testing.T) {
	cases := []struct {
		pattern    string
		ignoreCase bool
		lit        string
		fold       bool
		exact      bool
	}{
		{"alpha", false, "alpha", false, true},
		{`func \w+Close\(\)`, false, "Close()", false, false},
		{`(foo)+bar`, false, "foo", false, false},
		{`a|b`, false, "", false, false},
		{"Error", true, "error", true, false},
		{"kubernetes", true, "ubernete", true, false}, // k and s fold beyond ASCII
		{`\(\)`, true, "()", false, false},
		{"x{2,}y", false, "x", false, false},
	}
	for _, c := range cases {
		m, err := compilePattern(c.pattern, c.ignoreCase, false)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.lit) != c.lit || m.fold != c.fold || m.exact != c.exact {
			t.Errorf("%q (i=%v): lit %q fold %v exact %v; want %q %v %v", c.pattern, c.ignoreCase, m.lit, m.fold, m.exact, c.lit, c.fold, c.exact)
		}
	}
}

func TestIndexFold(t *testing.T) {
	cases := []struct {
		hay, lit string
		want     int
	}{
		{"xxERRORyy", "error", 2},
		{"xxErRoR", "error", 2},
		{"err", "error", -1},
		{"aaaaB", "ab", 3},
		{"a.b", ".b", 1},
		{"", "a", -1},
	}
	for _, c := range cases {
		if got := indexFold([]byte(c.hay), []byte(c.lit)); got != c.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", c.hay, c.lit, got, c.want)
		}
	}
}

func TestBuiltinMatchesRipgrepOnGoSources(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	roots := []string{filepath.Join(runtime.GOROOT(), "src", "regexp"), filepath.Join(runtime.GOROOT(), "src", "bufio")}
	content := func(p string, f func(*Options)) Options {
		o := Options{Pattern: p, Mode: Content, LineNumbers: true, MaxColumns: 500}
		if f != nil {
			f(&o)
		}
		return o
	}
	opts := []Options{
		content("func", nil),
		content(`^func \(re \*Regexp\)`, nil),
		content("unicode", func(o *Options) { o.IgnoreCase = true }),
		content(`\berr\b`, func(o *Options) { o.Before, o.After = 2, 1 }),
		content(`[A-Z][a-z]+Error`, nil),
		content(`return nil, err`, func(o *Options) { o.After = 3 }),
		content(`^\}$`, func(o *Options) { o.Before = 1 }),
		content(`func \w+\([^)]*\) \{\n\s+return`, func(o *Options) { o.Multiline = true }),
		content(`if err != nil \{.*?\}`, func(o *Options) { o.Multiline = true; o.After = 1 }),
		{Pattern: `Reader`, Mode: Count},
		{Pattern: `x+`, Mode: Count, IgnoreCase: true},
		{Pattern: `if err != nil \{\n\s*return`, Mode: Count, Multiline: true},
		{Pattern: `Copyright`},
	}
	for _, root := range roots {
		for _, o := range opts {
			got, err := builtin(t, root, o)
			if err != nil {
				t.Fatal(err)
			}
			if o.Mode == FilesWithMatches {
				got = sortedLines(got)
			}
			if want := ripgrep(t, rg, root, o); got != want {
				t.Errorf("%s %+v: built-in and rg differ\n%s", root, o, firstDifference(want, got))
			}
		}
	}
}

// firstDifference shows the first line where two outputs part.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n rg:       " + wl + "\n built-in: " + gl
		}
	}
	return ""
}
