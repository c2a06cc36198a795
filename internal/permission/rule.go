package permission

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// RuleSource is one entry of permissions.allow, ask or deny, or of
// --allowedTools / --disallowedTools, and where it came from.
type RuleSource struct {
	List  string // "allow", "ask" or "deny"
	Rule  string // as written: "Bash(npm run test *)", "Read(./.env)", "mcp__github"
	Scope string // "managed", "cli", "local", "project", "user" or "session"
	Path  string // the settings file; "" for flags and session approvals
	// Root is the directory a path rule's leading "/" is relative to. When
	// empty: the project directory, or ~/.coda for user settings, or the
	// settings file's directory for any other file.
	Root string
}

// RuleError reports a rule that is malformed or has no effect.
type RuleError struct {
	Source RuleSource
	Reason string
}

func (e *RuleError) Error() string {
	where := e.Source.Path
	if where == "" {
		where = e.Source.Scope
	}
	if where == "" {
		where = "permission rule"
	}
	return fmt.Sprintf("%s: permissions.%s: rule %q: %s", where, e.Source.List, e.Source.Rule, e.Reason)
}

// specKind is how a rule's specifier is matched.
type specKind int

const (
	specNone   specKind = iota // Tool: every call of the tool
	specBash                   // Bash(npm run *)
	specPath                   // Read(./src/**), Edit(//etc/hosts)
	specDomain                 // WebFetch(domain:example.com)
	specParam                  // Agent(model:opus), Bash(run_in_background:true)
	specName                   // Agent(Explore), Skill(review *)
)

// rule is a parsed permission rule.
type rule struct {
	src     RuleSource
	tool    string         // canonical tool name or tool-name glob
	toolRe  *regexp.Regexp // set when tool holds a '*'
	kind    specKind
	spec    string
	pattern *regexp.Regexp // specBash, specDomain, specName
	path    pathPattern    // specPath
	param   string         // specParam: input field
	value   *regexp.Regexp // specParam: value glob
}

// text is the rule as written, for Decision.Rule.
func (r *rule) text() string { return r.src.Rule }

