// Package config loads coda's layered settings: managed policy, command-line
// flags, local project, shared project and user settings, in that order of
// precedence, in the JSON shapes Claude Code users already write.
//
// Every string value in a settings file may use ${VAR} or ${VAR:-default}.
// ${VAR} of an unset variable expands to "" (so a missing key variable shows
// up as an empty value, not as the literal text ${VAR}); ${VAR:-default}
// gives default when VAR is unset or empty, as in the shell. Anything else
// containing "$" is left alone. Keys never expand, and neither does the
// "hooks" object: hook commands are shell text the shell expands when the
// hook runs, with CODA_PROJECT_DIR and CLAUDE_PROJECT_DIR set for it.
package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/coda-cli/coda/internal/llm"
)

// Settings is one settings file, or all layers merged. JSON keys are spelt
// as Claude Code spells them; keys this type does not name are kept in Extra
// (top level) or in the layer's Raw map (nested), never rejected.
type Settings struct {
	Model         string `json:"model,omitempty"`
	FallbackModel string `json:"fallbackModel,omitempty"`

	// Providers configures model endpoints by name. In merged settings a
	// provider without a type has its name as type ("anthropic", "openai").
	Providers map[string]Provider `json:"providers,omitempty"`
	// Models overrides or adds catalog entries, keyed "provider/model".
	Models map[string]llm.ModelOverride `json:"models,omitempty"`

	Permissions Permissions       `json:"permissions,omitzero"`
	Env         map[string]string `json:"env,omitempty"`
	Sandbox     Sandbox           `json:"sandbox,omitzero"`

	// Hooks is the "hooks" object as written (see PROTOCOLS.md A.2). In
	// merged settings the matcher groups of each event concatenate across
	// layers, highest first, so user and project hooks both run.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// MCPServers holds server definitions by name. A name defined in two
	// layers takes the higher layer's definition whole.
	MCPServers map[string]json.RawMessage `json:"mcpServers,omitempty"`

	CleanupPeriodDays     *int  `json:"cleanupPeriodDays,omitempty"`
	AlwaysThinkingEnabled *bool `json:"alwaysThinkingEnabled,omitempty"`
	MaxThinkingTokens     *int  `json:"maxThinkingTokens,omitempty"`

	// TrustedDirectories are folders the user trusted. Merged settings take
	// them from user, managed and command-line settings only: a repository
	// must not be able to trust itself.
	TrustedDirectories []string `json:"trustedDirectories,omitempty"`

	// Extra holds every other top-level key, as written.
	Extra map[string]json.RawMessage `json:"-"`
}

// Provider is one model endpoint.
type Provider struct {
	Type      string            `json:"type,omitempty"` // "anthropic" | "openai"
	BaseURL   string            `json:"baseURL,omitempty"`
	APIKey    string            `json:"apiKey,omitempty"`
	APIKeyEnv string            `json:"apiKeyEnv,omitempty"` // variable holding the key
	Headers   map[string]string `json:"headers,omitempty"`
	Models    []string          `json:"models,omitempty"`
}

// Permissions is the "permissions" object (PROTOCOLS.md B.1). The rule lists
// and AdditionalDirectories concatenate across layers; use Loaded.Rules to
// learn which file each rule came from.
type Permissions struct {
	Allow                        []string `json:"allow,omitempty"`
	Ask                          []string `json:"ask,omitempty"`
	Deny                         []string `json:"deny,omitempty"`
	AdditionalDirectories        []string `json:"additionalDirectories,omitempty"`
	DefaultMode                  string   `json:"defaultMode,omitempty"`
	DisableBypassPermissionsMode string   `json:"disableBypassPermissionsMode,omitempty"`
}

// Sandbox is the "sandbox" object.
type Sandbox struct {
	Enabled                  *bool          `json:"enabled,omitempty"`
	AutoAllowBashIfSandboxed *bool          `json:"autoAllowBashIfSandboxed,omitempty"`
	Network                  SandboxNetwork `json:"network,omitzero"`
}

// SandboxNetwork is "network": either the shorthand true (any host) or
// false (no network), or Claude Code's object form
// {"allowedDomains": ["example.com", "*.npmjs.org"]} restricting sandboxed
// commands to those hosts.
type SandboxNetwork struct {
	Enabled        *bool    `json:"-"` // set by the true/false shorthand only
	AllowedDomains []string `json:"allowedDomains,omitempty"`
}

func (s *SandboxNetwork) decodeNode(n *node, path keyPath) error {
	*s = SandboxNetwork{}
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		b := n.b
		s.Enabled = &b
		return nil
	case kindObject:
		return decodeStruct(n, reflect.ValueOf(s).Elem(), path)
	}
	return mismatch(n, path, "true, false or an object")
}

// MarshalJSON writes the shorthand when only Enabled is set.
func (s SandboxNetwork) MarshalJSON() ([]byte, error) {
	if s.Enabled != nil && len(s.AllowedDomains) == 0 {
		return json.Marshal(*s.Enabled)
	}
	type object SandboxNetwork // without this method
	return json.Marshal(object(s))
}

// UnmarshalJSON accepts both shapes.
func (s *SandboxNetwork) UnmarshalJSON(data []byte) error {
	n, err := parse(data)
	if err == nil {
		err = s.decodeNode(n, nil)
	}
	return place("", data, err)
}

// UnmarshalJSON decodes with the same rules as Load: exact key names,
// unknown top-level keys kept in Extra, wrong types reported by position.
// It does not expand ${VAR}.
func (s *Settings) UnmarshalJSON(data []byte) error {
	n, err := parse(data)
	if err == nil {
		err = decodeSettings(n, s)
	}
	return place("", data, err)
}

// MarshalJSON writes the set fields and the Extra keys. A named field wins
// over an Extra key of the same name.
func (s Settings) MarshalJSON() ([]byte, error) {
	type fields Settings // without this method
	b, err := json.Marshal(fields(s))
	if err != nil {
		return nil, err
	}
	n, err := parse(b)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(s.Extra))
	for k := range s.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if n.get(k) != nil {
			continue
		}
		v, err := parse(s.Extra[k])
		if err != nil || len(bytes.TrimSpace(s.Extra[k])) == 0 {
			return nil, fmt.Errorf("settings key %q: invalid JSON value", k)
		}
		n.set(k, v)
	}
	return compact(n), nil
}
