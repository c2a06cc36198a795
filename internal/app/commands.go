package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/permission"
	"github.com/coda-cli/coda/internal/prompt"
	"github.com/coda-cli/coda/internal/session"
	"github.com/coda-cli/coda/internal/tools"
)

// appSession is the app's side of the slash commands and the UI: what
// /status, /model, /permissions and /context need from the workspace.
type appSession struct {
	s       *workspace
	o       Options
	catalog *llm.Catalog

	mu       sync.Mutex
	next     *workspace // set up by /resume, taken over when the UI exits
	nextInfo string     // what to tell the user there
}

func newAppSession(o Options, s *workspace) (*appSession, error) {
	cat, err := catalog(s.settings.Settings)
	if err != nil {
		return nil, err
	}
	return &appSession{s: s, o: o, catalog: cat}, nil
}

// dispatchCommand runs a slash command at the start of a -p prompt.
func dispatchCommand(ctx context.Context, o Options, s *workspace, text string) (commands.Outcome, error) {
	sess, err := newAppSession(o, s)
	if err != nil {
		return commands.Outcome{}, err
	}
	return commands.Dispatch(ctx, text, commands.Context{Agent: s.agent, Conv: s.agent.Conversation(),
		Session: sess, Settings: s.settings, Commands: commandRegistry()})
}

// commandRegistry is the slash commands of a session.
func commandRegistry() *commands.Registry {
	return commands.NewRegistry(commands.Builtins()...)
}

func (a *appSession) Info() commands.Info {
	return commands.Info{Version: Version, SessionID: a.s.sessionID, Cwd: a.s.cwd, PermissionMode: string(a.s.gate.Mode())}
}

// settings reloads the settings files, so /permissions and /status show
// rules saved during the session; on a read error the start's stay.
func (a *appSession) settings() *config.Loaded {
	cli := &config.Settings{Model: a.o.Model, FallbackModel: a.o.FallbackModel}
	cli.Permissions.Allow = splitTools(a.o.AllowedTools)
	cli.Permissions.Deny = splitTools(a.o.DisallowedTools)
	cli.Permissions.DefaultMode = a.o.PermissionMode
	loaded, err := config.Load(config.Options{Home: homeDir(a.o), ProjectDir: a.s.cwd, CLI: cli, SettingsArg: a.o.Settings,
		Getenv: func(k string) (string, bool) { v := a.o.Getenv(k); return v, v != "" }})
	if err != nil {
		return a.s.settings
	}
	return loaded
}

// Models lists the catalog's models whose provider is configured.
func (a *appSession) Models() []llm.ModelInfo {
	usable := map[string]bool{}
	var out []llm.ModelInfo
	for _, m := range a.catalog.Models() {
		ok, seen := usable[m.Provider]
		if !seen {
			_, err := newProvider(m.Provider, a.s.settings.Settings, a.o.Getenv)
			ok = err == nil
			usable[m.Provider] = ok
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func (a *appSession) SetModel(name string) (llm.ModelInfo, error) {
	m, err := resolveModel(name, a.s.settings.Settings, a.catalog, a.o.Getenv)
	if err != nil {
		return llm.ModelInfo{}, err
	}
	a.s.agent.SetModel(m)
	a.s.model = m
	return m.Info, nil
}

// AddRule saves the rule to the project's local settings (git-ignored,
// where "allow always" lands too). An allow rule applies at once; ask and
// deny rules from the next session on.
func (a *appSession) AddRule(list, rule string) (string, error) {
	if list == "allow" {
		if err := a.s.gate.engine.AllowForSession(rule); err != nil {
			return "", err
		}
	}
	path := config.LocalSettingsPath(a.s.cwd)
	if err := config.AddPermissionRule(path, list, rule); err != nil {
		return "", err
	}
	// A failure to update .gitignore must not lose the rule just saved.
	_ = config.EnsureGitignored(a.s.cwd, config.LocalSettingsRel)
	if rel, err := filepath.Rel(a.s.cwd, path); err == nil {
		path = rel
	}
	if list != "allow" {
		path += " (applies from the next session)"
	}
	return path, nil
}

func (a *appSession) Compactor() agent.Compactor { return a.s.features.Compact }

// Clear empties the conversation, records that so a resume agrees, and
// lets project instructions and the todo list start over.
func (a *appSession) Clear() error {
	a.s.agent.Conversation().Replace(nil)
	a.s.env.Todos.Set(nil)
	if p := a.s.features.Project; p != nil {
		p.Reset()
	}
	return a.s.sess.Append(session.Record{Type: session.TypeRewind, Time: time.Now(), Rewind: &session.Rewind{Keep: 0}})
}

// ContextParts rebuilds the system prompt as setup built it, for an
// estimate of its size.
func (a *appSession) ContextParts() commands.ContextParts {
	system := prompt.System(prompt.Options{
		Env: prompt.Detect(context.Background(), a.s.cwd, time.Now()), Tools: a.s.registry.Names(),
		Override: a.o.SystemPrompt, Append: a.o.AppendSystemPrompt,
	})
	return commands.ContextParts{System: system, Tools: a.s.registry.Specs()}
}

// setMode follows the UI's permission mode.
func (a *appSession) setMode(mode string) {
	if m, err := permission.ParseMode(mode); err == nil {
		a.s.gate.SetMode(m)
	}
}

// mode is the permission mode in effect (ExitPlanMode changes it too).
func (a *appSession) mode() string { return string(a.s.gate.Mode()) }

// runShell runs a line the user typed after "!" with the Bash tool, in
// the agent's environment (its working directory, its sandbox wrapper).
// The user typed the command, which is the approval; what the rules deny
// stays denied.
func (a *appSession) runShell(ctx context.Context, command string) tools.Result {
	t, ok := a.s.registry.Get("Bash")
	if !ok {
		return tools.Errorf("the Bash tool is turned off by a deny rule")
	}
	input, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return tools.Errorf("%v", err)
	}
	a.s.gate.engine.SetWorkDir(a.s.env.Cwd())
	if d := a.s.gate.engine.Check("Bash", input, false); d.Behavior == permission.Deny {
		return tools.Errorf("denied: %s", d.Reason)
	}
	return t.Run(ctx, tools.Call{ID: "user_shell", Input: input, Env: a.s.env})
}