var (
	toolNameRe  = regexp.MustCompile(`^[A-Za-z_*][A-Za-z0-9_.*-]*$`)
	paramSpecRe = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*):(.*)$`)
)

// bashParams are the Bash input fields a deny/ask rule may match with
// Bash(field:value); anything else before a colon is a command.
var bashParams = map[string]bool{
	"run_in_background": true, "dangerouslyDisableSandbox": true, "timeout": true, "description": true,
}

// pathTools take Read(...)/Edit(...) path rules; rules written with the
// other file tools' names are never consulted, as in Claude Code.
var unconsultedPathTools = map[string]bool{
	"Write": true, "MultiEdit": true, "NotebookEdit": true, "Glob": true, "Grep": true,
}

// canonicalTool maps aliases to the name rules are matched with.
func canonicalTool(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}

// parseRule parses src.Rule. home and project resolve path rules.
func parseRule(src RuleSource, home, project string) (*rule, error) {
	bad := func(format string, args ...any) (*rule, error) {
		return nil, &RuleError{Source: src, Reason: fmt.Sprintf(format, args...)}
	}
	switch src.List {
	case "allow", "ask", "deny":
	default:
		return bad("unknown list %q (want allow, ask or deny)", src.List)
	}
	text := strings.TrimSpace(src.Rule)
	if text == "" {
		return bad("empty rule")
	}
	tool, spec, hasSpec := strings.Cut(text, "(")
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			return bad("missing closing parenthesis")
		}
		spec = strings.TrimSuffix(spec, ")")
		if strings.TrimSpace(spec) == "" {
			return bad("empty specifier: write %s for every call", tool)
		}
	} else if strings.Contains(text, ")") {
		return bad("unbalanced parenthesis")
	}
	if !toolNameRe.MatchString(tool) {
		return bad("%q is not a tool name", tool)
	}
	r := &rule{src: src, tool: canonicalTool(tool), spec: spec}
	if strings.Contains(tool, "*") {
		if hasSpec {
			return bad("a tool-name pattern takes no specifier")
		}
		if src.List == "allow" && !anchoredMCPGlob(tool) {
			return bad("allow patterns over tool names must start with mcp__<server>__; ignored")
		}
		r.toolRe = globRegexp(tool, false)
		return r, nil
	}
	if !hasSpec || spec == "*" {
		return r, nil // every call of the tool
	}
	if strings.HasPrefix(tool, "mcp__") {
		return bad("MCP rules take no specifier: write mcp__server or mcp__server__tool")
	}

	switch r.tool {
	case "Bash":
		if m := paramSpecRe.FindStringSubmatch(spec); m != nil && bashParams[m[1]] {
			return paramRule(r, m[1], m[2])
		}
		r.kind, r.pattern = specBash, bashRegexp(spec)
	case "Read", "Edit":
		p, err := compilePath(spec, src.List == "allow", ruleRoot(src, home, project), home, project)
		if err != nil {
			return bad("%v", err)
		}
		r.kind, r.path = specPath, p
	case "WebFetch":
		domain, ok := strings.CutPrefix(spec, "domain:")
		if !ok || domain == "" {
			return bad("WebFetch takes domain:<host>, e.g. WebFetch(domain:example.com)")
		}
		r.kind, r.pattern = specDomain, domainRegexp(domain)
	case "WebSearch":
		return bad("WebSearch rules take no specifier")
	case "Agent":
		if m := paramSpecRe.FindStringSubmatch(spec); m != nil {
			return paramRule(r, m[1], m[2])
		}
		r.kind, r.pattern = specName, regexp.MustCompile(`^`+regexp.QuoteMeta(spec)+`$`)
	case "Skill":
		r.kind, r.pattern = specName, bashRegexp(spec)
	default:
		if unconsultedPathTools[r.tool] {
			return bad("path rules for %s are never consulted; use Edit(...) or Read(...)", r.tool)
		}
		m := paramSpecRe.FindStringSubmatch(spec)
		if m == nil {
			return bad("%s takes no specifier other than field:value", r.tool)
		}
		return paramRule(r, m[1], m[2])
	}
	return r, nil
}

func paramRule(r *rule, field, value string) (*rule, error) {
	if r.src.List == "allow" {
		return nil, &RuleError{Source: r.src, Reason: "field:value rules only work in deny and ask"}
	}
	r.kind, r.param, r.value = specParam, field, globRegexp(value, false)
	return r, nil
}

// anchoredMCPGlob reports a tool glob with a literal mcp__<server>__ prefix.
func anchoredMCPGlob(tool string) bool {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok {
		return false
	}
	server, _, ok := strings.Cut(rest, "__")
	return ok && server != "" && !strings.Contains(server, "*")
}

// ruleRoot is the directory a rule's leading "/" refers to.
func ruleRoot(src RuleSource, home, project string) string {
	switch {
	case src.Root != "":
		return src.Root
	case src.Scope == "user":
		return filepath.Join(home, ".coda")
	case src.Path != "" && src.Scope != "project" && src.Scope != "local":
		return filepath.Dir(src.Path)
	}
	return project
}

// matchesTool reports whether the rule names tool (before any specifier).
func (r *rule) matchesTool(tool string) bool {
	tool = canonicalTool(tool)
	if r.toolRe != nil {
		return r.toolRe.MatchString(tool)
	}
	if r.tool == tool {
		return true
	}
	// mcp__server covers every tool of the server.
	if strings.HasPrefix(r.tool, "mcp__") && !strings.Contains(strings.TrimPrefix(r.tool, "mcp__"), "__") {
		return strings.HasPrefix(tool, r.tool+"__")
	}
	return false
}

// wholeTool reports a rule that covers every call of its tool(s).
func (r *rule) wholeTool() bool { return r.kind == specNone }

// globRegexp turns a glob where '*' matches any run of characters into an
// anchored regexp.
func globRegexp(glob string, foldCase bool) *regexp.Regexp {
	parts := strings.Split(glob, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	prefix := `(?s)`
	if foldCase {
		prefix = `(?si)`
	}
	return regexp.MustCompile(prefix + `^` + strings.Join(parts, `.*`) + `$`)
}

// bashRegexp compiles a Bash rule: '*' matches anything, a trailing " *"
// (or the legacy ":*") also matches nothing at all, so `ls *` matches
// `ls` and `ls -la` but not `lsof`.
func bashRegexp(spec string) *regexp.Regexp {
	if s, ok := strings.CutSuffix(spec, ":*"); ok {
		spec = s + " *"
	}
	optionalTail := false
	if s, ok := strings.CutSuffix(spec, " *"); ok {
		spec, optionalTail = s, true
	}
	parts := strings.Split(spec, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	expr := `(?s)^` + strings.Join(parts, `.*`)
	if optionalTail {
		expr += `(?: .*)?`
	}
	return regexp.MustCompile(expr + `$`)
}

// domainRegexp compiles a WebFetch domain: "*.example.com" is any
// subdomain (not the apex); '*' elsewhere is one label.
func domainRegexp(domain string) *regexp.Regexp {
	domain = strings.ToLower(domain)
	if rest, ok := strings.CutPrefix(domain, "*."); ok {
		return regexp.MustCompile(`^(?:[^.]+\.)+` + labelGlob(rest) + `$`)
	}
	return regexp.MustCompile(`^` + labelGlob(domain) + `$`)
}

func labelGlob(s string) string {
	parts := strings.Split(s, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, `[^.]*`)
}
