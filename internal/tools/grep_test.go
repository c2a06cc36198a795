package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// grepBackends are the Grep tools to test: the built-in searcher always,
// ripgrep when it is installed.
func grepBackends(t testing.TB) map[string]Tool {
	t.Helper()
	b := map[string]Tool{"builtin": grepTool{rg: "-"}}
	if rg, err := exec.LookPath("rg"); err == nil {
		b["rg"] = grepTool{rg: rg}
	}
	return b
}

// grepTree builds a repository with files of increasing modification
// time, in list order.
func grepTree(t testing.TB) *Env {
	t.Helper()
	env := ftEnv(t)
	files := []struct{ name, content string }{
		{".git/HEAD", "ref: refs/heads/main\n"},
		{".gitignore", "ignored/\n*.log\n"},
		{"main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"},
		{"util.go", "package main\n\n// Hello greets.\nfunc Hello() string {\n\treturn \"hello\"\n}\n"},
		{"util_test.go", "package main\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif Hello() != \"hello\" {\n\t\tt.Fatal(\"no\")\n\t}\n}\n"},
		{"docs/guide.md", "# Guide\n\nSay hello.\n\nThen say HELLO again.\n"},
		{"web/app.ts", "export const greet = () => 'hello';\n"},
		{"web/app.js", "const greet = () => 'hello';\ninterface{}\n"},
		{"ignored/skip.go", "package ignored // hello\n"},
		{"debug.log", "hello from the log\n"},
		{".config/settings.json", "{\"hello\": true}\n"},
		{"data.bin", "hello\x00\x01binary"},
	}
	base := time.Now().Add(-time.Hour)
	for i, f := range files {
		path := ftFile(t, env, f.name, f.content)
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestGrepBackendsAgree(t *testing.T) {
	backends := grepBackends(t)
	if len(backends) < 2 {
		t.Skip("rg not installed")
	}
	env := grepTree(t)
	inputs := []map[string]any{
		{"pattern": "hello"},
		{"pattern": "hello", "-i": true},
		{"pattern": "hello", "output_mode": "content"},
		{"pattern": "hello", "output_mode": "content", "-n": false},
		{"pattern": "hello", "output_mode": "content", "-i": true, "-C": 1},
		{"pattern": "func", "output_mode": "content", "-A": 2, "-B": 0, "-C": 5},
		{"pattern": "hello", "output_mode": "count"},
		{"pattern": "hello", "output_mode": "count", "-i": true, "type": "md"},
		{"pattern": "hello", "glob": "*.go !*_test.go", "output_mode": "content"},
		{"pattern": "greet", "glob": "*.{ts,js}"},
		{"pattern": "hello", "glob": "*.log"},
		{"pattern": "hello", "type": "js"},
		{"pattern": `interface\{\}`, "output_mode": "content"},
		{"pattern": `func \w+\(\) string \{\n\treturn`, "multiline": true, "output_mode": "content"},
		{"pattern": "hello", "path": "docs", "output_mode": "content"},
		{"pattern": "hello", "path": "util.go", "output_mode": "content"},
		{"pattern": "hello", "output_mode": "content", "head_limit": 3, "offset": 2},
		{"pattern": "hello", "head_limit": 2, "offset": 1},
		{"pattern": "nothing-matches-this"},
		{"pattern": "hello", "path": "data.bin", "output_mode": "content"},
	}
	for _, in := range inputs {
		var results []string
		for _, name := range []string{"builtin", "rg"} {
			r := ftRun(t, backends[name], env, in)
			results = append(results, fmt.Sprintf("error=%v\n%s", r.IsError, r.Text()))
		}
		if results[0] != results[1] {
			t.Errorf("%v:\n--- built-in\n%s\n--- rg\n%s", in, results[0], results[1])
		}
	}
}

func TestGrepOutputModes(t *testing.T) {
	for name, grep := range grepBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := grepTree(t)
			dir := env.Cwd()
			p := func(rel string) string { return filepath.Join(dir, rel) }

			got := ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "hello"}))
			// Newest first; ignored, hidden and binary files skipped.
			want := "Found 6 files\n" + p("web/app.js") + "\n" + p("web/app.ts") + "\n" + p("docs/guide.md") + "\n" + p("util_test.go") + "\n" + p("util.go") + "\n" + p("main.go") + "\n"
			if got != want {
				t.Errorf("files_with_matches:\n%s\nwant\n%s", got, want)
			}

			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "hello", "output_mode": "content", "path": "util.go"}))
			if got != p("util.go")+":5:\treturn \"hello\"\n" {
				t.Errorf("content: %q", got)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "hello", "-i": true, "output_mode": "content", "-n": false, "path": "docs"}))
			if got != p("docs/guide.md")+":Say hello.\n"+p("docs/guide.md")+":Then say HELLO again.\n" {
				t.Errorf("content without numbers: %q", got)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "Hello", "output_mode": "content", "-B": 1, "path": "util.go"}))
			want = p("util.go") + "-2-\n" + p("util.go") + ":3:// Hello greets.\n" + p("util.go") + ":4:func Hello() string {\n"
			if got != want {
				t.Errorf("context:\n%s\nwant\n%s", got, want)
			}

			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "hello", "-i": true, "output_mode": "count"}))
			want = p("docs/guide.md") + ":2\n" + p("main.go") + ":1\n" + p("util.go") + ":3\n" + p("util_test.go") + ":2\n" +
				p("web/app.js") + ":1\n" + p("web/app.ts") + ":1\n\nFound 10 matching lines across 6 files.\n"
			if got != want {
				t.Errorf("count:\n%s\nwant\n%s", got, want)
			}

			if got := ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "absent"})); got != "No matches found" {
				t.Errorf("no match: %q", got)
			}
		})
	}
}

