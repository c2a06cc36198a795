package permission

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/coda-cli/coda/internal/shellparse"
)

type bashInput struct {
	Command                   string `json:"command"`
	DangerouslyDisableSandbox bool   `json:"dangerouslyDisableSandbox"`
}

// step is one command of a line with the directory it runs in ("" when a
// cd made it unknown).
type step struct {
	cmd shellparse.Command
	cwd string
}

// checkBash decides a Bash call: every simple command of the line must be
// allowed for the line to run, and one denied command denies the line.
func (e *Engine) checkBash(st state, input json.RawMessage) Decision {
	var in bashInput
	fields := map[string]any{}
	if err := json.Unmarshal(input, &in); err != nil || strings.TrimSpace(in.Command) == "" {
		return Decision{Behavior: Deny, Reason: "Bash needs a command"}
	}
	_ = json.Unmarshal(input, &fields)
	sandboxed := e.sandboxed && !in.DangerouslyDisableSandbox

	if r := e.bashParamRule(e.deny, fields); r != nil {
		return Decision{Behavior: Deny, Reason: "denied by rule " + r.text(), Rule: r.text()}
	}
	cmds, err := shellparse.Parse(in.Command)
	if err != nil {
		if reason, ok := hardDenyText(in.Command); ok {
			return Decision{Behavior: Deny, Reason: "refused: " + reason, Hard: true}
		}
		for _, r := range e.deny {
			if r.matchesTool("Bash") && (r.kind == specNone || r.kind == specBash && r.pattern.MatchString(in.Command)) {
				return Decision{Behavior: Deny, Reason: "denied by rule " + r.text(), Rule: r.text()}
			}
		}
		return Decision{Behavior: Ask, Reason: "the command cannot be parsed, so it always asks: " + err.Error()}
	}
	if reason, ok := hardDeny(cmds, st.workDir, e.home); ok {
		return Decision{Behavior: Deny, Reason: "refused: " + reason, Hard: true}
	}
	steps := trackDirs(cmds, st.workDir, e.home)

	// Deny: rules on any command, and path rules on what the line reads
	// and writes.
	for _, s := range steps {
		if r := e.matchBash(e.deny, s.cmd, false); r != nil {
			return Decision{Behavior: Deny, Reason: "denied by rule " + r.text(), Rule: r.text()}
		}
	}
	for _, s := range steps {
		if d, denied := e.denyPaths(s); denied {
			return d
		}
	}

	// Always ask: what cannot be read or would touch protected paths.
	if reason := e.risk(steps); reason != "" {
		return Decision{Behavior: Ask, Reason: reason}
	}

	if r := e.bashParamRule(e.ask, fields); r != nil {
		return Decision{Behavior: Ask, Reason: "rule " + r.text() + " asks", Rule: r.text()}
	}
	for _, s := range steps {
		if r := e.matchBash(e.ask, s.cmd, false); r != nil {
			return Decision{Behavior: Ask, Reason: "rule " + r.text() + " asks", Rule: r.text()}
		}
	}

	// Allow: each command on its own.
	allow := e.allowRules(st)
	var pending, suggestions []string
	usedRule, readOnlyLine := "", true
	for _, s := range steps {
		a := e.approveCommand(st, s, allow)
		if !a.ok {
			pending = append(pending, a.why)
			if a.suggestion != "" && !contains(suggestions, a.suggestion) && len(suggestions) < 5 {
				suggestions = append(suggestions, a.suggestion)
			}
		}
		if a.rule != "" && usedRule == "" {
			usedRule = a.rule
		}
		readOnlyLine = readOnlyLine && a.readOnly
		for _, w := range e.writeTargets(s) {
			v := e.judgePath(st, "Edit", w, true)
			switch {
			case v.behavior == pathAsk:
				return Decision{Behavior: Ask, Reason: v.reason + " (writes " + w.abs + ")", Rule: v.rule}
			case v.behavior == pathAllow:
				if usedRule == "" {
					usedRule = v.rule
				}
			case sandboxed, e.inside(w) && st.mode == ModeAcceptEdits:
			default:
				pending = append(pending, "write to "+w.abs)
				if sg := "Edit(" + e.suggestDir(path.Dir(w.real)) + ")"; !contains(suggestions, sg) && len(suggestions) < 5 {
					suggestions = append(suggestions, sg)
				}
			}
			readOnlyLine = false
		}
	}
	switch {
	case len(pending) == 0 && (readOnlyLine || st.mode != ModePlan):
		if usedRule != "" {
			return Decision{Behavior: Allow, Reason: "allowed by rule " + usedRule, Rule: usedRule}
		}
		if readOnlyLine {
			return Decision{Behavior: Allow, Reason: "read-only command"}
		}
		return Decision{Behavior: Allow, Reason: "acceptEdits mode: file operations inside the working directories"}
	case st.mode == ModeBypass:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	case st.mode == ModePlan:
		return Decision{Behavior: Deny, Reason: "plan mode allows read-only commands only"}
	case sandboxed:
		return Decision{Behavior: Allow, Reason: "runs in the sandbox"}
	}
	return Decision{Behavior: Ask, Reason: "needs approval: " + strings.Join(pending, "; "), Suggestions: suggestions}
}

