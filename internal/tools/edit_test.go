package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ftReadFile reads path with the Read tool (so edits are allowed) and
// fails the test on an error.
func ftReadFile(t testing.TB, env *Env, path string) {
	t.Helper()
	ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
}

func ftContent(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEditReplacesOneOccurrence(t *testing.T) {
	env := ftEnv(t)
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	path := ftFile(t, env, "f.txt", b.String())
	ftReadFile(t, env, path)
	r := ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "line 10\n", "new_string": "line ten\nline ten and a half\n"})
	text := ftMustOK(t, r)
	want := "Edited " + path + " (1 replacement):\n" + numbered(7, "line 7", "line 8", "line 9", "line ten", "line ten and a half", "line 11", "line 12", "line 13")
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	if got := ftContent(t, path); !strings.Contains(got, "line 9\nline ten\nline ten and a half\nline 11\n") {
		t.Errorf("file content %q", got)
	}
	d := fileDiffOf(t, r)
	wantDiff := "--- " + path + "\n+++ " + path + "\n@@ -7,7 +7,8 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n+line ten and a half\n line 11\n line 12\n line 13\n"
	if d.Diff != wantDiff || d.Added != 2 || d.Removed != 1 || d.Created {
		t.Errorf("diff %+v\nwant\n%s", d, wantDiff)
	}
	// The edit is recorded: the next one needs no Read.
	ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "line 1\n", "new_string": "first\n"}))
}

func TestEditErrorsTellHowToRecover(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "code.go", "package x\n\nfunc f() {\n\treturn compute(a, b)\n}\n\nfunc g() {\n\treturn compute(a, b)\n}\n")
	edit := func(old, new string, all bool) Result {
		return ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": old, "new_string": new, "replace_all": all})
	}
	ftMustFail(t, edit("package x", "package y", false), "has not been read")
	ftReadFile(t, env, path)

	ftMustFail(t, edit("same", "same", false), "identical")
	ftMustFail(t, edit("", "new", false), "old_string is empty", "Write")
	msg := ftMustFail(t, edit("\treturn compute(a, b)\n", "\treturn 0\n", false), "2 times", "lines 4, 8", "replace_all")
	_ = msg
	// Wrong indentation: the hint points at the line.
	ftMustFail(t, edit("    return compute(a, b)", "x", false), "not found", "Line 4", "indentation")
	// A near miss: the closest line is named.
	ftMustFail(t, edit("func ff() {", "x", false), "not found", "line 3", `"func f() {"`)
	// Read's prefixes pasted in.
	ftMustFail(t, edit("     1\tpackage x", "package y", false), "line-number prefixes")
	// Nothing similar at all: no misleading hint.
	msg = ftMustFail(t, edit("zzzz qqqq", "x", false), "not found")
	if strings.Contains(msg, "closest") {
		t.Errorf("hint for unrelated text: %s", msg)
	}
	ftMustFail(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": "nope.go", "old_string": "a", "new_string": "b"}), "does not exist")
	ftMustFail(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": env.Cwd(), "old_string": "a", "new_string": "b"}), "directory")

	// Changed on disk since the read.
	if err := os.WriteFile(path, []byte("package x // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	os.Chtimes(path, future, future)
	ftMustFail(t, edit("package x", "package y", false), "modified since", "Read it again")
	if got := ftContent(t, path); got != "package x // changed\n" {
		t.Errorf("a refused edit changed the file: %q", got)
	}
}

func TestEditReplaceAll(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "r.txt", "foo bar\nfoo baz\nqux foo\n")
	ftReadFile(t, env, path)
	text := ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "foo", "new_string": "renamed", "replace_all": true}))
	if !strings.Contains(text, "3 replacements") {
		t.Errorf("result %q", text)
	}
	if got := ftContent(t, path); got != "renamed bar\nrenamed baz\nqux renamed\n" {
		t.Errorf("content %q", got)
	}
}

func TestEditPreservesCRLFAndMode(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "win.txt", "first\r\nsecond\r\nthird\r\n")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ftReadFile(t, env, path)
	ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "first\nsecond\n", "new_string": "one\ntwo\nthree\n"}))
	if got := ftContent(t, path); got != "one\r\ntwo\r\nthree\r\nthird\r\n" {
		t.Errorf("content %q", got)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v not kept", info.Mode().Perm())
	}
}

