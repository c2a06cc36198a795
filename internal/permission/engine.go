// Package permission decides whether a tool call runs, asks the user, or
// is refused.
//
// The layers, in order, fit in one paragraph: a hard deny refuses
// catastrophic shell commands whatever else is configured; then any
// matching deny rule refuses; then some calls always ask, even in
// bypassPermissions mode (writes to protected paths, shell code that
// cannot be read); then any matching ask rule asks; then any matching allow
// rule (or approval for the session) allows; then the mode decides what is
// left: read-only work inside the project runs, edits run in acceptEdits,
// everything runs in bypassPermissions, plan refuses what is not read-only,
// and dontAsk turns every remaining "ask" into a refusal.
package permission

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Config is what the engine needs to know about the session.
type Config struct {
	ProjectDir     string   // the project root; relative paths start from it
	AdditionalDirs []string // more directories file tools may use (--add-dir, additionalDirectories)
	Home           string   // the user's home directory
	Mode           Mode
	Rules          []RuleSource // every settings layer, flags and all
	PlanFile       string       // the session's plan file, writable in plan mode
	// SandboxedBash reports that Bash commands run in the OS sandbox and
	// autoAllowBashIfSandboxed is on: commands no rule denies or asks for
	// run without asking.
	SandboxedBash bool
}

// Engine decides tool calls. It is safe for concurrent use.
type Engine struct {
	project   string   // absolute project directory
	dirs      []string // real paths of the project and additional directories
	home      string
	planFile  *target
	sandboxed bool
	deny, ask []*rule
	allow     []*rule

	mu      sync.RWMutex
	mode    Mode
	session []*rule
	workDir string
}

// New builds an engine. The errors report malformed or ineffective rules
// (each naming the rule and its settings file) and an unknown mode; the
// engine works without those rules.
func New(cfg Config) (*Engine, []error) {
	var errs []error
	project, err := filepath.Abs(cfg.ProjectDir)
	if err != nil || cfg.ProjectDir == "" {
		errs = append(errs, fmt.Errorf("permission: project directory %q: not usable", cfg.ProjectDir))
		project = string(filepath.Separator)
	}
	home := ""
	if cfg.Home != "" {
		home = filepath.Clean(cfg.Home)
	}
	e := &Engine{project: project, home: home, sandboxed: cfg.SandboxedBash, workDir: project}
	e.dirs = append(e.dirs, realPath(project))
	for _, d := range cfg.AdditionalDirs {
		d = expandHome(d, home)
		if !filepath.IsAbs(d) {
			d = filepath.Join(project, d)
		}
		e.dirs = append(e.dirs, realPath(filepath.Clean(d)))
	}
	mode, err := ParseMode(string(cfg.Mode))
	if err != nil {
		errs = append(errs, err)
	}
	e.mode = mode
	if cfg.PlanFile != "" {
		t := resolveTarget(cfg.PlanFile, project, home)
		e.planFile = &t
	}
	for _, src := range cfg.Rules {
		r, err := parseRule(src, home, project)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch src.List {
		case "deny":
			e.deny = append(e.deny, r)
		case "ask":
			e.ask = append(e.ask, r)
		default:
			e.allow = append(e.allow, r)
		}
	}
	return e, errs
}

// SetMode switches the mode (shift+tab, /permissions, ExitPlanMode).
func (e *Engine) SetMode(m Mode) {
	e.mu.Lock()
	e.mode = m
	e.mu.Unlock()
}

// Mode returns the current mode.
func (e *Engine) Mode() Mode {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mode
}

// SetWorkDir tells the engine where the shell now is, for relative paths in
// later commands. It starts at the project directory.
func (e *Engine) SetWorkDir(dir string) {
	e.mu.Lock()
	e.workDir = filepath.Clean(dir)
	e.mu.Unlock()
}

// AllowForSession adds an allow rule for the rest of the session: the
// user's "yes, and don't ask again this session".
func (e *Engine) AllowForSession(rule string) error {
	r, err := parseRule(RuleSource{List: "allow", Rule: rule, Scope: "session", Root: e.project}, e.home, e.project)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, have := range e.session {
		if have.text() == r.text() {
			return nil
		}
	}
	// A new slice: snapshots taken by running checks keep the old one.
	e.session = append(slices.Clip(e.session), r)
	return nil
}