// trackDirs pairs each command with the directory it runs in, following cd.
func trackDirs(cmds []shellparse.Command, cwd, home string) []step {
	steps := make([]step, 0, len(cmds))
	for _, c := range cmds {
		steps = append(steps, step{cmd: c, cwd: cwd})
		switch c.Name {
		case "cd":
			cwd = changeDir(c, cwd, home)
		case "pushd", "popd":
			cwd = ""
		}
	}
	return steps
}

// matchBash finds the first rule of rules that matches c. Allow rules
// match the command as written, or with harmless wrappers and variables
// stripped; deny and ask rules also match it with every wrapper and
// variable stripped and the program by its base name.
func (e *Engine) matchBash(rules []*rule, c shellparse.Command, allow bool) *rule {
	forms := commandForms(c, allow)
	for _, r := range rules {
		if !r.matchesTool("Bash") {
			continue
		}
		switch r.kind {
		case specNone:
			return r
		case specBash:
			for _, f := range forms {
				if r.pattern.MatchString(f) {
					return r
				}
			}
		}
	}
	return nil
}

func commandForms(c shellparse.Command, allow bool) []string {
	forms := []string{c.Raw}
	if c.Name == "" {
		return forms
	}
	program := strings.TrimSpace(c.Program + " " + strings.Join(c.Args, " "))
	if allow {
		if safeWrappers(c) && allKnownSafe(c.Assigns) {
			forms = append(forms, program)
		}
		return forms
	}
	forms = append(forms, program, c.Line())
	if len(c.Wrappers) > 0 {
		forms = append(forms, strings.Join(c.Wrappers, " ")+" "+program)
	}
	return forms
}

// bashParamRule matches Bash(field:value) rules against the input.
func (e *Engine) bashParamRule(rules []*rule, fields map[string]any) *rule {
	for _, r := range rules {
		if r.kind == specParam && r.matchesTool("Bash") && r.matchesFields(fields) {
			return r
		}
	}
	return nil
}

// approval is whether one command may run without asking.
type approval struct {
	ok         bool
	rule       string // the allow rule that approved it
	readOnly   bool   // it only reads
	why        string // why it needs approval
	suggestion string // the rule that would approve it
}

// approveCommand decides whether one command of a line may run without
// asking.
func (e *Engine) approveCommand(st state, s step, allow []*rule) approval {
	c := s.cmd
	if c.Container && transparentContainers[c.Name] && safeWrappers(c) && !dangerousAssigns(c.Assigns) {
		return approval{ok: true, readOnly: true} // its script's commands are judged on their own
	}
	if c.Name == "" || isDeclaration(c.Name) {
		// Assignments and redirections only; the writes are judged apart.
		names := c.Assigns
		if isDeclaration(c.Name) {
			names = c.Args
		}
		if !dangerousAssigns(names) {
			return approval{ok: true, readOnly: true}
		}
		return approval{why: c.Raw + " changes how later commands run"}
	}
	if r := e.matchBash(allow, c, true); r != nil {
		return approval{ok: true, rule: r.text()}
	}
	if paths, isRO := readOnlyPaths(c); isRO {
		outside, ok := e.pathsReadable(st, s, paths)
		if ok {
			return approval{ok: true, readOnly: true}
		}
		if outside != "" {
			return approval{why: c.Raw + " reads in " + outside + ", outside the working directories",
				suggestion: "Read(" + e.suggestDir(outside) + ")"}
		}
	}
	if st.mode == ModeAcceptEdits && e.fileOperation(s) {
		return approval{ok: true}
	}
	return approval{why: c.Raw, suggestion: suggestBash(c)}
}

// transparentContainers only run the script they are given, as the same
// user: approving the script's commands approves the line (su is not one).
var transparentContainers = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"eval": true, "env": true, "flock": true, "watch": true, "script": true, "source": true, ".": true,
}

func isDeclaration(name string) bool {
	switch name {
	case "export", "declare", "local", "readonly", "typeset", "nameref":
		return true
	}
	return false
}

var plainWordRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+@-]*$`)

// runnerTools take a script name after "run".
var runnerTools = map[string]bool{"npm": true, "pnpm": true, "yarn": true, "bun": true, "deno": true, "uv": true, "poetry": true, "cargo": true, "just": true}

// suggestBash proposes an allow rule for c: its program and subcommand as
// a prefix, e.g. Bash(npm run test *).
func suggestBash(c shellparse.Command) string {
	if c.Name == "" || c.Opaque || c.Container && len(c.Args) == 0 {
		return ""
	}
	words := append([]string{c.Program}, c.Args...)
	n := 1
	if len(words) > 1 && plainWordRe.MatchString(words[1]) {
		n = 2
		if len(words) > 2 && runnerTools[c.Name] && (words[1] == "run" || words[1] == "exec") && plainWordRe.MatchString(words[2]) {
			n = 3
		}
	}
	prefix := strings.Join(words[:n], " ")
	if n == len(words) {
		return "Bash(" + prefix + ")"
	}
	return "Bash(" + prefix + " *)"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
