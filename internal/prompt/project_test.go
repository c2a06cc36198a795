package prompt

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/tools"
)

func TestRulesAtStartAndOnFirstTouch(t *testing.T) {
	home := tree(t, t.TempDir(), map[string]string{
		".coda/rules/personal.md": "PERSONAL-RULE",
	})
	root := tree(t, t.TempDir(), map[string]string{
		".git/HEAD":             "x",
		".coda/rules/always.md": "---\ndescription: everywhere\n---\nALWAYS-RULE",
		".coda/rules/go.md":     "---\npaths:\n  - \"**/*.go\"\n  - 'cmd/**'\n---\nGO-RULE\n@../../docs/go-style.md",
		".coda/rules/web/ts.md": "---\npaths: [web/**/*.ts, \"web/**/*.tsx\"]\n---\nTS-RULE",
		".coda/rules/single.md": "---\npaths: docs/*.md\n---\nDOCS-RULE",
		"docs/go-style.md":      "GO-STYLE",
		"main.go":               "package main",
		"web/src/app.ts":        "x",
		"README.md":             "x",
		".coda/rules/notes.txt": "NOT-A-RULE",
		".coda/rules/broken.md": "---\npaths: [x\nno end",
	})
	p := LoadProject(home, root)
	start := p.Instructions()
	order(t, start, "PERSONAL-RULE", "ALWAYS-RULE")
	for _, absent := range []string{"GO-RULE", "TS-RULE", "DOCS-RULE", "NOT-A-RULE", "description: everywhere"} {
		if strings.Contains(start, absent) {
			t.Errorf("%s in the start instructions", absent)
		}
	}
	if !strings.Contains(start, "no end") {
		t.Error("a rule with unterminated frontmatter should load as plain text at start")
	}

	if got := p.Touch([]string{filepath.Join(root, "README.md")}); got != "" {
		t.Errorf("README.md matched a rule: %s", got)
	}
	got := p.Touch([]string{filepath.Join(root, "main.go"), filepath.Join(root, "web", "src", "app.ts")})
	order(t, got, "GO-RULE", "GO-STYLE", "TS-RULE")
	if !strings.Contains(got, "rule for files matching **/*.go, cmd/**") {
		t.Errorf("rule heading lacks its globs:\n%s", got)
	}
	if again := p.Touch([]string{filepath.Join(root, "other.go"), filepath.Join(root, "main.go")}); again != "" {
		t.Errorf("a rule loaded twice: %s", again)
	}
	if got := p.Touch([]string{filepath.Join(root, "docs", "x.md")}); !strings.Contains(got, "DOCS-RULE") {
		t.Errorf("scalar paths: not applied: %q", got)
	}
	order(t, p.Loaded(), "PERSONAL-RULE", "ALWAYS-RULE", "GO-RULE", "TS-RULE", "DOCS-RULE")
}

func TestNestedInstructionsOnFirstTouch(t *testing.T) {
	root := tree(t, t.TempDir(), map[string]string{
		".git/HEAD":              "x",
		"AGENTS.md":              "ROOT",
		"pkg/AGENTS.md":          "PKG",
		"pkg/deep/CLAUDE.md":     "DEEP",
		"pkg/deep/er/x.go":       "x",
		"pkg/y.go":               "y",
		"lib/AGENTS.override.md": "LIB",
	})
	p := LoadProject("", root)
	if strings.Contains(p.Instructions(), "PKG") {
		t.Fatal("a subfolder's AGENTS.md loaded at start")
	}
	if got := p.Touch([]string{filepath.Join(root, "main.go")}); got != "" {
		t.Errorf("a file in the working directory loaded %q", got)
	}
	got := p.Touch([]string{filepath.Join(root, "pkg", "deep", "er", "x.go")})
	order(t, got, "Contents of "+filepath.Join(root, "pkg", "AGENTS.md"), "PKG",
		"instructions for files under "+filepath.Join(root, "pkg", "deep"), "DEEP")
	if got := p.Touch([]string{filepath.Join(root, "pkg", "y.go")}); got != "" {
		t.Errorf("pkg/AGENTS.md loaded twice: %q", got)
	}
	if got := p.Touch([]string{filepath.Join(root, "lib", "z.go")}); !strings.Contains(got, "LIB") {
		t.Errorf("override not loaded: %q", got)
	}
	if got := p.Touch([]string{"/elsewhere/AGENTS.md", "/elsewhere/q.go"}); got != "" {
		t.Errorf("a file outside the working directory loaded %q", got)
	}
}

func TestStartReminderOnceAndReset(t *testing.T) {
	root := tree(t, t.TempDir(), map[string]string{".git/HEAD": "x", "AGENTS.md": "ROOT", "pkg/AGENTS.md": "PKG"})
	p := LoadProject("", root)
	src := p.StartReminder()
	if got := src(); len(got) != 1 || !strings.Contains(got[0], "ROOT") {
		t.Fatalf("first call = %q", got)
	}
	if got := src(); got != nil {
		t.Fatalf("second call = %q", got)
	}
	p.Touch([]string{filepath.Join(root, "pkg", "a.go")})
	p.Reset()
	if got := src(); len(got) != 1 {
		t.Fatalf("after Reset = %q", got)
	}
	if got := p.Touch([]string{filepath.Join(root, "pkg", "a.go")}); !strings.Contains(got, "PKG") {
		t.Fatalf("after Reset nested files load again, got %q", got)
	}
}

func TestTouchReminderFollowsFileState(t *testing.T) {
	root := tree(t, t.TempDir(), map[string]string{".git/HEAD": "x", "pkg/AGENTS.md": "PKG", "pkg/a.go": "a"})
	p := LoadProject("", root)
	files := tools.NewFileState()
	src := p.TouchReminder(files)
	if got := src(); got != nil {
		t.Fatalf("nothing touched yet, got %q", got)
	}
	files.Record(filepath.Join(root, "pkg", "a.go"), []byte("a"), fixedTime)
	if got := src(); len(got) != 1 || !strings.Contains(got[0], "PKG") {
		t.Fatalf("after a read: %q", got)
	}
	if got := src(); got != nil {
		t.Fatalf("again: %q", got)
	}
}

func TestFrontmatterList(t *testing.T) {
	cases := map[string]string{
		"paths:\n  - a\n  - \"b c\"\nother: x": "a|b c",
		"paths: [a, 'b']":                      "a|b",
		"paths: a, b":                          "a|b",
		"name: x\npaths:\n\n  - a\n# c\n  - b": "a|b",
		"name: x":                              "",
		"  paths: nested":                      "",
	}
	for in, want := range cases {
		if got := strings.Join(frontmatterList(in, "paths"), "|"); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
