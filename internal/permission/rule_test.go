package permission

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPathRules(t *testing.T) {
	p := newProject(t)
	userSettings := filepath.Join(p.home, ".coda", "settings.json")
	tests := []struct {
		rule       RuleSource
		tool, path string
		want       Behavior
	}{
		// ./x is anchored at the project; a bare name matches at any depth.
		{RuleSource{List: "deny", Rule: "Read(./.env)"}, "Read", p.path(".env"), Deny},
		{RuleSource{List: "deny", Rule: "Read(./.env)"}, "Read", p.path("src/.env"), Allow},
		{RuleSource{List: "deny", Rule: "Read(.env)"}, "Read", p.path("src/deep/.env"), Deny},
		{RuleSource{List: "deny", Rule: "Read(*.key)"}, "Read", p.path("src/a.key"), Deny},
		{RuleSource{List: "deny", Rule: "Read(./.env)"}, "Edit", p.path(".env"), Deny}, // a Read deny blocks edits
		{RuleSource{List: "deny", Rule: "Read(./secrets/**)"}, "Read", p.path("secrets/a/b"), Deny},
		{RuleSource{List: "deny", Rule: "Read(./secrets/**)"}, "Read", p.path("x/secrets/a"), Allow},
		{RuleSource{List: "deny", Rule: "Read(secrets/**)"}, "Read", p.path("x/secrets/a"), Deny}, // deny: any depth
		{RuleSource{List: "deny", Rule: "Read(./secrets)"}, "Grep", p.path("secrets"), Deny},
		{RuleSource{List: "deny", Rule: "Read(./secrets/)"}, "Read", p.path("secrets/k"), Deny}, // a directory covers its contents
		{RuleSource{List: "deny", Rule: "Edit(/src/**)"}, "Write", p.path("src/x.go"), Deny},
		{RuleSource{List: "deny", Rule: "Edit(/src/**)"}, "Read", p.path("src/main.go"), Allow},
		// "/x" is relative to the settings file's root.
		{RuleSource{List: "allow", Rule: "Edit(/src/**)", Scope: "project"}, "Write", p.path("src/x.go"), Allow},
		{RuleSource{List: "allow", Rule: "Edit(/src/**)", Scope: "project"}, "Write", p.path("lib/x.go"), Ask},
		{RuleSource{List: "allow", Rule: "Edit(/notes/**)", Scope: "user", Path: userSettings}, "Write", filepath.Join(p.home, ".coda/notes/a.md"), Allow},
		{RuleSource{List: "allow", Rule: "Edit(/notes/**)", Scope: "user", Path: userSettings}, "Write", p.path("notes/a.md"), Ask},
		{RuleSource{List: "allow", Rule: "Edit(src/*.go)"}, "Edit", p.path("src/main.go"), Allow},
		{RuleSource{List: "allow", Rule: "Edit(src/*.go)"}, "Edit", p.path("src/sub/main.go"), Ask}, // * is one segment
		{RuleSource{List: "allow", Rule: "Edit(src/*.go)"}, "Edit", p.path("x/src/main.go"), Ask},   // allow: anchored
		// ~/ and //abs.
		{RuleSource{List: "allow", Rule: "Read(~/notes/**)"}, "Read", filepath.Join(p.home, "notes/a"), Allow},
		{RuleSource{List: "allow", Rule: "Read(~/notes/**)"}, "Read", filepath.Join(p.home, "other"), Ask},
		{RuleSource{List: "allow", Rule: "Read(/" + p.out + "/**)"}, "Read", filepath.Join(p.out, "secret.txt"), Allow},
		{RuleSource{List: "allow", Rule: "Edit(/" + p.out + "/**)"}, "Read", filepath.Join(p.out, "secret.txt"), Allow}, // Edit allow grants reads
		{RuleSource{List: "allow", Rule: "Read(/" + p.out + "/**)"}, "Write", filepath.Join(p.out, "secret.txt"), Ask},
		{RuleSource{List: "ask", Rule: "Read(./src/**)"}, "Read", p.path("src/main.go"), Ask},
		{RuleSource{List: "allow", Rule: "Read"}, "Read", "/etc/hostname", Allow},
		{RuleSource{List: "deny", Rule: "Read"}, "Grep", p.root, Deny},
		{RuleSource{List: "deny", Rule: "Write"}, "Write", p.path("x"), Deny},
		{RuleSource{List: "deny", Rule: "Write"}, "Edit", p.path("src/main.go"), Ask},
	}
	for _, tt := range tests {
		e := p.engine(t, Config{Rules: []RuleSource{tt.rule}})
		wantBehavior(t, tt.rule.List+" "+tt.rule.Rule+": "+tt.tool+" "+tt.path, checkFile(t, e, tt.tool, tt.path), tt.want)
	}
}

