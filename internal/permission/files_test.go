package permission

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPathSandbox(t *testing.T) {
	p := newProject(t)
	// A symlink to a directory outside, a symlink to a file outside, and a
	// dangling symlink whose target directory is outside.
	if err := os.Symlink(p.out, p.path("linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(p.out, "secret.txt"), p.path("src/secret.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(p.out, "new.txt"), p.path("dangling")); err != nil {
		t.Fatal(err)
	}
	// A symlink that goes out and back in: "../proj" from outside.
	if err := os.Symlink(p.root, filepath.Join(p.out, "back")); err != nil {
		t.Fatal(err)
	}
	e := p.engine(t, Config{Mode: ModeAcceptEdits})
	tests := []struct {
		tool, path string
		want       Behavior
	}{
		{"Read", p.path("src/main.go"), Allow},
		{"Read", "src/main.go", Allow},
		{"Read", p.root + "/src/../src/main.go", Allow},
		{"Read", p.root + "/../outside/secret.txt", Ask},
		{"Read", "../outside/secret.txt", Ask},
		{"Read", filepath.Join(p.out, "secret.txt"), Ask},
		{"Read", "/etc/passwd", Ask},
		{"Read", "~/.ssh/id_rsa", Ask},
		{"Read", p.path("linkdir/secret.txt"), Ask},
		{"Read", p.path("src/secret.txt"), Ask},
		{"Read", p.root + "/linkdir/../src/main.go", Ask}, // ".." after a symlink is the target's parent
		{"Read", p.root + "/linkdir/../proj/src/main.go", Allow},
		{"Read", filepath.Join(p.out, "back/src/main.go"), Allow},
		{"Write", p.path("src/new.go"), Allow},
		{"Write", p.path("linkdir/new.txt"), Ask}, // a new file under a symlinked parent
		{"Edit", p.path("dangling"), Ask},
		{"Write", p.path("linkdir/sub/dir/new.txt"), Ask},
		{"Write", filepath.Join(p.out, "x.txt"), Ask},
		{"Write", p.root + "/../proj/../outside/x.txt", Ask},
		{"NotebookEdit", p.path("nb.ipynb"), Allow},
		{"Glob", p.root, Allow},
		{"Glob", p.out, Ask},
		{"Grep", "", Allow},
		{"Grep", "/", Ask},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.tool+" "+tt.path, checkFile(t, e, tt.tool, tt.path), tt.want)
	}
	d := e.Check("Glob", input(t, map[string]any{"pattern": "/etc/**/*.conf"}), true)
	wantBehavior(t, "Glob with an absolute pattern", d, Ask)
	d = e.Check("Write", input(t, map[string]any{"content": "x"}), false)
	wantBehavior(t, "Write without a path", d, Deny)
}

func TestPathSuggestions(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	d := checkFile(t, e, "Write", p.path("src/pkg/a.go"))
	if d.Behavior != Ask || !slices.Equal(d.Suggestions, []string{"Edit(/src/pkg/**)"}) {
		t.Errorf("Write src/pkg/a.go = %v %q, want Ask [Edit(/src/pkg/**)]", d.Behavior, d.Suggestions)
	}
	d = checkFile(t, e, "Read", filepath.Join(p.out, "secret.txt"))
	want := "Read(/" + p.out + "/**)"
	if d.Behavior != Ask || !slices.Equal(d.Suggestions, []string{want}) {
		t.Errorf("Read outside = %v %q, want Ask [%s]", d.Behavior, d.Suggestions, want)
	}
	// The suggestion, once saved, allows the call.
	saved := p.engine(t, Config{Rules: []RuleSource{{List: "allow", Rule: want, Scope: "local"}}})
	wantBehavior(t, "Read outside after saving the suggestion", checkFile(t, saved, "Read", filepath.Join(p.out, "secret.txt")), Allow)
}

func TestAdditionalDirectories(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{AdditionalDirs: []string{"../outside"}})
	wantBehavior(t, "Read in added dir", checkFile(t, e, "Read", filepath.Join(p.out, "secret.txt")), Allow)
	wantBehavior(t, "cat in added dir", checkBash(e, "cat "+filepath.Join(p.out, "secret.txt")), Allow)
	wantBehavior(t, "Read elsewhere", checkFile(t, e, "Read", filepath.Join(p.home, "x")), Ask)
}

func TestProtectedPaths(t *testing.T) {
	p := newProject(t)
	if err := os.Symlink(p.path(".git/hooks"), p.path("hooks")); err != nil {
		t.Fatal(err)
	}
	e := p.engine(t, Config{Mode: ModeBypass, Rules: []RuleSource{{List: "allow", Rule: "Edit"}, {List: "allow", Rule: "Write"}}})
	for _, path := range []string{
		p.path(".git/config"),
		p.path(".git/hooks/pre-commit"),
		p.path(".GIT/config"),     // same directory on a case-insensitive file system
		p.path(".Git/hooks/post"), // a different directory on Linux; asking costs one prompt
		p.path("hooks/pre-push"),  // through a symlink
		p.path("sub/module/.git/config"),
		p.path(".coda/settings.json"),
		p.path(".coda/settings.local.json"),
		p.path(".coda/hooks/check.sh"),
		p.path(".coda/skills/x/SKILL.md"),
		p.path(".coda/agents/a.md"),
		p.path(".coda/commands/c.md"),
		p.path(".mcp.json"),
		filepath.Join(p.home, ".bashrc"),
		filepath.Join(p.home, ".zshrc"),
		filepath.Join(p.home, ".profile"),
		filepath.Join(p.home, ".ssh/authorized_keys"),
		filepath.Join(p.home, ".coda/settings.json"),
	} {
		for _, tool := range []string{"Write", "Edit"} {
			wantBehavior(t, tool+" "+path+" in bypass", checkFile(t, e, tool, path), Ask)
		}
	}
	for _, path := range []string{p.path(".gitignore"), p.path(".github/workflows/ci.yml"), p.path(".coda/notes.md")} {
		wantBehavior(t, "Write "+path+" in bypass", checkFile(t, e, "Write", path), Allow)
	}
	wantBehavior(t, "Read .git/config", checkFile(t, e, "Read", p.path(".git/config")), Allow)
	dontAsk := p.engine(t, Config{Mode: ModeDontAsk})
	wantBehavior(t, "dontAsk write .git/config", checkFile(t, dontAsk, "Write", p.path(".git/config")), Deny)
}

