package search

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ignoreTree exercises gitignore syntax: negation, anchoring, directory-only
// rules, "**", classes, braces, escapes and rules in nested files.
func ignoreTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".git/HEAD": "",
		".gitignore": strings.Join([]string{
			"# comment",
			"*.o",
			"!keep.o",
			"/anchored.txt",
			"dironly/",
			"**/deep/**/*.tmp",
			"logs/**",
			"doc/*.html",
			"[Bb]uild*/",
			"*.{bak,orig}",
			`\#literal`,
			"trailing.txt   ",
			"sub/nested-anchored.md",
		}, "\n") + "\n",
		"a.o": "", "keep.o": "", "x/a.o": "", "x/keep.o": "",
		"anchored.txt": "", "x/anchored.txt": "",
		"dironly/f.txt": "", "y/dironly/f.txt": "", "z/dironly": "",
		"deep/a.tmp": "", "p/deep/q/r.tmp": "", "p/deep/r.txt": "",
		"logs/a.log": "", "logs/sub/b.log": "",
		"doc/index.html": "", "doc/api/index.html": "",
		"Build1/out.txt": "", "build-2/out.txt": "", "rebuild/out.txt": "",
		"f.bak": "", "f.orig": "", "f.txt": "",
		"#literal": "", "trailing.txt": "",
		"sub/nested-anchored.md": "", "other/sub/nested-anchored.md": "",
		"sub/.gitignore": "*.md\n!readme.md\n/local-only\n",
		"sub/readme.md":  "", "sub/notes.md": "", "sub/local-only": "", "sub/deeper/local-only": "",
		"sub/deeper/x.md":         "",
		"n/.ignore":               "ignored-by-dot-ignore\n",
		"n/ignored-by-dot-ignore": "",
		"n/.rgignore":             "!rescued.o\n",
		"n/rescued.o":             "",
		".hidden/file":            "",
		".dotfile":                "",
		"vendor/.git/HEAD":        "", // a nested repository
		"vendor/lib.o":            "", // ignored by the outer *.o? not across the repository boundary
		"vendor/.gitignore":       "*.c\n",
		"vendor/lib.c":            "",
		"vendor/lib.h":            "",
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
	return root
}

func walkList(t *testing.T, w Walker, root string) []string {
	t.Helper()
	var out []string
	err := w.Walk(context.Background(), root, func(path string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(root, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWalkerMatchesRgFiles(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not installed")
	}
	root := ignoreTree(t)
	cases := []struct {
		name string
		w    Walker
		args []string
	}{
		{"default", Walker{}, nil},
		{"hidden", Walker{Hidden: true}, []string{"--hidden", "--glob=!.git"}}, // the walker always skips .git
		{"globs", Walker{Globs: []string{"*.o", "!x/**"}}, []string{"--glob=*.o", "--glob=!x/**"}},
		{"type", Walker{TypeGlobs: []string{"*.md"}}, []string{"--type-add=codatype:*.md", "--type=codatype"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--files", "--no-config", "--no-ignore-global", "--sort=path"}, c.args...)
			cmd := exec.Command(rg, append(args, root)...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("rg: %v", err)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				rel, _ := filepath.Rel(root, l)
				want = append(want, filepath.ToSlash(rel))
			}
			got := walkList(t, c.w, root)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("walker and rg --files differ\n--- rg\n%s\n--- walker\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

func TestWalkerSkipsIgnored(t *testing.T) {
	root := ignoreTree(t)
	got := "\n" + strings.Join(walkList(t, Walker{}, root), "\n") + "\n"
	for _, skipped := range []string{"a.o", "x/a.o", "anchored.txt", "dironly/f.txt", "y/dironly/f.txt", "p/deep/q/r.tmp",
		"logs/a.log", "doc/index.html", "Build1/out.txt", "build-2/out.txt", "f.bak", "#literal", "trailing.txt",
		"sub/nested-anchored.md", "sub/notes.md", "sub/local-only", "n/ignored-by-dot-ignore", ".hidden/file", ".dotfile", "vendor/lib.c"} {
		if strings.Contains(got, "\n"+skipped+"\n") {
			t.Errorf("%s listed", skipped)
		}
	}
	for _, kept := range []string{"keep.o", "x/keep.o", "x/anchored.txt", "z/dironly", "p/deep/r.txt", "doc/api/index.html",
		"rebuild/out.txt", "f.txt", "other/sub/nested-anchored.md", "sub/readme.md", "sub/deeper/local-only", "n/rescued.o",
		"vendor/lib.o", "vendor/lib.h"} {
		if !strings.Contains(got, "\n"+kept+"\n") {
			t.Errorf("%s missing", kept)
		}
	}
}

func TestWalkerDepthAndSkipDir(t *testing.T) {
	root := ignoreTree(t)
	for _, p := range walkList(t, Walker{MaxDepth: 1}, root) {
		if strings.Contains(p, "/") {
			t.Errorf("MaxDepth 1 listed %s", p)
		}
	}
	w := Walker{SkipDir: func(path string) bool { return filepath.Base(path) == "sub" }}
	for _, p := range walkList(t, w, root) {
		if strings.HasPrefix(p, "sub/") || strings.Contains(p, "/sub/") {
			t.Errorf("skipped directory listed: %s", p)
		}
	}
}