func TestPathRulesAndSymlinks(t *testing.T) {
	p := newProject(t)
	if err := os.Symlink(p.out, p.path("src/out")); err != nil {
		t.Fatal(err)
	}
	// Allow needs both the link and its target to match.
	e := p.engine(t, Config{Rules: []RuleSource{{List: "allow", Rule: "Edit(/src/**)", Scope: "project"}}})
	wantBehavior(t, "write through a symlink out", checkFile(t, e, "Write", p.path("src/out/new.txt")), Ask)
	// Deny matches if either does.
	e = p.engine(t, Config{Rules: []RuleSource{{List: "deny", Rule: "Read(/" + p.out + "/**)"}}})
	wantBehavior(t, "read through a symlink into a denied dir", checkFile(t, e, "Read", p.path("src/out/secret.txt")), Deny)
	wantBehavior(t, "cat through a symlink into a denied dir", checkBash(e, "cat src/out/secret.txt"), Deny)
	e = p.engine(t, Config{Rules: []RuleSource{{List: "deny", Rule: "Read(./src/out/**)"}}})
	// A rule naming a path through a symlink covers the link's target too.
	wantBehavior(t, "read the target of a denied link", checkFile(t, e, "Read", filepath.Join(p.out, "secret.txt")), Deny)
	wantBehavior(t, "read through the denied link", checkFile(t, e, "Read", p.path("src/out/secret.txt")), Deny)
}

func TestBashReadRules(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Rules: []RuleSource{
		{List: "deny", Rule: "Read(./.env)"},
		{List: "allow", Rule: "Read(//etc/**)"},
	}})
	wantBehavior(t, "cat .env", checkBash(e, "cat .env"), Deny)
	wantBehavior(t, "grep x .env", checkBash(e, "grep x .env"), Deny)
	wantBehavior(t, "cat /etc/hostname", checkBash(e, "cat /etc/hostname"), Allow)
	wantBehavior(t, "cp .env elsewhere", checkBash(e, "cp .env /tmp/x"), Deny)
	wantBehavior(t, "python reads .env", checkBash(e, "cd src && python3 x.py ../.env"), Deny)
	wantBehavior(t, "cat < .env", checkBash(e, "cat < .env"), Deny)

	e = p.engine(t, Config{Mode: ModeBypass, Rules: []RuleSource{{List: "deny", Rule: "Edit(/secrets/**)"}}})
	wantBehavior(t, "rm in an Edit-denied dir", checkBash(e, "rm secrets/key"), Deny)
	wantBehavior(t, "write into an Edit-denied dir", checkBash(e, "echo x > secrets/key"), Deny)
	wantBehavior(t, "cat in an Edit-denied dir", checkBash(e, "cat secrets/key"), Allow)
}

