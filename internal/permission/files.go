package permission

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// fileInput holds the path fields of the file tools.
type fileInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
}

// checkFile decides Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep.
func (e *Engine) checkFile(st state, tool string, input json.RawMessage) Decision {
	var in fileInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Decision{Behavior: Deny, Reason: tool + ": input is not a JSON object: " + err.Error()}
	}
	p := in.FilePath
	if p == "" {
		p = in.NotebookPath
	}
	if p == "" {
		p = in.Path
	}
	if p == "" && tool == "Glob" && filepath.IsAbs(in.Pattern) {
		p, _ = doublestar.SplitPattern(filepath.ToSlash(in.Pattern))
	}
	if p == "" {
		if editTools[tool] || tool == "Read" {
			return Decision{Behavior: Deny, Reason: tool + ": no file path given"}
		}
		p = st.workDir
	}
	write := editTools[tool]
	t := resolveTarget(p, st.workDir, e.home)
	v := e.judgePath(st, tool, t, write)
	planFile := v.behavior == pathAllow && v.rule == ""
	if st.mode == ModePlan && write && v.behavior != pathDeny && !planFile {
		return Decision{Behavior: Deny, Reason: "plan mode is read-only: only the plan file may be written"}
	}
	switch v.behavior {
	case pathDeny:
		return Decision{Behavior: Deny, Reason: v.reason, Rule: v.rule}
	case pathAsk, pathProtected:
		return Decision{Behavior: Ask, Reason: v.reason, Rule: v.rule}
	case pathAllow:
		return Decision{Behavior: Allow, Reason: v.reason, Rule: v.rule}
	}

	inside := e.inside(t)
	switch {
	case st.mode == ModeBypass:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	case !write && inside:
		return Decision{Behavior: Allow, Reason: "reads inside the working directories"}
	case !write:
		return Decision{Behavior: Ask, Reason: t.real + " is outside the working directories",
			Suggestions: []string{"Read(" + e.suggestDir(searchDir(tool, t.real)) + ")"}}
	case st.mode == ModeAcceptEdits && inside:
		return Decision{Behavior: Allow, Reason: "acceptEdits mode: edit inside the working directories"}
	}
	reason := tool + " of " + t.abs + " needs approval"
	if !inside {
		reason = t.real + " is outside the working directories"
	}
	return Decision{Behavior: Ask, Reason: reason, Suggestions: []string{"Edit(" + e.suggestDir(filepath.Dir(t.real)) + ")"}}
}

// searchDir is the directory a read suggestion should cover.
func searchDir(tool, p string) string {
	if tool == "Glob" || tool == "Grep" || tool == "LS" {
		return p
	}
	return filepath.Dir(p)
}

type pathBehavior int

const (
	pathUndecided pathBehavior = iota
	pathDeny
	pathProtected // asks in every mode
	pathAsk
	pathAllow
)

type pathVerdict struct {
	behavior pathBehavior
	reason   string
	rule     string
}

// judgePath applies rules, the plan file and protected paths to t, in
// that order; pathUndecided leaves it to the mode.
func (e *Engine) judgePath(st state, tool string, t target, write bool) pathVerdict {
	if r := matchPath(e.deny, "deny", tool, t, write); r != nil {
		return pathVerdict{pathDeny, "denied by rule " + r.text(), r.text()}
	}
	if write && e.planFile != nil && (t.abs == e.planFile.abs || t.real == e.planFile.real) {
		return pathVerdict{pathAllow, "the session's plan file", ""}
	}
	if write && (isProtected(t.abs, e.home) || isProtected(t.real, e.home)) {
		return pathVerdict{pathProtected, t.abs + " is a protected path: writing it always asks", ""}
	}
	if r := matchPath(e.ask, "ask", tool, t, write); r != nil {
		return pathVerdict{pathAsk, "rule " + r.text() + " asks", r.text()}
	}
	if r := matchPath(e.allowRules(st), "allow", tool, t, write); r != nil {
		return pathVerdict{pathAllow, "allowed by rule " + r.text(), r.text()}
	}
	return pathVerdict{}
}

// matchPath finds the first rule of list that covers tool on t. Deny and
// ask rules match when the path as written or its real target matches;
// allow rules need both.
func matchPath(rules []*rule, list, tool string, t target, write bool) *rule {
	for _, r := range rules {
		if !r.coversFile(list, tool, write) {
			continue
		}
		if r.kind == specNone {
			return r
		}
		if r.kind != specPath {
			continue
		}
		a, b := r.path.match(t.abs), r.path.match(t.real)
		if list == "allow" && a && b || list != "allow" && (a || b) {
			return r
		}
	}
	return nil
}

// coversFile reports whether r speaks about tool: Edit rules cover every
// edit tool (and, in allow, reads too); Read rules cover every read tool
// (and, in deny, edits too); other names match exactly.
func (r *rule) coversFile(list, tool string, write bool) bool {
	if r.matchesTool(tool) {
		return true
	}
	if r.toolRe != nil {
		return false
	}
	switch r.tool {
	case "Edit":
		return write || list == "allow"
	case "Read":
		return !write || list == "deny"
	}
	return false
}

// checkWebFetch decides WebFetch by the URL's host.
func (e *Engine) checkWebFetch(st state, input json.RawMessage) Decision {
	var in struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(input, &in)
	host := ""
	if u, err := url.Parse(in.URL); err == nil {
		host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	}
	match := func(rules []*rule) *rule {
		for _, r := range rules {
			if !r.matchesTool("WebFetch") {
				continue
			}
			if r.kind == specNone || r.kind == specDomain && host != "" && r.pattern.MatchString(host) {
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
	if st.mode == ModeBypass {
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	}
	if host == "" {
		return Decision{Behavior: Ask, Reason: "WebFetch of " + in.URL + ": no host in the URL"}
	}
	return Decision{Behavior: Ask, Reason: "fetching from " + host + " needs approval",
		Suggestions: []string{"WebFetch(domain:" + host + ")"}}
}