func TestGrepPaging(t *testing.T) {
	for name, grep := range grepBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := ftEnv(t)
			var b strings.Builder
			for i := 1; i <= 50; i++ {
				fmt.Fprintf(&b, "match %d\n", i)
			}
			path := ftFile(t, env, "many.txt", b.String())
			got := ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "match", "output_mode": "content", "head_limit": 3, "offset": 10}))
			want := path + ":11:match 11\n" + path + ":12:match 12\n" + path + ":13:match 13\n\n(Results truncated: showing 3 from offset 10. Use offset=13 to see more, or narrow the search.)\n"
			if got != want {
				t.Errorf("content page:\n%s\nwant\n%s", got, want)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "match", "output_mode": "content", "offset": 48}))
			if got != path+":49:match 49\n"+path+":50:match 50\n" {
				t.Errorf("last page: %q", got)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "match", "output_mode": "content", "offset": 60}))
			if !strings.Contains(got, "No matches found at offset 60") {
				t.Errorf("past the end: %q", got)
			}

			for i := range 5 {
				ftFile(t, env, fmt.Sprintf("f%d.txt", i), "match\n")
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "match", "head_limit": 2}))
			if !strings.HasPrefix(got, "Found 6 files\n") || strings.Count(got, env.Cwd()) != 2 || !strings.Contains(got, "offset=2") {
				t.Errorf("files page:\n%s", got)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "match", "output_mode": "count", "head_limit": 1, "offset": 5}))
			if !strings.HasPrefix(got, path+":50\n") || !strings.Contains(got, "Found 55 matching lines across 6 files") {
				t.Errorf("count page:\n%s", got)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	for name, grep := range grepBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := grepTree(t)
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "unclosed("}), "regex parse error")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "a\\nb"}), "multiline")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "type": "klingon"}), `unknown file type "klingon"`, "go, ")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "output_mode": "lines"}), "output_mode")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "path": "missing/dir"}), "does not exist")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "-A": -1}), "negative")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": ""}), "empty")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "glob": "{a,b"}), "glob")
			ftMustFail(t, ftRun(t, grep, env, map[string]any{"pattern": "x", "-z": true}), `unknown parameter "-z"`)
		})
	}
}

func TestGrepLargeFile(t *testing.T) {
	env := ftEnv(t)
	buf := make([]byte, 0, 200_000*26)
	for i := range 200_000 {
		buf = append(buf, "record "...)
		buf = appendPadded(buf, i, 6)
		buf = append(buf, " value "...)
		buf = strconv.AppendInt(buf, int64(i%1000), 10)
		buf = append(buf, '\n')
	}
	path := ftFile(t, env, "big.txt", string(buf))
	for name, grep := range grepBackends(t) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			got := ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": `record 1234\d\d value`, "output_mode": "content", "head_limit": 2}))
			if !strings.HasPrefix(got, path+":123401:record 123400 value 400\n"+path+":123402:record 123401 value 401\n") {
				t.Errorf("got %q", got)
			}
			got = ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "value 7$", "output_mode": "count"}))
			if !strings.HasPrefix(got, path+":200\n") {
				t.Errorf("count %q", got)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("searching 200k lines took %v", d)
			}
		})
	}
}

