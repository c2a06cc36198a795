package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dirs is a fake machine: a home, a project and a managed-policy folder.
type dirs struct{ home, project, managed string }

func newDirs(t *testing.T) dirs {
	t.Helper()
	root := t.TempDir()
	d := dirs{filepath.Join(root, "home"), filepath.Join(root, "project"), filepath.Join(root, "etc-coda")}
	for _, p := range []string{d.home, d.project, d.managed} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d dirs) options() Options {
	return Options{Home: d.home, ProjectDir: d.project, ManagedDir: d.managed, Getenv: noEnv}
}

func (d dirs) user() string     { return UserSettingsPath(d.home) }
func (d dirs) proj() string     { return ProjectSettingsPath(d.project) }
func (d dirs) local() string    { return LocalSettingsPath(d.project) }
func (d dirs) managedF() string { return filepath.Join(d.managed, "managed-settings.json") }

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, opts Options) *Loaded {
	t.Helper()
	l, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

func scopes(l *Loaded) []Scope {
	var out []Scope
	for _, layer := range l.Layers {
		out = append(out, layer.Scope)
	}
	return out
}

func TestPrecedenceAcrossAllLayers(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.managedF(), `{"model": "managed"}`)
	argFile := filepath.Join(t.TempDir(), "arg.json")
	writeFile(t, argFile, `{"model": "settings-arg"}`)
	writeFile(t, d.local(), `{"model": "local"}`)
	writeFile(t, d.proj(), `{"model": "project"}`)
	writeFile(t, d.user(), `{"model": "user"}`)

	opts := d.options()
	opts.CLI = &Settings{Model: "flags"}
	opts.SettingsArg = argFile

	l := mustLoad(t, opts)
	want := []Scope{ScopeManaged, ScopeCLI, ScopeCLI, ScopeLocal, ScopeProject, ScopeUser}
	if got := scopes(l); !reflect.DeepEqual(got, want) {
		t.Fatalf("layers = %v, want %v", got, want)
	}
	wantSources := []string{d.managedF(), argFile, d.local(), d.proj(), d.user()}
	if got := l.Sources(); !reflect.DeepEqual(got, wantSources) {
		t.Fatalf("Sources() = %v, want %v", got, wantSources)
	}

	// Peel the layers off from the top: each time the next one shows.
	steps := []struct {
		want   string
		remove func()
	}{
		{"managed", func() { os.Remove(d.managedF()) }},
		{"flags", func() { opts.CLI = nil }},
		{"settings-arg", func() { opts.SettingsArg = "" }},
		{"local", func() { os.Remove(d.local()) }},
		{"project", func() { os.Remove(d.proj()) }},
		{"user", func() { os.Remove(d.user()) }},
		{"", func() {}},
	}
	for _, s := range steps {
		if got := mustLoad(t, opts).Settings.Model; got != s.want {
			t.Fatalf("model = %q, want %q", got, s.want)
		}
		s.remove()
	}
	if l := mustLoad(t, opts); len(l.Layers) != 0 || l.Sources() != nil {
		t.Fatalf("with no files, layers = %v", l.Layers)
	}
}