func TestWebFetchRules(t *testing.T) {
	p := newProject(t)
	fetch := func(e *Engine, u string) Decision {
		return e.Check("WebFetch", input(t, map[string]any{"url": u, "prompt": "x"}), true)
	}
	e := p.engine(t, Config{Rules: []RuleSource{
		{List: "allow", Rule: "WebFetch(domain:example.com)"},
		{List: "allow", Rule: "WebFetch(domain:*.docs.dev)"},
		{List: "allow", Rule: "WebFetch(domain:api.*.io)"},
		{List: "deny", Rule: "WebFetch(domain:evil.com)"},
	}})
	tests := []struct {
		url  string
		want Behavior
	}{
		{"https://example.com/x", Allow},
		{"https://EXAMPLE.com./x", Allow},
		{"https://example.com:8443/x", Allow},
		{"https://api.example.com/x", Ask},
		{"https://example.com.evil.net/", Ask},
		{"https://go.docs.dev/", Allow},
		{"https://a.b.docs.dev/", Allow},
		{"https://docs.dev/", Ask},
		{"https://api.foo.io/", Allow},
		{"https://api.foo.bar.io/", Ask},
		{"https://evil.com/", Deny},
		{"not a url", Ask},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.url, fetch(e, tt.url), tt.want)
	}
	d := fetch(e, "https://new.example.org/x")
	if !slices.Equal(d.Suggestions, []string{"WebFetch(domain:new.example.org)"}) {
		t.Errorf("suggestions = %q", d.Suggestions)
	}
	wantBehavior(t, "bypass", fetch(p.engine(t, Config{Mode: ModeBypass}), "https://x.org"), Allow)
	wantBehavior(t, "dontAsk", fetch(p.engine(t, Config{Mode: ModeDontAsk}), "https://x.org"), Deny)
	wantBehavior(t, "bare deny", fetch(p.engine(t, Config{Mode: ModeBypass, Rules: []RuleSource{{List: "deny", Rule: "WebFetch"}}}), "https://example.com"), Deny)
}

