package config

import (
	"strings"
	"testing"
)

func TestMalformedJSONNamesLineAndColumn(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"trailing comma", "{\n  \"model\": \"x\",\n}", ":3:1: invalid character '}' looking for beginning of object key string"},
		{"missing comma", "{\n  \"model\": \"x\"\n  \"fallbackModel\": \"y\"\n}", ":3:3: invalid character '\"' after object key:value pair"},
		{"bad value", "{\"env\": {\"A\": tru}}", ":1:18: invalid character '}' in literal true (expecting 'e')"},
		{"column counts characters", "{\"env\": {\"é\": x}}", ":1:15: invalid character 'x' looking for beginning of value"},
		{"truncated", "{\n  \"model\": \"x\"", ":2:15: unexpected end of JSON input"},
		{"two documents", "{}\n{}", ":2:1: invalid character '{' after top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			writeFile(t, d.proj(), tc.content)
			_, err := Load(d.options())
			if err == nil || err.Error() != d.proj()+tc.want {
				t.Errorf("err = %v\nwant %s%s", err, d.proj(), tc.want)
			}
		})
	}
}

func TestWrongTypesNameKeyAndPlace(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"model a number", "{\n  \"model\": 5\n}", ":2:12: model: expected a string, found a number"},
		{"rule a number", `{"permissions": {"allow": ["Read", 7]}}`, ":1:36: permissions.allow[1]: expected a string, found a number"},
		{"allow an object", `{"permissions": {"allow": {"Read": true}}}`, ":1:27: permissions.allow: expected an array, found an object"},
		{"model override", `{"models": {"openai/qwen3": {"contextWindow": "big"}}}`, `:1:47: models["openai/qwen3"].contextWindow: expected an integer, found a string`},
		{"fractional integer", `{"cleanupPeriodDays": 1.5}`, ":1:23: cleanupPeriodDays: expected an integer, found 1.5"},
		{"bool as string", `{"alwaysThinkingEnabled": "yes"}`, ":1:27: alwaysThinkingEnabled: expected true or false, found a string"},
		{"env value", `{"env": {"A": 1}}`, ":1:15: env.A: expected a string, found a number"},
		{"network", `{"sandbox": {"network": "on"}}`, ":1:25: sandbox.network: expected true, false or an object, found a string"},
		{"provider header", `{"providers": {"p": {"headers": []}}}`, ":1:33: providers.p.headers: expected an object, found an array"},
		{"mcp servers", `{"mcpServers": []}`, ":1:16: mcpServers: expected an object, found an array"},
		{"huge integer", `{"maxThinkingTokens": 1e400}`, ":1:23: maxThinkingTokens: expected an integer, found 1e400"},
		{"huge price", `{"models": {"a/b": {"inputPrice": -1e400}}}`, `:1:35: models["a/b"].inputPrice: -1e400 is out of range`},
		{"int overflow", `{"cleanupPeriodDays": 99999999999999999999}`, ":1:23: cleanupPeriodDays: 99999999999999999999 is out of range"},
		{"not an object", `["model"]`, ":1:1: settings must be a JSON object, found an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			writeFile(t, d.user(), tc.content)
			_, err := Load(d.options())
			if err == nil || err.Error() != d.user()+tc.want {
				t.Errorf("err = %v\nwant %s%s", err, d.user(), tc.want)
			}
		})
	}
}

func TestAcceptedValueForms(t *testing.T) {
	d := newDirs(t)
	writeFile(t, d.user(), `{"cleanupPeriodDays": 3e1, "maxThinkingTokens": 1024.0, "model": null,
  "models": {"openai/q": {"inputPrice": 0.5}}, "hooks": null}`)
	s := mustLoad(t, d.options()).Settings
	if *s.CleanupPeriodDays != 30 || *s.MaxThinkingTokens != 1024 {
		t.Errorf("integers = %d, %d", *s.CleanupPeriodDays, *s.MaxThinkingTokens)
	}
	if p := s.Models["openai/q"].InputPrice; p == nil || *p != 0.5 {
		t.Errorf("inputPrice = %v", p)
	}
	if s.Hooks != nil {
		t.Errorf("hooks = %s, want nil for null", s.Hooks)
	}
}

func TestUnmarshalReportsPlace(t *testing.T) {
	var s Settings
	err := s.UnmarshalJSON([]byte("{\n \"permissions\": {\"deny\": [1]}}"))
	if err == nil || !strings.HasPrefix(err.Error(), "2:27: permissions.deny[0]: expected a string") {
		t.Errorf("err = %v", err)
	}
}