func TestObjectsMergeKeyByKey(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{
  "env": {"A": "user", "B": "user"},
  "providers": {"anthropic": {"apiKey": "sk-user", "models": ["x", "y"]}},
  "sandbox": {"enabled": true},
  "cleanupPeriodDays": 30,
  "permissions": {"defaultMode": "plan"}
}`)
	writeFile(t, d.proj(), `{
  "env": {"B": "project", "C": "project"},
  "providers": {"anthropic": {"baseURL": "https://proxy.example", "models": ["z"]}},
  "sandbox": {"autoAllowBashIfSandboxed": false},
  "permissions": {"defaultMode": "acceptEdits"}
}`)
	s := mustLoad(t, d.options()).Settings

	if want := map[string]string{"A": "user", "B": "project", "C": "project"}; !reflect.DeepEqual(s.Env, want) {
		t.Errorf("env = %v, want %v", s.Env, want)
	}
	p := s.Providers["anthropic"]
	if p.APIKey != "sk-user" || p.BaseURL != "https://proxy.example" {
		t.Errorf("provider = %+v, want user's key and project's base URL", p)
	}
	if !reflect.DeepEqual(p.Models, []string{"z"}) {
		t.Errorf("provider models = %v: an ordinary array comes whole from the highest layer", p.Models)
	}
	if p.Type != "anthropic" {
		t.Errorf("provider type = %q, want the map key", p.Type)
	}
	if s.Sandbox.Enabled == nil || !*s.Sandbox.Enabled || s.Sandbox.AutoAllowBashIfSandboxed == nil || *s.Sandbox.AutoAllowBashIfSandboxed {
		t.Errorf("sandbox = %+v, want enabled from user and autoAllow=false from project", s.Sandbox)
	}
	if s.CleanupPeriodDays == nil || *s.CleanupPeriodDays != 30 {
		t.Errorf("cleanupPeriodDays = %v, want 30 from user", s.CleanupPeriodDays)
	}
	if s.Permissions.DefaultMode != "acceptEdits" {
		t.Errorf("defaultMode = %q, want the project's", s.Permissions.DefaultMode)
	}
}

func TestPermissionListsConcatenate(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.managedF(), `{"permissions": {"deny": ["Bash(curl *)"]}}`)
	writeFile(t, d.user(), `{"permissions": {"allow": ["Read(a)", "Bash(ls *)"], "deny": ["Bash(rm *)"], "additionalDirectories": ["~/docs"]}}`)
	writeFile(t, d.proj(), `{"permissions": {"allow": ["Bash(ls *)", "Bash(make)"], "additionalDirectories": ["../lib"]}}`)
	writeFile(t, d.local(), `{"permissions": {"allow": ["Bash(make)", "Bash(go test *)"], "ask": ["Bash(git push *)"]}}`)
	opts := d.options()
	opts.CLI = &Settings{Permissions: Permissions{Deny: []string{"WebFetch"}}}
	l := mustLoad(t, opts)
	p := l.Settings.Permissions

	check := func(name string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("allow", p.Allow, []string{"Bash(make)", "Bash(go test *)", "Bash(ls *)", "Read(a)"})
	check("deny", p.Deny, []string{"Bash(curl *)", "WebFetch", "Bash(rm *)"})
	check("ask", p.Ask, []string{"Bash(git push *)"})
	check("additionalDirectories", p.AdditionalDirectories, []string{"../lib", "~/docs"})

	var fromLs []Rule
	for _, r := range l.Rules() {
		if r.Rule == "Bash(ls *)" {
			fromLs = append(fromLs, r)
		}
	}
	wantLs := []Rule{
		{List: "allow", Rule: "Bash(ls *)", Scope: ScopeProject, Path: d.proj()},
		{List: "allow", Rule: "Bash(ls *)", Scope: ScopeUser, Path: d.user()},
	}
	if !reflect.DeepEqual(fromLs, wantLs) {
		t.Errorf("Rules() for Bash(ls *) = %+v, want one per source %+v", fromLs, wantLs)
	}
	rules := l.Rules()
	if first := rules[0]; first != (Rule{List: "deny", Rule: "Bash(curl *)", Scope: ScopeManaged, Path: d.managedF()}) {
		t.Errorf("first rule = %+v, want the managed deny", first)
	}
	if r := rules[1]; r.Scope != ScopeCLI || r.Path != "" || r.Rule != "WebFetch" {
		t.Errorf("second rule = %+v, want the flag's deny without a path", r)
	}
}

func TestHooksConcatenateAndServersReplaceWhole(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "user.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]},
  "mcpServers": {"gh": {"command": "gh-mcp", "args": ["--x"]}, "fs": {"command": "fs-mcp"}}
}`)
	writeFile(t, d.proj(), `{
  "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "proj.sh"}]}]},
  "mcpServers": {"gh": {"type": "http", "url": "https://gh.example/mcp"}}
}`)
	s := mustLoad(t, d.options()).Settings

	var hooks map[string][]struct {
		Matcher string `json:"matcher"`
	}
	if err := json.Unmarshal(s.Hooks, &hooks); err != nil {
		t.Fatalf("hooks %s: %v", s.Hooks, err)
	}
	if got := hooks["PreToolUse"]; len(got) != 2 || got[0].Matcher != "Edit" || got[1].Matcher != "Bash" {
		t.Errorf("PreToolUse groups = %+v, want project's Edit then user's Bash", got)
	}
	if len(hooks["Stop"]) != 1 {
		t.Errorf("Stop groups = %v, want the user's one", hooks["Stop"])
	}

	var gh map[string]any
	if err := json.Unmarshal(s.MCPServers["gh"], &gh); err != nil {
		t.Fatal(err)
	}
	if _, mixed := gh["command"]; mixed || gh["url"] != "https://gh.example/mcp" {
		t.Errorf("gh server = %v, want the project's definition alone", gh)
	}
	if string(s.MCPServers["fs"]) != `{"command":"fs-mcp"}` {
		t.Errorf("fs server = %s, want the user's", s.MCPServers["fs"])
	}
}

