package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (slash paths relative to dir) and returns dir.
func tree(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// order asserts that each of wants appears in text, in the given order.
func order(t *testing.T, text string, wants ...string) {
	t.Helper()
	at := 0
	for _, w := range wants {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("%q missing (or out of order) in:\n%s", w, text)
		}
		at += i + len(w)
	}
}

func TestChainRootFirstOneFilePerFolder(t *testing.T) {
	home := tree(t, t.TempDir(), map[string]string{".coda/AGENTS.md": "USER-WIDE"})
	outer := tree(t, t.TempDir(), map[string]string{
		"AGENTS.md":                       "ABOVE-THE-REPO",
		"repo/.git/HEAD":                  "ref: refs/heads/main\n",
		"repo/AGENTS.md":                  "ROOT-AGENTS",
		"repo/CLAUDE.md":                  "ROOT-CLAUDE",
		"repo/svc/CLAUDE.md":              "SVC-CLAUDE",
		"repo/svc/api/AGENTS.md":          "API-AGENTS",
		"repo/svc/api/AGENTS.override.md": "API-OVERRIDE",
		"repo/svc/api/AGENTS.local.md":    "API-LOCAL",
		"repo/AGENTS.local.md":            "ROOT-LOCAL",
	})
	root := filepath.Join(outer, "repo")
	cwd := filepath.Join(root, "svc", "api")
	p := LoadProject(home, cwd)
	if p.Root() != root {
		t.Fatalf("root = %s, want %s", p.Root(), root)
	}
	text := p.Instructions()
	order(t, text,
		"Contents of "+filepath.Join(home, ".coda", "AGENTS.md"), "USER-WIDE",
		"Contents of "+filepath.Join(root, "AGENTS.md"), "ROOT-AGENTS",
		"Contents of "+filepath.Join(root, "svc", "CLAUDE.md"), "SVC-CLAUDE",
		"Contents of "+filepath.Join(cwd, "AGENTS.override.md"), "API-OVERRIDE",
		"ROOT-LOCAL", "API-LOCAL")
	for _, absent := range []string{"ABOVE-THE-REPO", "ROOT-CLAUDE", "API-AGENTS"} {
		if strings.Contains(text, absent) {
			t.Errorf("%s loaded, but another file of its folder wins or it is outside the repository", absent)
		}
	}
}

func TestNoInstructionsNoText(t *testing.T) {
	p := LoadProject(t.TempDir(), t.TempDir())
	if got := p.Instructions(); got != "" {
		t.Fatalf("instructions = %q", got)
	}
	if got := p.StartReminder()(); got != nil {
		t.Fatalf("reminder = %q", got)
	}
}

func TestImports(t *testing.T) {
	home := tree(t, t.TempDir(), map[string]string{"notes/style.md": "HOME-STYLE"})
	outside := tree(t, t.TempDir(), map[string]string{"secret.md": "OUTSIDE-SECRET"})
	root := tree(t, t.TempDir(), map[string]string{
		".git/HEAD": "x",
		"AGENTS.md": strings.Join([]string{
			"# Project",
			"@docs/a.md",
			"- @~/notes/style.md",
			"@missing.md",
			"@" + filepath.Join(outside, "secret.md"),
			"@../" + filepath.Base(outside) + "/secret.md",
			"@link.md",
			"Inline `@docs/code-span.md` is code, and so is:",
			"```",
			"@docs/fenced.md",
			"```",
			"mail me at someone@docs/a.md is not an import",
		}, "\n"),
		"docs/a.md":         "DOC-A\n@b.md",
		"docs/b.md":         "DOC-B\n@a.md\n@../AGENTS.md",
		"docs/fenced.md":    "FENCED",
		"docs/code-span.md": "SPAN",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	text := LoadProject(home, root).Instructions()
	order(t, text, "Contents of "+filepath.Join(root, "AGENTS.md"), "DOC-A", "DOC-B", "HOME-STYLE")
	for _, absent := range []string{"OUTSIDE-SECRET", "FENCED", "SPAN"} {
		if strings.Contains(text, absent) {
			t.Errorf("%s was imported", absent)
		}
	}
	if n := strings.Count(text, "DOC-A"); n != 1 {
		t.Errorf("a.md appears %d times; a cycle must load each file once", n)
	}
	if n := strings.Count(text, "Contents of "+filepath.Join(root, "AGENTS.md")); n != 1 {
		t.Errorf("AGENTS.md appears %d times", n)
	}
	for _, note := range []string{
		"@missing.md was not imported: file not found",
		"secret.md was not imported: it is outside the project and the home directory",
		"@link.md was not imported: it is outside the project and the home directory",
	} {
		if !strings.Contains(text, note) {
			t.Errorf("note %q missing in:\n%s", note, text)
		}
	}
	order(t, text, "Contents of "+filepath.Join(root, "docs", "a.md")+" (imported by "+filepath.Join(root, "AGENTS.md")+")")
}

func TestImportDepthLimit(t *testing.T) {
	files := map[string]string{".git/HEAD": "x", "AGENTS.md": "LEVEL-0\n@l1.md"}
	for i := 1; i <= 7; i++ {
		files[filepathName(i)] = "LEVEL-" + string(rune('0'+i)) + "\n@" + filepathName(i+1)
	}
	root := tree(t, t.TempDir(), files)
	text := LoadProject("", root).Instructions()
	for i := 0; i <= maxImportDepth; i++ {
		if !strings.Contains(text, "LEVEL-"+string(rune('0'+i))) {
			t.Errorf("level %d missing", i)
		}
	}
	if strings.Contains(text, "LEVEL-6") {
		t.Error("an import deeper than 5 was loaded")
	}
	if !strings.Contains(text, "@l6.md was not imported: imports nest at most 5 deep") {
		t.Errorf("depth note missing:\n%s", text)
	}
}

func filepathName(i int) string { return "l" + string(rune('0'+i)) + ".md" }

func TestImportRefs(t *testing.T) {
	text := "@a.md\n  * @b/c.md  \nsee @d.md\n`@e.md`\n~~~~\n@f.md\n~~~\n@g.md\n~~~~\n@h.md\n@\n"
	got := strings.Join(importRefs(text), ",")
	if got != "a.md,b/c.md,h.md" {
		t.Fatalf("refs = %s", got)
	}
}

func TestLargeFileIsCut(t *testing.T) {
	root := tree(t, t.TempDir(), map[string]string{".git/HEAD": "x", "AGENTS.md": strings.Repeat("x", maxInstructionBytes+100)})
	text := LoadProject("", root).Instructions()
	if len(text) > maxInstructionBytes+2000 || !strings.Contains(text, "only its beginning is shown") {
		t.Fatalf("large file not cut (%d bytes)", len(text))
	}
}
