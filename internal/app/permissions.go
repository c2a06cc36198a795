package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/permission"
	"github.com/coda-cli/coda/internal/sandbox"
	"github.com/coda-cli/coda/internal/tools"
)

// gate adapts the permission engine to the agent: it asks the engine,
// turns "ask" into a denial naming the fix when nobody can be asked, saves
// "allow always" rules, and owns plan mode.
type gate struct {
	engine        *permission.Engine
	env           *tools.Env
	headless      bool
	localSettings string
	projectDir    string
	planFile      string
	allowExitPlan bool

	mu          sync.Mutex
	prePlan     permission.Mode
	approvedFor permission.Mode // mode chosen when the plan was approved
}

func (g *gate) Check(_ context.Context, t tools.Tool, use llm.ToolUse) agent.Verdict {
	if use.Name == "ExitPlanMode" {
		return g.checkExitPlan()
	}
	g.engine.SetWorkDir(g.env.Cwd())
	d := g.engine.Check(use.Name, use.Input, t.ReadOnly())
	switch d.Behavior {
	case permission.Allow:
		return agent.Verdict{Behavior: agent.Allow}
	case permission.Deny:
		return agent.Verdict{Behavior: agent.Deny, Reason: d.Reason}
	}
	if g.headless {
		return agent.Verdict{Behavior: agent.Deny, Reason: headlessDenial(use.Name, d)}
	}
	return agent.Verdict{Behavior: agent.Ask, Reason: d.Reason, Suggestions: d.Suggestions}
}

// headlessDenial explains an "ask" nobody can answer and how to allow it.
func headlessDenial(tool string, d permission.Decision) string {
	allow := tool
	if len(d.Suggestions) > 0 {
		allow = strings.Join(d.Suggestions, ",")
	}
	reason := strings.TrimSuffix(d.Reason, ".")
	if reason == "" {
		reason = tool + " needs approval"
	}
	if d.Hard {
		return reason
	}
	return fmt.Sprintf("%s, and nobody can approve it in headless mode. To allow it, rerun with --allowedTools %q (or add it to permissions.allow in .coda/settings.json), or choose --permission-mode acceptEdits or bypassPermissions.",
		reason, allow)
}

func (g *gate) Remember(use llm.ToolUse, v agent.Verdict, a agent.Approval) {
	if !a.Allow {
		return
	}
	if use.Name == "ExitPlanMode" {
		g.mu.Lock()
		g.approvedFor = permission.Mode(a.Mode)
		g.mu.Unlock()
		return
	}
	if !a.Always {
		return
	}
	for _, rule := range v.Suggestions {
		if err := g.engine.AllowForSession(rule); err != nil {
			continue
		}
		if err := config.AddPermissionRule(g.localSettings, "allow", rule); err == nil {
			_ = config.EnsureGitignored(g.projectDir, config.LocalSettingsRel)
		}
	}
}

// SetMode changes the permission mode; entering plan mode tells the model.
func (g *gate) SetMode(m permission.Mode) {
	prev := g.engine.Mode()
	g.engine.SetMode(m)
	if m == permission.ModePlan && prev != permission.ModePlan {
		g.mu.Lock()
		g.prePlan = prev
		g.mu.Unlock()
		g.env.Remind(planReminder(g.planFile))
	}
}

// Mode is the mode in effect.
func (g *gate) Mode() permission.Mode { return g.engine.Mode() }

func (g *gate) checkExitPlan() agent.Verdict {
	if g.engine.Mode() != permission.ModePlan {
		return agent.Verdict{Behavior: agent.Deny, Reason: "not in plan mode; ExitPlanMode is only for presenting a plan while in plan mode"}
	}
	if g.allowExitPlan {
		return agent.Verdict{Behavior: agent.Allow}
	}
	if g.headless {
		return agent.Verdict{Behavior: agent.Deny, Reason: "the plan needs the user's approval, and nobody can approve it in headless mode; rerun with --allowedTools ExitPlanMode to approve plans automatically"}
	}
	return agent.Verdict{Behavior: agent.Ask, Reason: "approve the plan to leave plan mode and start the work"}
}

// exitPlan leaves plan mode for the mode chosen at approval, else the mode
// before plan mode (never plan itself).
func (g *gate) exitPlan() (string, error) {
	if g.engine.Mode() != permission.ModePlan {
		return "", errors.New("not in plan mode")
	}
	g.mu.Lock()
	next := g.approvedFor
	if next == "" || next == permission.ModePlan {
		next = g.prePlan
	}
	if next == "" || next == permission.ModePlan {
		next = permission.ModeDefault
	}
	g.approvedFor = ""
	g.mu.Unlock()
	g.engine.SetMode(next)
	return string(next), nil
}

func planReminder(planFile string) string {
	return fmt.Sprintf(`Plan mode is active. The user wants you to plan before acting: you may only read and explore (Read, Glob, Grep, read-only shell commands, WebFetch). Do not edit files, change configuration, commit, or run commands that change anything — with one exception: write your plan to the plan file %s (create it with Write, update it with Edit). The plan names the files to change, what changes in each, and how you will verify the result. When the plan is complete, call ExitPlanMode with the plan to ask the user for approval.`, planFile)
}

// permissionSetup is what buildGate decided, for the init line and notices.
type permissionSetup struct {
	gate     *gate
	mode     permission.Mode
	warnings []string
}