func TestMCPAndOtherToolRules(t *testing.T) {
	p := newProject(t)
	e, errs := New(Config{ProjectDir: p.root, Home: p.home, Rules: []RuleSource{
		{List: "allow", Rule: "mcp__github"},
		{List: "allow", Rule: "mcp__db__read_*"},
		{List: "allow", Rule: "mcp__*", Path: "settings.json"}, // unanchored: ignored with a warning
		{List: "deny", Rule: "mcp__github__delete_*"},
		{List: "ask", Rule: "mcp__slack__post"},
		{List: "deny", Rule: "Agent(Explore)"},
		{List: "ask", Rule: "Agent(model:opus)"},
		{List: "allow", Rule: "Skill(review *)"},
	}})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"mcp__*"`) || !strings.Contains(errs[0].Error(), "settings.json") {
		t.Errorf("errors = %v, want one about mcp__* naming settings.json", errs)
	}
	tests := []struct {
		tool     string
		in       map[string]any
		readOnly bool
		want     Behavior
	}{
		{"mcp__github__get_issue", nil, false, Allow},
		{"mcp__github__delete_repo", nil, false, Deny},
		{"mcp__db__read_rows", nil, false, Allow},
		{"mcp__db__write_rows", nil, false, Ask},
		{"mcp__slack__post", nil, false, Ask},
		{"mcp__slack__list", nil, true, Allow},
		{"mcp__other__x", nil, false, Ask},
		{"Agent", map[string]any{"subagent_type": "Explore"}, false, Deny},
		{"Task", map[string]any{"subagent_type": "Explore"}, false, Deny},
		{"Agent", map[string]any{"subagent_type": "general", "model": "opus"}, false, Ask},
		{"Skill", map[string]any{"skill": "review"}, false, Allow},
		{"Skill", map[string]any{"skill": "review pr 12"}, false, Allow},
		{"Skill", map[string]any{"skill": "reviewer"}, false, Ask},
		{"TodoWrite", map[string]any{"todos": []any{}}, true, Allow},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.tool, e.Check(tt.tool, input(t, tt.in), tt.readOnly), tt.want)
	}
	for m, want := range map[Mode]Behavior{ModeDefault: Ask, ModeBypass: Allow, ModePlan: Deny, ModeDontAsk: Deny, ModeAcceptEdits: Ask} {
		e.SetMode(m)
		wantBehavior(t, string(m)+" mcp__other__x", e.Check("mcp__other__x", nil, false), want)
		wantBehavior(t, string(m)+" read-only mcp__other__y", e.Check("mcp__other__y", nil, true), Allow)
	}
}

func TestHiddenTools(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Rules: []RuleSource{
		{List: "deny", Rule: "Bash(*)"},
		{List: "deny", Rule: "mcp__slack"},
		{List: "deny", Rule: "WebFetch(domain:evil.com)"},
		{List: "deny", Rule: "Edit(/x/**)"},
		{List: "allow", Rule: "Read"},
	}})
	all := []string{"Read", "mcp__slack__post", "Bash", "WebFetch", "Edit", "mcp__github__x", "mcp__slack__list"}
	want := []string{"Bash", "mcp__slack__list", "mcp__slack__post"}
	if got := e.HiddenTools(all); !slices.Equal(got, want) {
		t.Errorf("HiddenTools = %q, want %q", got, want)
	}
	e = p.engine(t, Config{Rules: []RuleSource{{List: "deny", Rule: "mcp__*"}, {List: "deny", Rule: "Bash"}}})
	want = []string{"Bash", "mcp__github__x", "mcp__slack__list", "mcp__slack__post"}
	if got := e.HiddenTools(all); !slices.Equal(got, want) {
		t.Errorf("HiddenTools = %q, want %q", got, want)
	}
	e = p.engine(t, Config{Rules: []RuleSource{{List: "deny", Rule: "*"}}})
	if got := e.HiddenTools(all); len(got) != len(all) {
		t.Errorf("deny * hides %q, want every tool", got)
	}
}

func TestMalformedRules(t *testing.T) {
	p := newProject(t)
	file := p.path(".coda/settings.json")
	bad := []RuleSource{
		{List: "allow", Rule: "Bash(npm test", Path: file},
		{List: "allow", Rule: "Bash()", Path: file},
		{List: "deny", Rule: "", Path: file},
		{List: "deny", Rule: "Bad Tool", Path: file},
		{List: "deny", Rule: "Bash)", Path: file},
		{List: "allow", Rule: "WebFetch(example.com)", Path: file},
		{List: "allow", Rule: "*", Path: file},
		{List: "allow", Rule: "Write(/src/**)", Path: file},
		{List: "allow", Rule: "Read([)", Path: file},
		{List: "allow", Rule: "Bash(run_in_background:true)", Path: file},
		{List: "deny", Rule: "mcp__x(y)", Path: file},
		{List: "deny", Rule: "WebSearch(cats)", Path: file},
		{List: "maybe", Rule: "Bash", Path: file},
	}
	good := RuleSource{List: "allow", Rule: "Bash(make *)", Path: file}
	e, errs := New(Config{ProjectDir: p.root, Home: p.home, Rules: append(bad, good)})
	if len(errs) != len(bad) {
		t.Fatalf("got %d errors, want %d: %v", len(errs), len(bad), errs)
	}
	for i, err := range errs {
		var re *RuleError
		if !errors.As(err, &re) || re.Source != bad[i] {
			t.Errorf("error %d = %v, want a RuleError for %q", i, err, bad[i].Rule)
		}
		if !strings.Contains(err.Error(), file) {
			t.Errorf("error %q does not name the settings file", err)
		}
	}
	wantBehavior(t, "the good rule still works", checkBash(e, "make all"), Allow)
	if err := e.AllowForSession("Bash("); err == nil {
		t.Error("AllowForSession(Bash(): no error")
	}
	if _, errs := New(Config{ProjectDir: p.root, Mode: "yolo"}); len(errs) != 1 {
		t.Errorf("unknown mode: errors = %v", errs)
	}
}