func TestSplitGlobs(t *testing.T) {
	cases := map[string]string{
		"*.go":               "*.go",
		"*.go *.md":          "*.go|*.md",
		"*.ts,*.tsx":         "*.ts|*.tsx",
		"*.{ts,tsx} !*.d.ts": "*.{ts,tsx}|!*.d.ts",
		"":                   "",
	}
	for in, want := range cases {
		if got := strings.Join(splitGlobs(in), "|"); got != want {
			t.Errorf("splitGlobs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFileToolsContract(t *testing.T) {
	reg := NewRegistry(FileTools()...)
	if got := strings.Join(reg.Names(), ","); got != "Edit,Glob,Grep,Read,Write" {
		t.Errorf("names %s", got)
	}
	for _, tool := range FileTools() {
		if len(strings.Split(strings.TrimSpace(tool.Description()), ". ")) < 3 {
			t.Errorf("%s: description too short", tool.Name())
		}
	}
	for _, want := range []struct{ tool, text string }{
		{"Read", "not `cat`"}, {"Edit", "not `sed`"}, {"Glob", "not `find`"}, {"Grep", "Never run `grep`"},
	} {
		tool, _ := reg.Get(want.tool)
		if !strings.Contains(tool.Description(), want.text) {
			t.Errorf("%s description lacks %q", want.tool, want.text)
		}
	}
	readOnly := map[string]bool{"Read": true, "Glob": true, "Grep": true}
	for _, tool := range FileTools() {
		if tool.ReadOnly() != readOnly[tool.Name()] || tool.ConcurrencySafe(nil) != readOnly[tool.Name()] {
			t.Errorf("%s: ReadOnly %v ConcurrencySafe %v", tool.Name(), tool.ReadOnly(), tool.ConcurrencySafe(nil))
		}
	}
	schema := string(NewGrep().InputSchema())
	for _, field := range []string{`"pattern"`, `"-i"`, `"-n"`, `"-A"`, `"-B"`, `"-C"`, `"output_mode"`, `"head_limit"`, `"offset"`, `"multiline"`, `"glob"`, `"type"`, `"path"`} {
		if !strings.Contains(schema, field) {
			t.Errorf("Grep schema lacks %s", field)
		}
	}
	if s := string(NewRead().InputSchema()); !strings.Contains(s, `"required":["file_path"]`) {
		t.Errorf("Read schema %s", s)
	}
	if s := string(NewEdit().InputSchema()); !strings.Contains(s, `"required":["file_path","old_string","new_string"]`) {
		t.Errorf("Edit schema %s", s)
	}
}

const (
	grepBenchLiteral = "ErrUnexpectedEOF"
	grepBenchRegex   = `func \(\w+ \*?\w+\) Close\(\)`
)

func benchGrep(b *testing.B, grep Tool, pattern string) {
	env := NewEnv(filepath.Join(runtime.GOROOT(), "src"))
	in := map[string]any{"pattern": pattern, "output_mode": "content", "head_limit": 100000}
	for b.Loop() {
		r := ftRun(b, grep, env, in)
		if r.IsError || !strings.Contains(r.Text(), ":") {
			b.Fatal(r.Text())
		}
	}
}

func rgForBench(b *testing.B) Tool {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not installed")
	}
	return grepTool{rg: rg}
}

func BenchmarkGrepBuiltinLiteral(b *testing.B) { benchGrep(b, grepTool{rg: "-"}, grepBenchLiteral) }
func BenchmarkGrepBuiltinRegex(b *testing.B)   { benchGrep(b, grepTool{rg: "-"}, grepBenchRegex) }
func BenchmarkGrepRgLiteral(b *testing.B)      { benchGrep(b, rgForBench(b), grepBenchLiteral) }
func BenchmarkGrepRgRegex(b *testing.B)        { benchGrep(b, rgForBench(b), grepBenchRegex) }
