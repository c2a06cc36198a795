package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestEnvExpansion(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{
  "env": {"${KEY}": "${TOKEN}", "PLAIN": "$TOKEN", "EMPTY": "[${NOPE}]"},
  "providers": {"local": {"type": "openai", "baseURL": "http://${HOST:-localhost}:${PORT:-11434}/v1",
                          "headers": {"X-Team": "${TEAM:-none}"}}},
  "permissions": {"allow": ["Read(${WORK}/**)"]},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CODA_PROJECT_DIR}/stop.sh"}]}]},
  "statusLine": {"command": "echo ${TOKEN}"},
  "model": "${MODEL:-sonnet}"
}`)
	opts := d.options()
	opts.Getenv = envOf(map[string]string{"TOKEN": "t0k", "PORT": "8080", "TEAM": "", "WORK": "/w", "MODEL": "opus"})
	l := mustLoad(t, opts)
	s := l.Settings

	wantEnv := map[string]string{"${KEY}": "t0k", "PLAIN": "$TOKEN", "EMPTY": "[]"}
	if !reflect.DeepEqual(s.Env, wantEnv) {
		t.Errorf("env = %v, want %v (keys untouched, unset expands to empty)", s.Env, wantEnv)
	}
	p := s.Providers["local"]
	if p.BaseURL != "http://localhost:8080/v1" {
		t.Errorf("baseURL = %q", p.BaseURL)
	}
	if p.Headers["X-Team"] != "none" {
		t.Errorf("header = %q, want the default for an empty variable", p.Headers["X-Team"])
	}
	if s.Permissions.Allow[0] != "Read(/w/**)" || s.Model != "opus" {
		t.Errorf("allow = %q, model = %q", s.Permissions.Allow, s.Model)
	}
	if !strings.Contains(string(s.Hooks), `"${CODA_PROJECT_DIR}/stop.sh"`) {
		t.Errorf("hooks = %s, want the command left for the shell", s.Hooks)
	}
	if got := string(s.Extra["statusLine"]); got != `{"command":"echo t0k"}` {
		t.Errorf("statusLine = %s, want expanded", got)
	}
	if got := l.Layers[0].Raw["model"]; got != "opus" {
		t.Errorf("layer Raw model = %v, want the expanded value", got)
	}
}

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"A": "a", "E": "", "B_2": "b"})
	for in, want := range map[string]string{
		"${A}":             "a",
		"x${A}y${B_2}z":    "xaybz",
		"${MISSING}":       "",
		"${MISSING:-dflt}": "dflt",
		"${E:-dflt}":       "dflt",
		"${A:-dflt}":       "a",
		"${A:-}":           "a",
		"${MISSING:-a b}":  "a b",
		"$A and $${A}":     "$A and $a",
		"${not valid}":     "${not valid}",
		"${1X}":            "${1X}",
		"${}":              "${}",
		"${A":              "${A",
		"${A}${":           "a${",
		"no vars":          "no vars",
	} {
		if got := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
