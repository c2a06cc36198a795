package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBashDefaultMode(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	tests := []struct {
		cmd  string
		want Behavior
	}{
		{"git status", Allow},
		{"git log --oneline -5 && git diff HEAD~1", Allow},
		{"ls -la", Allow},
		{"cat src/main.go", Allow},
		{"cat src/*.go | wc -l", Allow},
		{"grep -rn foo .", Allow},
		{"grep -A 3 pattern src/main.go", Allow},
		{"find . -name '*.go'", Allow},
		{"cd src && cat main.go", Allow},
		{"echo hi > /dev/null 2>&1", Allow},
		{"bash -c 'ls -la'", Allow},
		{"su -c 'ls -la'", Ask},
		{"sudo bash -c 'ls -la'", Ask},
		{"echo $(git rev-parse HEAD)", Allow},
		{"git branch", Allow},
		{"git --no-pager log", Allow},
		{"X=1", Allow},
		{"LC_ALL=C grep x src/main.go", Allow},

		{"cat /etc/passwd", Ask},
		{"cat ../outside/secret.txt", Ask},
		{"cd .. && cat outside/secret.txt", Ask},
		{"ls ~/.ssh", Ask},
		{"grep -r foo /etc", Ask},
		{"cat < /etc/hostname", Ask},
		{"echo $(cat /etc/passwd)", Ask},
		{"cat $FILE", Ask},
		{"find . -delete", Ask},
		{"find . -exec touch {} \\;", Ask},
		{"git branch -D old", Ask},
		{"git -C /tmp log", Ask},
		{"git diff --output=x.patch", Ask},
		{"sort -o out.txt src/main.go", Ask},
		{"rg --pre ./evil foo", Ask},
		{"PATH=/tmp/evil:$PATH ls", Ask},
		{"export PATH=/tmp/evil; ls", Ask},
		{"sudo cat src/main.go", Ask},
		{"ls | xargs rm", Ask},
		{"go test ./...", Ask},
		{"rm build/tmp.o", Ask},
		{"echo hi > out.txt", Ask},
		{"git status && go build", Ask},
		{"mkdir -p build", Ask},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.cmd, checkBash(e, tt.cmd), tt.want)
	}
}

func TestBashSuggestions(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{})
	tests := []struct {
		cmd  string
		want []string
	}{
		{"npm run test -- --watch", []string{"Bash(npm run test *)"}},
		{"go test ./...", []string{"Bash(go test *)"}},
		{"make", []string{"Bash(make)"}},
		{"git status && go vet ./... && cargo build", []string{"Bash(go vet *)", "Bash(cargo build)"}},
		{"echo hi > out.txt", []string{"Edit(/**)"}},
		{"echo hi > src/out.txt", []string{"Edit(/src/**)"}},
	}
	for _, tt := range tests {
		d := checkBash(e, tt.cmd)
		if d.Behavior != Ask || !slices.Equal(d.Suggestions, tt.want) {
			t.Errorf("%q = %v %q, want Ask %q", tt.cmd, d.Behavior, d.Suggestions, tt.want)
		}
	}
}

func TestBashAcceptEdits(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Mode: ModeAcceptEdits})
	tests := []struct {
		cmd  string
		want Behavior
	}{
		{"echo hi > out.txt", Allow},
		{"mkdir -p build/x && touch build/x/a", Allow},
		{"cp src/main.go src/copy.go", Allow},
		{"mv src/copy.go src/moved.go", Allow},
		{"cp src/main.go ../outside/", Ask},
		{"touch /tmp/x", Ask},
		{"echo hi > ../outside/x", Ask},
		{"go test ./...", Ask},
		{"rm src/main.go", Ask},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.cmd, checkBash(e, tt.cmd), tt.want)
	}
}