// HiddenTools returns, sorted, the tools of all that a deny rule removes
// entirely (Bash, Bash(*), mcp__server, mcp__*, *): the model is not told
// about them.
func (e *Engine) HiddenTools(all []string) []string {
	var out []string
	for _, t := range all {
		for _, r := range e.deny {
			if r.wholeTool() && r.matchesTool(t) {
				out = append(out, t)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// state is a consistent view of what may change during a session.
type state struct {
	mode    Mode
	session []*rule
	workDir string
}

func (e *Engine) snapshot() state {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return state{mode: e.mode, session: e.session, workDir: e.workDir}
}

func (e *Engine) allowRules(st state) []*rule {
	if len(st.session) == 0 {
		return e.allow
	}
	return append(append([]*rule(nil), e.allow...), st.session...)
}

// Edit tools write the file they name; read tools read a file or search a
// directory.
var (
	editTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}
	readTools = map[string]bool{"Read": true, "Glob": true, "Grep": true, "NotebookRead": true, "LS": true}
)

// Check decides one tool call. readOnly is the tool's own claim that it
// changes nothing; Bash and the file tools are judged by their input.
func (e *Engine) Check(tool string, input json.RawMessage, readOnly bool) Decision {
	st := e.snapshot()
	var d Decision
	switch {
	case tool == "Bash":
		d = e.checkBash(st, input)
	case editTools[tool] || readTools[tool]:
		d = e.checkFile(st, tool, input)
	case tool == "WebFetch":
		d = e.checkWebFetch(st, input)
	default:
		d = e.checkTool(st, tool, input, readOnly)
	}
	if d.Behavior == Ask && st.mode == ModeDontAsk {
		d.Behavior = Deny
		d.Reason = "dontAsk mode refuses what would need approval: " + d.Reason
		d.Suggestions = nil
	}
	return d
}

// checkTool decides a tool with no special knowledge: MCP tools, Agent,
// Skill, TodoWrite...
func (e *Engine) checkTool(st state, tool string, input json.RawMessage, readOnly bool) Decision {
	fields := map[string]any{}
	_ = json.Unmarshal(input, &fields) // malformed input matches only whole-tool rules
	match := func(rules []*rule) *rule {
		for _, r := range rules {
			if r.matchesTool(tool) && r.matchesFields(fields) {
				return r
			}
		}
		return nil
	}
	if r := match(e.deny); r != nil {
		return Decision{Behavior: Deny, Reason: "denied by rule " + r.text(), Rule: r.text()}
	}
	if r := match(e.ask); r != nil {
		return Decision{Behavior: Ask, Reason: "rule " + r.text() + " asks", Rule: r.text()}
	}
	if r := match(e.allowRules(st)); r != nil {
		return Decision{Behavior: Allow, Reason: "allowed by rule " + r.text(), Rule: r.text()}
	}
	switch {
	case st.mode == ModeBypass:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	case readOnly:
		return Decision{Behavior: Allow, Reason: "read-only tool"}
	case st.mode == ModePlan:
		return Decision{Behavior: Deny, Reason: "plan mode allows read-only tools only"}
	}
	return Decision{Behavior: Ask, Reason: tool + " needs approval", Suggestions: []string{tool}}
}

// matchesFields matches a rule's specifier against a generic tool input.
func (r *rule) matchesFields(fields map[string]any) bool {
	switch r.kind {
	case specNone:
		return true
	case specParam:
		v, ok := fields[r.param]
		return ok && r.value.MatchString(fieldString(v))
	case specName:
		key := "subagent_type"
		if r.tool == "Skill" {
			key = "skill"
		}
		s, _ := fields[key].(string)
		return s != "" && r.pattern.MatchString(s)
	}
	return false
}

func fieldString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// inside reports whether t lies in the project or an additional directory.
// The real path decides: a symlink out of the project is outside.
func (e *Engine) inside(t target) bool {
	for _, d := range e.dirs {
		if within(d, t.real) {
			return true
		}
	}
	return false
}

// suggestDir is the rule-style directory for "always allow" suggestions:
// "/src/**" inside the project, "//abs/dir/**" outside.
func (e *Engine) suggestDir(dir string) string {
	if within(e.project, dir) {
		rel, _ := filepath.Rel(e.project, dir)
		if rel == "." {
			return "/**"
		}
		return "/" + filepath.ToSlash(rel) + "/**"
	}
	return "/" + strings.TrimSuffix(filepath.ToSlash(dir), "/") + "/**"
}