func TestEditUnicode(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "u.txt", "naïve café\n日本語のテキスト\n")
	ftReadFile(t, env, path)
	text := ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "日本語", "new_string": "中文"}))
	if !strings.Contains(text, "     2\t中文のテキスト") {
		t.Errorf("snippet %q", text)
	}
	if got := ftContent(t, path); got != "naïve café\n中文のテキスト\n" {
		t.Errorf("content %q", got)
	}
}

func TestEditCreatesFileWithEmptyOldString(t *testing.T) {
	env := ftEnv(t)
	r := ftRun(t, NewEdit(), env, map[string]any{"file_path": "sub/new.txt", "old_string": "", "new_string": "hello\n"})
	ftMustOK(t, r)
	if got := ftContent(t, filepath.Join(env.Cwd(), "sub", "new.txt")); got != "hello\n" {
		t.Errorf("content %q", got)
	}
	if d := fileDiffOf(t, r); !d.Created || d.Added != 1 {
		t.Errorf("diff %+v", d)
	}
	// An empty existing file may be filled the same way.
	empty := ftFile(t, env, "empty.txt", "")
	ftReadFile(t, env, empty)
	ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": empty, "old_string": "", "new_string": "filled\n"}))
	if got := ftContent(t, empty); got != "filled\n" {
		t.Errorf("content %q", got)
	}
}

func TestEditLongChangeSnippetIsBounded(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "f.txt", "a\nb\nc\n")
	ftReadFile(t, env, path)
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "new %d\n", i)
	}
	text := ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "b\n", "new_string": b.String()}))
	if strings.Count(text, "\n") > editSnippetLines+3 || !strings.Contains(text, "lines not shown") {
		t.Errorf("snippet for a long change:\n%s", text)
	}
}

// makeBigFile writes a file of about 10 MB, one numbered line after another.
func makeBigFile(tb testing.TB, env *Env) (string, int) {
	tb.Helper()
	buf := make([]byte, 0, 10<<20+100)
	n := 0
	for len(buf) < 10<<20 {
		buf = append(buf, "line "...)
		buf = appendPadded(buf, n, 7)
		buf = append(buf, ": the quick brown fox jumps over the lazy dog\n"...)
		n++
	}
	return ftFile(tb, env, "big.txt", string(buf)), n
}

// appendPadded appends n in decimal, zero-padded to width digits.
func appendPadded(buf []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for range width - len(s) {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

func TestEditLargeFile(t *testing.T) {
	env := ftEnv(t)
	path, n := makeBigFile(t, env)
	ftReadFile(t, env, path)
	old := fmt.Sprintf("line %07d: the quick", n/2)
	start := time.Now()
	r := ftRun(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": old, "new_string": "changed line"})
	ftMustOK(t, r)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("editing a 10 MB file took %v", d)
	}
	if d := fileDiffOf(t, r); d.Added != 1 || d.Removed != 1 || !strings.Contains(d.Diff, fmt.Sprintf("@@ -%d,7 +%d,7 @@", n/2+1-3, n/2+1-3)) {
		t.Errorf("diff %+v", d)
	}
}

func BenchmarkEditOneLine10MB(b *testing.B) {
	env := ftEnv(b)
	path, n := makeBigFile(b, env)
	ftReadFile(b, env, path)
	edit := NewEdit()
	i := 0
	var times []time.Duration
	for b.Loop() {
		line := (i * 7919) % n
		i++
		raw, _ := json.Marshal(map[string]any{
			"file_path":  path,
			"old_string": fmt.Sprintf("line %07d: the quick", line),
			"new_string": fmt.Sprintf("line %07d: THE QUICK", line),
		})
		began := time.Now()
		if r := edit.Run(context.Background(), Call{Input: raw, Env: env}); r.IsError {
			b.Fatal(r.Text())
		}
		times = append(times, time.Since(began))
	}
	// The target is on the median: report it beside the mean.
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}