func TestBashPrefixRules(t *testing.T) {
	p := newProject(t)
	tests := []struct {
		rule string
		cmd  string
		want Behavior
	}{
		{"Bash(npm run test *)", "npm run test", Allow},
		{"Bash(npm run test *)", "npm run test -- --watch", Allow},
		{"Bash(npm run test *)", "npm run testing", Ask},
		{"Bash(npm run test *)", "npm run test && rm -rf x", Ask},
		{"Bash(npm run test:*)", "npm run test --coverage", Allow},
		{"Bash(npm run test:*)", "npm run test", Allow},
		{"Bash(npm run test:*)", "npm run tests", Ask},
		{"Bash(ls*)", "lsof -i", Allow},
		{"Bash(lsof *)", "lsof -i", Allow},
		{"Bash(ls *)", "lsof -i", Ask},
		{"Bash(git fetch)", "git fetch", Allow},
		{"Bash(git fetch)", "git fetch origin", Ask},
		{"Bash(git * main)", "git push origin main", Allow},
		{"Bash(git * main)", "git push origin dev", Ask},
		{"Bash(* install)", "npm install", Allow},
		{"Bash(git:* push)", "git push", Ask},
		{"Bash(npm test)", "npm test", Allow},
		{"Bash(npm test)", "timeout 60 npm test", Allow},
		{"Bash(npm test)", "NODE_ENV=test npm test", Allow},
		{"Bash(npm test)", "LD_PRELOAD=/tmp/x.so npm test", Ask},
		{"Bash(npm test)", "sudo npm test", Ask},
		{"Bash(npm test)", "./npm test", Ask},
		{"Bash(npm test)", "npm test; npm publish", Ask},
		{"Bash(npm test)", "bash -c 'npm test'", Allow},
		{"Bash(make *)", "make build > build.log", Ask}, // the redirect writes a file
		{"Bash(go build *)", "go build -o x $(echo ./...)", Allow},
	}
	for _, tt := range tests {
		e := p.engine(t, Config{Rules: []RuleSource{{List: "allow", Rule: tt.rule, Scope: "project"}}})
		wantBehavior(t, tt.rule+" on "+tt.cmd, checkBash(e, tt.cmd), tt.want)
	}
}

func TestBashDenyRules(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Mode: ModeBypass, Rules: []RuleSource{
		{List: "allow", Rule: "Bash", Scope: "local"},
		{List: "deny", Rule: "Bash(rm *)", Scope: "user"},
		{List: "deny", Rule: "Bash(git push *)", Scope: "project"},
		{List: "deny", Rule: "Bash(run_in_background:true)", Scope: "managed"},
		{List: "ask", Rule: "Bash(docker *)", Scope: "project"},
	}})
	tests := []struct {
		cmd  string
		want Behavior
	}{
		{"rm x", Deny},
		{"ls && rm x", Deny},
		{"echo $(rm x)", Deny},
		{"bash -c 'true; rm -rf build'", Deny},
		{"sudo /bin/rm x", Deny},
		{"FOO=1 git push origin main", Deny},
		{"nice git push", Deny},
		{"git push", Deny},
		{"docker run x", Ask},
		{"ls | docker load", Ask},
		{"echo ok", Allow},
		{"go build ./...", Allow},
	}
	for _, tt := range tests {
		wantBehavior(t, tt.cmd, checkBash(e, tt.cmd), tt.want)
	}
	d := e.Check("Bash", input(t, map[string]any{"command": "sleep 1", "run_in_background": true}), false)
	wantBehavior(t, "run_in_background:true", d, Deny)
	d = e.Check("Bash", input(t, map[string]any{"command": "sleep 1", "run_in_background": false}), false)
	wantBehavior(t, "run_in_background:false", d, Allow)
}

func TestBashPrecedenceAcrossLayers(t *testing.T) {
	p := newProject(t)
	// A deny in the lowest layer beats an allow in the highest; ask beats
	// allow; specificity is ignored.
	e := p.engine(t, Config{Rules: []RuleSource{
		{List: "allow", Rule: "Bash(git *)", Scope: "managed", Path: "/etc/coda/managed-settings.json"},
		{List: "allow", Rule: "Bash(curl https://example.com/x)", Scope: "cli"},
		{List: "ask", Rule: "Bash(git push *)", Scope: "local", Path: p.path(".coda/settings.local.json")},
		{List: "deny", Rule: "Bash(curl *)", Scope: "user", Path: filepath.Join(p.home, ".coda/settings.json")},
	}})
	wantBehavior(t, "git fetch", checkBash(e, "git fetch"), Allow)
	d := checkBash(e, "git push origin main")
	wantBehavior(t, "git push", d, Ask)
	if d.Rule != "Bash(git push *)" {
		t.Errorf("git push: Rule = %q, want the ask rule", d.Rule)
	}
	wantBehavior(t, "curl", checkBash(e, "curl https://example.com/x"), Deny)
	if err := e.AllowForSession("Bash(curl *)"); err != nil {
		t.Fatal(err)
	}
	wantBehavior(t, "curl after session allow", checkBash(e, "curl https://example.com/x"), Deny)
	if err := e.AllowForSession("Bash(make *)"); err != nil {
		t.Fatal(err)
	}
	wantBehavior(t, "make after session allow", checkBash(e, "make build"), Allow)
}