func TestModesForFileTools(t *testing.T) {
	p := newProject(t)
	planFile := filepath.Join(p.home, ".coda", "plans", "plan.md")
	inside, outside := p.path("src/main.go"), filepath.Join(p.out, "secret.txt")
	tests := []struct {
		mode       Mode
		tool, path string
		want       Behavior
	}{
		{ModeDefault, "Read", inside, Allow},
		{ModeDefault, "Edit", inside, Ask},
		{ModeDefault, "Read", outside, Ask},
		{ModeAcceptEdits, "Edit", inside, Allow},
		{ModeAcceptEdits, "Edit", outside, Ask},
		{ModePlan, "Read", inside, Allow},
		{ModePlan, "Edit", inside, Deny},
		{ModePlan, "Write", planFile, Allow},
		{ModePlan, "Edit", planFile, Allow},
		{ModePlan, "Write", planFile + ".bak", Deny},
		{ModeBypass, "Edit", outside, Allow},
		{ModeBypass, "Read", outside, Allow},
		{ModeDontAsk, "Read", inside, Allow},
		{ModeDontAsk, "Read", outside, Deny},
		{ModeDontAsk, "Edit", inside, Deny},
	}
	for _, tt := range tests {
		e := p.engine(t, Config{Mode: tt.mode, PlanFile: planFile})
		wantBehavior(t, string(tt.mode)+" "+tt.tool+" "+tt.path, checkFile(t, e, tt.tool, tt.path), tt.want)
	}
	// Allow rules do not open plan mode to edits.
	e := p.engine(t, Config{Mode: ModePlan, Rules: []RuleSource{{List: "allow", Rule: "Edit"}}})
	wantBehavior(t, "plan with Edit allowed", checkFile(t, e, "Edit", inside), Deny)
}

func TestModeSwitching(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	if e.Mode() != ModeDefault {
		t.Fatalf("Mode() = %q", e.Mode())
	}
	wantBehavior(t, "default edit", checkFile(t, e, "Edit", p.path("src/main.go")), Ask)
	e.SetMode(ModeAcceptEdits)
	wantBehavior(t, "acceptEdits edit", checkFile(t, e, "Edit", p.path("src/main.go")), Allow)
	e.SetMode(ModePlan)
	wantBehavior(t, "plan edit", checkFile(t, e, "Edit", p.path("src/main.go")), Deny)
	wantBehavior(t, "plan ls", checkBash(e, "ls"), Allow)
	wantBehavior(t, "plan go test", checkBash(e, "go test ./..."), Deny)
	e.SetMode(ModeBypass)
	wantBehavior(t, "bypass go test", checkBash(e, "go test ./..."), Allow)

	for s, want := range map[string]Mode{"manual": ModeDefault, "default": ModeDefault, "dontAsk": ModeDontAsk, "plan": ModePlan} {
		if m, err := ParseMode(s); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", s, m, err, want)
		}
	}
	if _, err := ParseMode("yolo"); err == nil {
		t.Error("ParseMode(yolo): no error")
	}
}

func TestWorkDir(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	e.SetWorkDir(p.path("src"))
	wantBehavior(t, "cat main.go from src", checkBash(e, "cat main.go"), Allow)
	wantBehavior(t, "cat ../../outside/secret.txt from src", checkBash(e, "cat ../../outside/secret.txt"), Ask)
	wantBehavior(t, "Read main.go from src", checkFile(t, e, "Read", "main.go"), Allow)
	wantBehavior(t, "rm -rf ../.. from src", checkBash(e, "rm -rf ../../.."), Deny)
}

func TestProjectBehindASymlink(t *testing.T) {
	base := t.TempDir()
	realDir := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(realDir, "proj", "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realDir, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "link", "proj")
	e, errs := New(Config{ProjectDir: proj, Home: filepath.Join(base, "home"), Rules: []RuleSource{{List: "allow", Rule: "Edit(/src/**)", Scope: "project"}}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, p := range []string{filepath.Join(proj, "src", "a.go"), filepath.Join(realDir, "proj", "src", "a.go")} {
		wantBehavior(t, "Write "+p, checkFile(t, e, "Write", p), Allow)
		wantBehavior(t, "Read "+p, checkFile(t, e, "Read", p), Allow)
	}
	wantBehavior(t, "Write outside src", checkFile(t, e, "Write", filepath.Join(proj, "b.go")), Ask)
}

func TestConcurrentUse(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 50; j++ {
				checkBash(e, "git status && go test ./...")
				checkFile(t, e, "Edit", p.path("src/main.go"))
			}
		}()
	}
	for j := 0; j < 50; j++ {
		e.SetMode(ModeAcceptEdits)
		if err := e.AllowForSession("Bash(go test *)"); err != nil {
			t.Error(err)
		}
		e.SetMode(ModeDefault)
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	wantBehavior(t, "after session approvals", checkBash(e, "go test ./..."), Allow)
}
