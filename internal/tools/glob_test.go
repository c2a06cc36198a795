package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// globTree builds a small repository whose files have distinct
// modification times: later entries in the list are newer.
func globTree(t *testing.T) *Env {
	t.Helper()
	env := ftEnv(t)
	files := []string{
		".git/HEAD", ".git/objects/ab/cdef.go",
		".gitignore", "sub/.gitignore",
		"a.go", "b.go", "sub/c.go", "sub/deep/d.go", "sub/deep/d_test.go",
		"build/gen.go", "x.log", "sub/keep.log",
		".hidden/h.go", ".github/workflows/ci.yml", "README.md",
	}
	content := map[string]string{
		".gitignore":     "*.log\nbuild/\n",
		"sub/.gitignore": "!keep.log\n",
	}
	base := time.Now().Add(-time.Hour)
	for i, f := range files {
		path := ftFile(t, env, f, content[f])
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func globPaths(t *testing.T, env *Env, in map[string]any) []string {
	t.Helper()
	text := ftMustOK(t, ftRun(t, NewGlob(), env, in))
	if text == "No files found" {
		return nil
	}
	var rel []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l == "" || strings.HasPrefix(l, "(") {
			break
		}
		r, err := filepath.Rel(env.Cwd(), l)
		if err != nil || !filepath.IsAbs(l) {
			t.Fatalf("result %q is not an absolute path in the tree", l)
		}
		rel = append(rel, filepath.ToSlash(r))
	}
	return rel
}

func TestGlobNewestFirstSkippingIgnored(t *testing.T) {
	env := globTree(t)
	got := strings.Join(globPaths(t, env, map[string]any{"pattern": "**/*.go"}), " ")
	want := ".hidden/h.go sub/deep/d_test.go sub/deep/d.go sub/c.go b.go a.go"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, "b.go a.go"},
		{map[string]any{"pattern": "*.go", "path": "sub"}, "sub/c.go"},
		{map[string]any{"pattern": "sub/**/*_test.go"}, "sub/deep/d_test.go"},
		{map[string]any{"pattern": "sub/*/d.go"}, "sub/deep/d.go"},
		{map[string]any{"pattern": "**/*.{yml,log}"}, ".github/workflows/ci.yml sub/keep.log"},
		{map[string]any{"pattern": filepath.Join(env.Cwd(), "sub", "**", "*.go")}, "sub/deep/d_test.go sub/deep/d.go sub/c.go"},
		{map[string]any{"pattern": "README.md"}, "README.md"},
		{map[string]any{"pattern": "**/*.rs"}, ""},
		{map[string]any{"pattern": "missing-dir/**/*.go"}, ""},
	}
	for _, c := range cases {
		if got := strings.Join(globPaths(t, env, c.in), " "); got != c.want {
			t.Errorf("%v: got %q, want %q", c.in, got, c.want)
		}
	}
	if text := ftMustOK(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": "**/*.rs"})); text != "No files found" {
		t.Errorf("no match: %q", text)
	}
}

func TestGlobErrors(t *testing.T) {
	env := globTree(t)
	ftMustFail(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": "[abc"}), "invalid pattern")
	ftMustFail(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": ""}), "empty")
	ftMustFail(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": "*", "path": "a.go"}), "is a file")
	ftMustFail(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": "*", "path": "nowhere"}), "does not exist")
}

func TestGlobCapsResults(t *testing.T) {
	env := ftEnv(t)
	for i := range 250 {
		ftFile(t, env, fmt.Sprintf("d%d/f%03d.txt", i%7, i), "")
	}
	text := ftMustOK(t, ftRun(t, NewGlob(), env, map[string]any{"pattern": "**/*.txt"}))
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 202 || !strings.Contains(text, "200 most recently modified of 250") {
		t.Errorf("%d lines; tail %q", len(lines), lines[len(lines)-1])
	}
}

func TestGlobSymlinks(t *testing.T) {
	env := ftEnv(t)
	target := ftFile(t, env, "real/file.go", "")
	if err := os.Symlink(target, filepath.Join(env.Cwd(), "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(env.Cwd(), "real"), filepath.Join(env.Cwd(), "dirlink")); err != nil {
		t.Fatal(err)
	}
	got := globPaths(t, env, map[string]any{"pattern": "**/*.go"})
	if strings.Join(got, " ") != "link.go real/file.go" && strings.Join(got, " ") != "real/file.go link.go" {
		t.Errorf("got %v: want the file and the link to it, not the linked directory", got)
	}
}

func BenchmarkGlobGoFiles(b *testing.B) {
	env := NewEnv(filepath.Join(runtime.GOROOT(), "src"))
	glob := NewGlob()
	for b.Loop() {
		r := ftRun(b, glob, env, map[string]any{"pattern": "**/*.go"})
		if r.IsError || !strings.Contains(r.Text(), "most recently modified") {
			b.Fatal(r.Text()[:200])
		}
	}
}
