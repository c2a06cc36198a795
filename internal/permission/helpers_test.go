package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// project is a temporary project directory with a home directory beside it.
type project struct {
	root string // the project
	home string
	out  string // a directory outside both
}

func newProject(t *testing.T) project {
	t.Helper()
	base := t.TempDir()
	p := project{
		root: filepath.Join(base, "proj"),
		home: filepath.Join(base, "home"),
		out:  filepath.Join(base, "outside"),
	}
	for _, d := range []string{p.root, p.home, p.out,
		filepath.Join(p.root, ".git", "hooks"), filepath.Join(p.root, "src"), filepath.Join(p.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.write(t, filepath.Join(p.root, "src", "main.go"), "package main\n")
	p.write(t, filepath.Join(p.out, "secret.txt"), "secret\n")
	return p
}

func (p project) write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// engine builds an engine for the project; malformed rules fail the test.
func (p project) engine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	if cfg.ProjectDir == "" {
		cfg.ProjectDir = p.root
	}
	if cfg.Home == "" {
		cfg.Home = p.home
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeDefault
	}
	e, errs := New(cfg)
	for _, err := range errs {
		t.Errorf("New: %v", err)
	}
	return e
}

func (p project) path(rel string) string { return filepath.Join(p.root, rel) }

func input(t *testing.T, fields map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkBash runs a Bash check.
func checkBash(e *Engine, cmd string) Decision {
	return e.Check("Bash", bashInputJSON(cmd), false)
}

func checkFile(t *testing.T, e *Engine, tool, path string) Decision {
	t.Helper()
	key := "file_path"
	switch tool {
	case "NotebookEdit":
		key = "notebook_path"
	case "Glob", "Grep":
		key = "path"
	}
	return e.Check(tool, input(t, map[string]any{key: path, "pattern": "x"}), tool == "Read" || tool == "Glob" || tool == "Grep")
}

func wantBehavior(t *testing.T, what string, d Decision, want Behavior) {
	t.Helper()
	if d.Behavior != want {
		t.Errorf("%s = %v (%s), want %v", what, d.Behavior, d.Reason, want)
	}
}