// buildGate builds the engine from every settings layer. untrusted drops
// what project and local settings would widen (interactive sessions in a
// folder the user has not trusted).
func buildGate(ctx context.Context, loaded *config.Loaded, cwd, home string, env *tools.Env, sessionDir string, headless, trusted bool) (permissionSetup, error) {
	st := loaded.Settings
	var rules []permission.RuleSource
	allowExitPlan := false
	for _, r := range loaded.Rules() {
		widening := r.List == "allow" || r.List == "additionalDirectories"
		if !trusted && widening && (r.Scope == config.ScopeProject || r.Scope == config.ScopeLocal) {
			continue
		}
		if r.List == "additionalDirectories" {
			continue
		}
		if r.List == "allow" && r.Rule == "ExitPlanMode" {
			allowExitPlan = true
		}
		rules = append(rules, permission.RuleSource{List: r.List, Rule: r.Rule, Scope: string(r.Scope), Path: r.Path})
	}
	// Large tool results are saved in the session folder for the model to
	// Read back; reading them never needs asking.
	rules = append(rules, permission.RuleSource{List: "allow", Rule: "Read(/" + filepath.Join(sessionDir, "tool-results") + "/**)", Scope: "session"})
	modeName := effectiveMode(loaded, trusted)
	mode, err := permission.ParseMode(modeName)
	if err != nil {
		return permissionSetup{}, configErrorf("%v", err)
	}
	if mode == permission.ModeBypass && st.Permissions.DisableBypassPermissionsMode == "disable" {
		return permissionSetup{}, configErrorf("bypassPermissions mode is disabled by policy (permissions.disableBypassPermissionsMode)")
	}
	var warnings []string
	sandboxOn := st.Sandbox.Enabled == nil || *st.Sandbox.Enabled
	if !trusted && !sandboxOn && projectDisablesSandbox(loaded) {
		sandboxOn = true
	}
	sandboxed := false
	if sandboxOn {
		if err := sandbox.Probe(ctx); err != nil {
			if mode == permission.ModeBypass {
				warnings = append(warnings, fmt.Sprintf("the OS sandbox is unavailable (%v): shell commands run unsandboxed in bypassPermissions mode", err))
			} else {
				warnings = append(warnings, fmt.Sprintf("the OS sandbox is unavailable (%v): shell commands will ask for approval", err))
			}
		} else {
			sandboxed = true
			opts := sandbox.Options{ProjectDir: cwd, WritableDirs: append(env.Roots[1:], cacheDirs(home)...), Home: home,
				Protected: permission.ProtectedPaths(cwd, home), Network: networkAllowed(st)}
			env.WrapShell = func(argv []string) []string { return sandbox.Wrap(opts, argv) }
		}
	}
	autoAllow := st.Sandbox.AutoAllowBashIfSandboxed == nil || *st.Sandbox.AutoAllowBashIfSandboxed
	planFile := filepath.Join(sessionDir, "plan.md")
	engine, errs := permission.New(permission.Config{
		ProjectDir: cwd, AdditionalDirs: env.Roots[1:], Home: home, Mode: mode, Rules: rules,
		PlanFile: planFile, SandboxedBash: sandboxed && autoAllow,
	})
	for _, e := range errs {
		warnings = append(warnings, e.Error())
	}
	g := &gate{engine: engine, env: env, headless: headless, localSettings: config.LocalSettingsPath(cwd),
		projectDir: cwd, planFile: planFile, allowExitPlan: allowExitPlan, prePlan: permission.ModeDefault}
	if mode == permission.ModePlan {
		env.Remind(planReminder(planFile))
	}
	return permissionSetup{gate: g, mode: mode, warnings: warnings}, nil
}

// effectiveMode is defaultMode from the highest layer that sets it,
// skipping project and local layers that would widen it when untrusted.
func effectiveMode(loaded *config.Loaded, trusted bool) string {
	for _, l := range loaded.Layers {
		m := l.Settings.Permissions.DefaultMode
		if m == "" {
			continue
		}
		if !trusted && (l.Scope == config.ScopeProject || l.Scope == config.ScopeLocal) && m != "default" && m != "plan" {
			continue
		}
		return m
	}
	return string(permission.ModeDefault)
}

func projectDisablesSandbox(loaded *config.Loaded) bool {
	for _, l := range loaded.Layers {
		if e := l.Settings.Sandbox.Enabled; e != nil && !*e {
			return l.Scope == config.ScopeProject || l.Scope == config.ScopeLocal
		}
	}
	return false
}

// wideningSettings lists what project-level settings would widen, for the
// trust question.
func wideningSettings(loaded *config.Loaded) []string {
	var out []string
	for _, l := range loaded.Layers {
		if l.Scope != config.ScopeProject && l.Scope != config.ScopeLocal {
			continue
		}
		p := l.Settings.Permissions
		for _, r := range p.Allow {
			out = append(out, fmt.Sprintf("allow %s (%s)", r, l.Path))
		}
		for _, d := range p.AdditionalDirectories {
			out = append(out, fmt.Sprintf("additional directory %s (%s)", d, l.Path))
		}
		if m := p.DefaultMode; m != "" && m != "default" && m != "plan" {
			out = append(out, fmt.Sprintf("defaultMode %s (%s)", m, l.Path))
		}
		if e := l.Settings.Sandbox.Enabled; e != nil && !*e {
			out = append(out, fmt.Sprintf("sandbox disabled (%s)", l.Path))
		}
	}
	return out
}

func networkAllowed(st config.Settings) bool {
	n := st.Sandbox.Network
	return (n.Enabled != nil && *n.Enabled) || len(n.AllowedDomains) > 0
}

// cacheDirs are build caches sandboxed commands may write (go build, npm),
// those that exist.
func cacheDirs(home string) []string {
	var out []string
	for _, d := range []string{os.Getenv("GOCACHE"), os.Getenv("GOMODCACHE"), filepath.Join(home, ".cache"),
		filepath.Join(home, "go", "pkg"), filepath.Join(home, ".npm")} {
		if d == "" || slices.Contains(out, d) {
			continue
		}
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			out = append(out, d)
		}
	}
	return out
}
