package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTempFiles fails when a writer left a temporary file beside its target.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestAddPermissionRuleCreatesFile(t *testing.T) {
	d := newDirs(t)
	path := d.local() // .coda/ does not exist yet
	if err := AddPermissionRule(path, "allow", "Bash(make && make test)"); err != nil {
		t.Fatal(err)
	}
	want := `{
  "permissions": {
    "allow": [
      "Bash(make && make test)"
    ]
  }
}
`
	if got := readFile(t, path); got != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
	if got := mustLoad(t, d.options()).Settings.Permissions.Allow; len(got) != 1 || got[0] != "Bash(make && make test)" {
		t.Errorf("loaded allow = %q", got)
	}
	noTempFiles(t, filepath.Dir(path))
}

func TestAddPermissionRuleKeepsOtherKeys(t *testing.T) {
	d := newDirs(t)
	path := d.proj()
	writeFile(t, path, `{"statusLine":{"type":"command","command":"st <x>"},"permissions":{"deny":["Read(.env)"],"defaultMode":"plan","allow":["Read"]},"cleanupPeriodDays":1e2,"env":{}}`)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ list, rule string }{
		{"allow", "Bash(npm run *)"},
		{"deny", "Bash(rm -rf *)"},
		{"ask", "Bash(git push *)"},
		{"allow", "Bash(npm run *)"}, // already there
	} {
		if err := AddPermissionRule(path, step.list, step.rule); err != nil {
			t.Fatal(err)
		}
	}
	want := `{
  "statusLine": {
    "type": "command",
    "command": "st <x>"
  },
  "permissions": {
    "deny": [
      "Read(.env)",
      "Bash(rm -rf *)"
    ],
    "defaultMode": "plan",
    "allow": [
      "Read",
      "Bash(npm run *)"
    ],
    "ask": [
      "Bash(git push *)"
    ]
  },
  "cleanupPeriodDays": 1e2,
  "env": {}
}
`
	if got := readFile(t, path); got != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the file's 0600 kept", fi.Mode().Perm())
	}
}

func TestAddPermissionRuleIsIdempotent(t *testing.T) {
	d := newDirs(t)
	path := d.local()
	// Hand-written layout: a second, identical add must not rewrite it.
	original := "{ \"permissions\": { \"allow\": [\"Read\"] } }"
	writeFile(t, path, original)
	if err := AddPermissionRule(path, "allow", "Read"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != original {
		t.Errorf("file rewritten to %q though the rule was there", got)
	}
}

func TestAddPermissionRuleRefusesToClobber(t *testing.T) {
	d := newDirs(t)
	for _, tc := range []struct{ content, want string }{
		{"{\n  \"permissions\": {\n    \"allow\": [\"Read\",]\n  }\n}", ":3:22: invalid character ']' looking for beginning of value"},
		{`{"permissions": ["Read"]}`, ":1:17: permissions: expected an object, found an array"},
		{`{"permissions": {"deny": "Read"}}`, ":1:26: permissions.deny: expected an array, found a string"},
		{`[]`, ":1:1: settings must be a JSON object, found an array"},
	} {
		path := d.proj()
		writeFile(t, path, tc.content)
		err := AddPermissionRule(path, "deny", "Bash")
		if err == nil || err.Error() != path+tc.want {
			t.Errorf("err = %v\nwant %s%s", err, path, tc.want)
		}
		if got := readFile(t, path); got != tc.content {
			t.Errorf("file changed to %q after an error", got)
		}
	}
	if err := AddPermissionRule(d.proj(), "always", "Bash"); err == nil {
		t.Error("unknown list accepted")
	}
	if err := AddPermissionRule(d.proj(), "allow", " "); err == nil {
		t.Error("empty rule accepted")
	}
}

func TestWritersFollowSymlinks(t *testing.T) {
	d := newDirs(t)
	dotfiles := filepath.Join(t.TempDir(), "dotfiles", "coda-settings.json")
	writeFile(t, dotfiles, `{"model": "opus"}`)
	if err := os.MkdirAll(filepath.Dir(d.user()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, d.user()); err != nil {
		t.Fatal(err)
	}
	if err := AddPermissionRule(d.user(), "allow", "Read"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(d.user()); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if got := readFile(t, dotfiles); !strings.Contains(got, `"Read"`) || !strings.Contains(got, `"opus"`) {
		t.Errorf("link target = %s", got)
	}
}

func TestAddTrustedDirectory(t *testing.T) {
	d := newDirs(t)
	path := d.user()
	writeFile(t, path, `{"model": "opus"}`)
	repo := filepath.Join(d.home, "src", "repo")
	for _, dir := range []string{repo, repo + "/", filepath.Join(repo, "sub", "..")} {
		if err := AddTrustedDirectory(path, dir); err != nil {
			t.Fatal(err)
		}
	}
	want := "{\n  \"model\": \"opus\",\n  \"trustedDirectories\": [\n    \"" + repo + "\"\n  ]\n}\n"
	if got := readFile(t, path); got != want {
		t.Errorf("file =\n%s\nwant\n%s", got, want)
	}

	t.Chdir(d.home)
	if err := AddTrustedDirectory(path, "other"); err != nil {
		t.Fatal(err)
	}
	got := mustLoad(t, Options{Home: d.home, ManagedDir: d.managed}).Settings.TrustedDirectories
	if len(got) != 2 || got[1] != filepath.Join(d.home, "other") {
		t.Errorf("trusted = %q, want a relative folder made absolute", got)
	}
}

func TestEnsureGitignored(t *testing.T) {
	for _, tc := range []struct{ name, before, after string }{
		{"no file", "", LocalSettingsRel + "\n"},
		{"no trailing newline", "node_modules", "node_modules\n" + LocalSettingsRel + "\n"},
		{"present", "dist/\n.coda/settings.local.json\n", "dist/\n.coda/settings.local.json\n"},
		{"present anchored", "/.coda/settings.local.json  \n", "/.coda/settings.local.json  \n"},
		{"crlf", "dist/\r\n", "dist/\r\n" + LocalSettingsRel + "\r\n"},
		{"only similar", "# .coda/settings.local.json.bak\n", "# .coda/settings.local.json.bak\n" + LocalSettingsRel + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".gitignore")
			if tc.name != "no file" {
				writeFile(t, path, tc.before)
			}
			for range 2 {
				if err := EnsureGitignored(dir, LocalSettingsRel); err != nil {
					t.Fatal(err)
				}
			}
			if got := readFile(t, path); got != tc.after {
				t.Errorf(".gitignore = %q, want %q", got, tc.after)
			}
			noTempFiles(t, dir)
		})
	}
}
