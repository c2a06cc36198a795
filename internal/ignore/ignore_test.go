package ignore

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob string
		path string
		want bool
	}{
		{"foo", "foo", true},
		{"foo", "a/foo", false},
		{"**/foo", "a/b/foo", true},
		{"**/foo", "foo", true},
		{"**/foo", "a/foox", false},
		{"**/*.log", "x/y.log", true},
		{"**/*.log", ".log", true},
		{"**/*.log", "y.log/z", false},
		{"*.go", "a.go", true},
		{"*.go", "dir/a.go", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "ab", false},
		{"a/**", "a/x/y", true},
		{"**", "anything/at/all", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"[abc].txt", "b.txt", true},
		{"[!abc].txt", "b.txt", false},
		{"[!abc].txt", "d.txt", true},
		{"[a-c]x", "bx", true},
		{"[]]x", "]x", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.ts", true},
		{"*.{ts,tsx}", "a.js", false},
		{`\*x`, "*x", true},
		{`\*x`, "ax", false},
		{"[unclosed", "[unclosed", true},
		{"é*", "ébc", true},
		{"[é]x", "éx", true},
		{"a**b", "axxb", true},
		{"a**b", "a/b", false},
	}
	for _, c := range cases {
		g, err := CompileGlob(c.glob)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", c.glob, err)
		}
		if got := g.Match(c.path); got != c.want {
			t.Errorf("Glob(%q).Match(%q) = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
	if _, err := CompileGlob("{a,b"); err == nil {
		t.Error("unclosed alternative compiled without error")
	}
}

func TestRulesGitSemantics(t *testing.T) {
	r := ParseRules("/r", []byte(`# comment
*.log
!keep.log
/build
out/
docs/*.md
**/gen/**
\#hash
\!bang
trailing   
`))
	cases := []struct {
		path  string
		isDir bool
		want  Match
	}{
		{"/r/a.log", false, Ignore},
		{"/r/sub/deep/a.log", false, Ignore},
		{"/r/keep.log", false, Whitelist},
		{"/r/sub/keep.log", false, Whitelist},
		{"/r/build", true, Ignore},
		{"/r/build", false, Ignore},
		{"/r/sub/build", true, None}, // anchored: only at the root
		{"/r/out", true, Ignore},
		{"/r/out", false, None}, // dir-only
		{"/r/sub/out", true, Ignore},
		{"/r/docs/a.md", false, Ignore},
		{"/r/docs/sub/a.md", false, None}, // '*' does not cross '/'
		{"/r/x/gen/y", false, Ignore},
		{"/r/x/gen", true, None}, // "gen/**" is what is inside gen
		{"/r/#hash", false, Ignore},
		{"/r/!bang", false, Ignore},
		{"/r/trailing", false, Ignore},
		{"/r/comment", false, None},
		{"/r/main.go", false, None},
	}
	for _, c := range cases {
		if got := r.Match(c.path, c.isDir); got != c.want {
			t.Errorf("Match(%q, dir=%v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}
}

// tree writes files (path -> content) under a new temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
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

// stackFor walks from root down to dir, as a walker would.
func stackFor(t *testing.T, root, dir string) *Stack {
	t.Helper()
	s := Load(root)
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	cur := root
	if rel == "." {
		return s
	}
	for _, part := range splitSlash(filepath.ToSlash(rel)) {
		cur = filepath.Join(cur, part)
		entries, err := os.ReadDir(cur)
		if err != nil {
			t.Fatal(err)
		}
		s = s.Child(cur, entries)
	}
	return s
}

func splitSlash(p string) []string {
	var parts []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			parts = append(parts, p[start:i])
			start = i + 1
		}
	}
	return parts
}

func TestStackNestedAndPrecedence(t *testing.T) {
	root := tree(t, map[string]string{
		".git/info/exclude":   "secret.txt\n",
		".gitignore":          "*.tmp\nvendor/\n",
		"sub/.gitignore":      "!important.tmp\nlocal.txt\n",
		"sub/deeper/x.go":     "",
		"other/.ignore":       "*.go\n",
		"other/.rgignore":     "!keep.go\n",
		"other/.gitignore":    "keep.go\n",
		"sub/important.tmp":   "",
		"sub/local.txt":       "",
		"sub/deeper/local.go": "",
	})
	top := Load(root)
	check := func(s *Stack, rel string, isDir bool, want Match) {
		t.Helper()
		if got := s.Match(filepath.Join(root, rel), isDir); got != want {
			t.Errorf("Match(%s, dir=%v) = %v, want %v", rel, isDir, got, want)
		}
	}
	check(top, "a.tmp", false, Ignore)
	check(top, "vendor", true, Ignore)
	check(top, "secret.txt", false, Ignore) // .git/info/exclude
	check(top, "main.go", false, None)

	sub := stackFor(t, root, filepath.Join(root, "sub"))
	check(sub, "sub/important.tmp", false, Whitelist) // deeper negation wins
	check(sub, "sub/other.tmp", false, Ignore)        // parent rule still applies
	check(sub, "sub/local.txt", false, Ignore)
	deeper := stackFor(t, root, filepath.Join(root, "sub", "deeper"))
	check(deeper, "sub/deeper/local.txt", false, Ignore) // rule without '/' matches at any depth
	check(deeper, "sub/deeper/x.go", false, None)

	other := stackFor(t, root, filepath.Join(root, "other"))
	check(other, "other/a.go", false, Ignore)       // .ignore
	check(other, "other/keep.go", false, Whitelist) // .rgignore beats .ignore and .gitignore
}

func TestStackGitignoreNeedsRepository(t *testing.T) {
	root := tree(t, map[string]string{
		".gitignore": "*.tmp\n",
		".ignore":    "*.bak\n",
	})
	s := Load(root)
	if got := s.Match(filepath.Join(root, "a.tmp"), false); got != None {
		t.Errorf(".gitignore applied outside a git repository: %v", got)
	}
	if got := s.Match(filepath.Join(root, "a.bak"), false); got != Ignore {
		t.Errorf(".ignore not applied outside a git repository: %v", got)
	}
}

func TestStackStopsAtRepositoryRoot(t *testing.T) {
	// An outer repository ignores *.txt; an inner repository nested in it
	// must not inherit that rule (git does not), while the outer .gitignore
	// still applies to the outer repository's own files.
	root := tree(t, map[string]string{
		".git/HEAD":            "",
		".gitignore":           "*.txt\n",
		"inner/.git/HEAD":      "",
		"inner/.gitignore":     "*.md\n",
		"inner/notes.txt":      "",
		"outer.txt":            "",
		"inner/sub/readme.md":  "",
		"inner/sub/keep.txt":   "",
		"inner/sub/.gitignore": "",
	})
	inner := stackFor(t, root, filepath.Join(root, "inner"))
	if got := inner.Match(filepath.Join(root, "inner", "notes.txt"), false); got != None {
		t.Errorf("outer .gitignore leaked into nested repository: %v", got)
	}
	if got := inner.Match(filepath.Join(root, "inner", "x.md"), false); got != Ignore {
		t.Errorf("inner .gitignore not applied: %v", got)
	}
	if got := Load(root).Match(filepath.Join(root, "outer.txt"), false); got != Ignore {
		t.Errorf("outer .gitignore not applied: %v", got)
	}
	// Loading the inner directory directly reads the same rules from its
	// parents as walking into it does.
	direct := Load(filepath.Join(root, "inner", "sub"))
	if got := direct.Match(filepath.Join(root, "inner", "sub", "keep.txt"), false); got != None {
		t.Errorf("outer rule applied through parent loading: %v", got)
	}
	if got := direct.Match(filepath.Join(root, "inner", "sub", "readme.md"), false); got != Ignore {
		t.Errorf("parent .gitignore of the repository not applied: %v", got)
	}
}

func TestStackWorktreeExclude(t *testing.T) {
	root := tree(t, map[string]string{
		"main/.git/info/exclude":           "excluded.txt\n",
		"main/.git/worktrees/wt/commondir": "../..\n",
		"wt/.git":                          "", // rewritten below
	})
	gitFile := filepath.Join(root, "wt", ".git")
	content := "gitdir: " + filepath.Join(root, "main", ".git", "worktrees", "wt") + "\n"
	if err := os.WriteFile(gitFile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Load(filepath.Join(root, "wt"))
	if got := s.Match(filepath.Join(root, "wt", "excluded.txt"), false); got != Ignore {
		t.Errorf("worktree did not use the common info/exclude: %v", got)
	}
}

func TestChildWithoutIgnoreFilesSharesParent(t *testing.T) {
	root := tree(t, map[string]string{"a/b.txt": ""})
	s := Load(root)
	entries, err := os.ReadDir(filepath.Join(root, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Child(filepath.Join(root, "a"), entries); c != s {
		t.Error("a directory without ignore files allocated a new stack")
	}
}