func TestManagedDropInsMergeAlphabetically(t *testing.T) {
	d := newDirs(t)
	dropIns := filepath.Join(d.managed, "managed-settings.d")
	writeFile(t, d.managedF(), `{"model": "base", "fallbackModel": "base", "env": {"BASE": "1"}}`)
	writeFile(t, filepath.Join(dropIns, "10-first.json"), `{"model": "first", "fallbackModel": "first"}`)
	writeFile(t, filepath.Join(dropIns, "20-second.json"), `{"model": "second", "permissions": {"deny": ["Bash(curl *)"]}}`)
	writeFile(t, filepath.Join(dropIns, ".20-editor-swap.json"), `{broken`)
	writeFile(t, filepath.Join(dropIns, "README.txt"), `not json`)
	writeFile(t, d.user(), `{"model": "user"}`)

	l := mustLoad(t, d.options())
	s := l.Settings
	if s.Model != "second" || s.FallbackModel != "first" || s.Env["BASE"] != "1" {
		t.Errorf("model %q, fallback %q, env %v: want later drop-ins over earlier over the base file", s.Model, s.FallbackModel, s.Env)
	}
	want := []string{filepath.Join(dropIns, "20-second.json"), filepath.Join(dropIns, "10-first.json"), d.managedF(), d.user()}
	if got := l.Sources(); !reflect.DeepEqual(got, want) {
		t.Errorf("Sources() = %v, want %v", got, want)
	}
}

func TestSettingsArg(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.proj(), `{"model": "project", "permissions": {"allow": ["Bash(make)"]}}`)

	t.Run("inline", func(t *testing.T) {
		opts := d.options()
		opts.SettingsArg = ` {"model": "${M:-inline}", "permissions": {"allow": ["Read(x)"]}}`
		l := mustLoad(t, opts)
		if l.Settings.Model != "inline" {
			t.Errorf("model = %q, want inline (expanded)", l.Settings.Model)
		}
		if l.Layers[0].Scope != ScopeCLI || l.Layers[0].Path != "" {
			t.Errorf("first layer = %v %q, want cli without a path", l.Layers[0].Scope, l.Layers[0].Path)
		}
		if got := l.Settings.Permissions.Allow; !reflect.DeepEqual(got, []string{"Read(x)", "Bash(make)"}) {
			t.Errorf("allow = %q", got)
		}
	})
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "ci.json"), `{"model": "from-file"}`)
		t.Chdir(dir)
		opts := d.options()
		opts.SettingsArg = "ci.json"
		l := mustLoad(t, opts)
		if l.Settings.Model != "from-file" {
			t.Errorf("model = %q", l.Settings.Model)
		}
		if got := l.Layers[0].Path; got != filepath.Join(dir, "ci.json") {
			t.Errorf("path = %q, want the absolute file", got)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		opts := d.options()
		opts.SettingsArg = filepath.Join(t.TempDir(), "nope.json")
		if _, err := Load(opts); err == nil || !strings.Contains(err.Error(), "nope.json") {
			t.Errorf("err = %v, want one naming the missing file", err)
		}
	})
	t.Run("malformed inline", func(t *testing.T) {
		opts := d.options()
		opts.SettingsArg = `{"model": }`
		_, err := Load(opts)
		if err == nil || !strings.HasPrefix(err.Error(), "--settings:1:11: invalid character '}'") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestCLIValuesAreNotExpanded(t *testing.T) {
	d := newDirs(t)
	opts := d.options()
	opts.Getenv = envOf(map[string]string{"X": "expanded"})
	opts.CLI = &Settings{Model: "${X}"}
	if got := mustLoad(t, opts).Settings.Model; got != "${X}" {
		t.Errorf("model = %q: a flag's value is already what the user typed", got)
	}
}

func TestUnknownKeysPreserved(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{"statusLine": {"type": "command", "command": "st"}, "Model": "wrong-case",
  "permissions": {"disableAutoMode": "disable", "allow": ["Read"]}, "sandbox": {"network": {"allowLocalBinding": true}}}`)
	writeFile(t, d.proj(), `{"spinnerTipsEnabled": false, "model": "m"}`)
	l := mustLoad(t, d.options())
	s := l.Settings

	if s.Model != "m" {
		t.Errorf("model = %q: keys match exactly, \"Model\" is not \"model\"", s.Model)
	}
	wantExtra := map[string]string{
		"statusLine":         `{"type":"command","command":"st"}`,
		"Model":              `"wrong-case"`,
		"spinnerTipsEnabled": `false`,
	}
	if len(s.Extra) != len(wantExtra) {
		t.Errorf("extra = %v", s.Extra)
	}
	for k, v := range wantExtra {
		if string(s.Extra[k]) != v {
			t.Errorf("extra[%q] = %s, want %s", k, s.Extra[k], v)
		}
	}
	perms, _ := l.Raw["permissions"].(map[string]any)
	if perms["disableAutoMode"] != "disable" {
		t.Errorf("merged Raw permissions = %v, want nested unknown keys kept", perms)
	}
	userRaw := l.Layers[1].Raw
	if userRaw["sandbox"].(map[string]any)["network"].(map[string]any)["allowLocalBinding"] != true {
		t.Errorf("user layer Raw = %v", userRaw)
	}

	// Marshalling keeps them too, so /config can show or save settings whole.
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Settings
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", out, err)
	}
	if !reflect.DeepEqual(back.Extra, s.Extra) || back.Model != "m" || back.Permissions.Allow[0] != "Read" {
		t.Errorf("round trip of %s lost data: %+v", out, back)
	}
}

func TestSandboxNetworkShapes(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{"sandbox": {"network": false}}`)
	if n := mustLoad(t, d.options()).Settings.Sandbox.Network; n.Enabled == nil || *n.Enabled || n.AllowedDomains != nil {
		t.Errorf("network false = %+v", n)
	}
	writeFile(t, d.proj(), `{"sandbox": {"network": {"allowedDomains": ["github.com", "*.npmjs.org"]}}}`)
	n := mustLoad(t, d.options()).Settings.Sandbox.Network
	if n.Enabled != nil || !reflect.DeepEqual(n.AllowedDomains, []string{"github.com", "*.npmjs.org"}) {
		t.Errorf("network object over false = %+v, want the project's object whole", n)
	}
	on := true
	for _, v := range []SandboxNetwork{{Enabled: &on}, {AllowedDomains: []string{"a.example"}}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back SandboxNetwork
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, v) {
			t.Errorf("round trip %s = %+v, %v", b, back, err)
		}
	}
}