func TestBashUnparseableAsksEvenInBypass(t *testing.T) {
	p := newProject(t)
	for _, m := range []Mode{ModeDefault, ModeBypass, ModeAcceptEdits} {
		e := p.engine(t, Config{Mode: m, SandboxedBash: true, Rules: []RuleSource{{List: "allow", Rule: "Bash"}}})
		d := checkBash(e, "echo 'unterminated")
		wantBehavior(t, string(m)+": unparseable", d, Ask)
		if !strings.Contains(d.Reason, "cannot be parsed") {
			t.Errorf("reason %q does not say the command cannot be parsed", d.Reason)
		}
	}
	e := p.engine(t, Config{Mode: ModeDontAsk})
	wantBehavior(t, "dontAsk: unparseable", checkBash(e, "echo 'unterminated"), Deny)
}

func TestBashSandboxAutoAllow(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{SandboxedBash: true, Rules: []RuleSource{
		{List: "deny", Rule: "Bash(curl *)"},
		{List: "ask", Rule: "Bash(git push *)"},
	}})
	wantBehavior(t, "go test", checkBash(e, "go test ./..."), Allow)
	wantBehavior(t, "write outside", checkBash(e, "echo x > /tmp/x"), Allow) // the sandbox refuses it
	wantBehavior(t, "curl", checkBash(e, "curl example.com"), Deny)
	wantBehavior(t, "git push", checkBash(e, "git push"), Ask)
	wantBehavior(t, "protected", checkBash(e, "echo x >> .git/config"), Ask)
	d := e.Check("Bash", input(t, map[string]any{"command": "go test ./...", "dangerouslyDisableSandbox": true}), false)
	wantBehavior(t, "sandbox disabled", d, Ask)

	plan := p.engine(t, Config{SandboxedBash: true, Mode: ModePlan})
	wantBehavior(t, "plan+sandbox go test", checkBash(plan, "go test ./..."), Deny)
}

func TestBashProtectedPathsInBypass(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Mode: ModeBypass})
	for _, cmd := range []string{
		"echo x > .git/hooks/pre-commit",
		"echo x > .Git/hooks/pre-commit",
		"echo x >> ~/.bashrc",
		"cd src && echo x > ../.git/config",
		"rm -rf .git",
		"echo '{}' > .coda/settings.json",
	} {
		wantBehavior(t, cmd, checkBash(e, cmd), Ask)
	}
	// A symlink inside the project pointing at git's config is protected too.
	if err := os.Symlink(p.path(".git/config"), p.path("cfg")); err != nil {
		t.Fatal(err)
	}
	wantBehavior(t, "write through symlink", checkBash(e, "echo x > cfg"), Ask)
	wantBehavior(t, ".gitignore", checkBash(e, "echo x >> .gitignore"), Allow)
	// After a cd to a directory known only at run time, relative writes
	// cannot be checked.
	wantBehavior(t, "cd $(...) then write", checkBash(e, `cd "$(echo .git)" && echo x > config`), Ask)
	wantBehavior(t, "cd $X then rm", checkBash(e, "cd $X && rm -rf hooks"), Ask)
	wantBehavior(t, "cd $X then make", checkBash(e, "cd $X && make"), Allow)
}

func TestBashRedirectsAreCheckedAsEdits(t *testing.T) {
	p := newProject(t)
	e := p.engine(t, Config{Mode: ModeAcceptEdits, Rules: []RuleSource{
		{List: "deny", Rule: "Edit(/secrets/**)"},
		{List: "allow", Rule: "Edit(//" + strings.TrimPrefix(p.out, "/") + "/**)"},
	}})
	wantBehavior(t, "deny rule", checkBash(e, "echo x > secrets/key"), Deny)
	wantBehavior(t, "allowed outside dir", checkBash(e, "echo x > "+p.out+"/log"), Allow)
	wantBehavior(t, "outside", checkBash(e, "echo x > /tmp/other"), Ask)
	wantBehavior(t, "stderr dup", checkBash(e, "ls 2>&1"), Allow)
}