func TestTrustedDirectoriesOnlyFromTheUser(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{"trustedDirectories": ["/home/me/src"]}`)
	writeFile(t, d.proj(), `{"trustedDirectories": ["/"]}`)
	writeFile(t, d.local(), `{"trustedDirectories": ["/etc"]}`)
	l := mustLoad(t, d.options())
	if got := l.Settings.TrustedDirectories; !reflect.DeepEqual(got, []string{"/home/me/src"}) {
		t.Errorf("trusted = %q: a repository must not trust itself", got)
	}
	if _, ok := l.Raw["trustedDirectories"]; !ok {
		t.Error("merged Raw lost the user's trustedDirectories")
	}
}

func TestMissingAndUnreadableFiles(t *testing.T) {
	d := newDirs(t)
	l := mustLoad(t, Options{Home: filepath.Join(d.home, "nobody"), ProjectDir: d.project, ManagedDir: d.managed})
	if len(l.Layers) != 0 || l.Settings.Model != "" {
		t.Errorf("missing files gave %+v", l)
	}
	// A folder where the file should be cannot be read: an error, even as root.
	if err := os.MkdirAll(d.proj(), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(d.options())
	if err == nil || !strings.Contains(err.Error(), d.proj()) {
		t.Errorf("err = %v, want one naming %s", err, d.proj())
	}
}

func TestEmptyFileIsEmptySettings(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), "\xEF\xBB\xBF \n")
	l := mustLoad(t, d.options())
	if len(l.Layers) != 1 || l.Layers[0].Scope != ScopeUser {
		t.Errorf("layers = %+v, want the empty user file as a layer", l.Layers)
	}
}

func TestErrorIsTyped(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.local(), "{\n  \"maxThinkingTokens\": \"lots\"\n}")
	_, err := Load(d.options())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	if *e != (Error{Path: d.local(), Line: 2, Column: 24, Key: "maxThinkingTokens", Msg: "expected an integer, found a string"}) {
		t.Errorf("err = %+v", *e)
	}
}
