// Package app wires coda together: settings -> provider, tools,
// permissions, prompt -> agent, then runs the headless writer or the UI.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/compact"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/headless"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/prompt"
	"github.com/coda-cli/coda/internal/session"
	"github.com/coda-cli/coda/internal/tools"
)

// Version is coda's release.
const Version = "0.1.0"

// Options are the command line's choices.
type Options struct {
	Prompt             string
	Print              bool
	OutputFormat       string
	Verbose            bool
	MaxTurns           int
	MaxBudgetUSD       float64
	Model              string
	FallbackModel      string
	PermissionMode     string
	AllowedTools       []string
	DisallowedTools    []string
	SystemPrompt       string
	AppendSystemPrompt string
	Cwd                string
	AddDirs            []string
	Settings           string
	Continue           bool   // resume the newest session
	Resume             string // session id, or ResumePicker to choose
	ForkSession        bool   // resume into a new session id
	SessionID          string // id for a new session
	// AskTrust asks the user whether to trust a folder whose settings widen
	// permissions; nil answers no. Only interactive sessions ask.
	AskTrust func(dir string, widening []string) bool

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv and Home default to the process's; tests set them.
	Getenv func(string) string
	Home   string
}

// ResumePicker is the Resume value that asks for a picker.
const ResumePicker = "?"

// maxStdinPrompt caps a prompt read from standard input.
const maxStdinPrompt = 10 << 20

// Main runs coda and returns the process exit code.
func Main(ctx context.Context, o Options) int {
	if o.Getenv == nil {
		o.Getenv = lookupEnv
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	code, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(o.Stderr, "coda:", err)
		var ce *ConfigError
		if errors.As(err, &ce) {
			return ExitConfig
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}

func run(ctx context.Context, o Options) (int, error) {
	format, err := headless.ParseFormat(o.OutputFormat)
	if err != nil {
		return ExitConfig, &ConfigError{Msg: err.Error()}
	}
	if o.Print && format == headless.FormatStreamJSON && !o.Verbose {
		// Claude Code insists on this pairing; wrappers written for it pass both.
		return 1, errors.New("When using --print, --output-format=stream-json requires --verbose")
	}
	if !o.Print {
		if o.Resume == ResumePicker {
			id, err := pickSession(ctx, o)
			if err != nil {
				return ExitConfig, err
			}
			if id == "" {
				return 0, nil
			}
			o.Resume = id
		}
		if o.Stdin == nil {
			// Standard input is the terminal: the trust question can be asked.
			o.AskTrust = askTrust(os.Stdin, os.Stderr)
		}
		s, err := setup(ctx, o, false)
		if err != nil {
			return ExitConfig, err
		}
		defer s.close()
		return runInteractive(ctx, o, s)
	}
	text, err := readPrompt(o)
	if err != nil {
		return 1, err
	}
	s, err := setup(ctx, o, true)
	if err != nil {
		return ExitConfig, err
	}
	defer s.close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	var caught atomic.Value // the signal that interrupted the run
	go func() {
		select {
		case sig := <-signals:
			caught.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	w := headless.NewWriter(format, o.Verbose, headless.Info{
		SessionID: s.sessionID, Cwd: s.cwd, Model: s.model.Info.Key(), ModelInfo: s.model.Info,
		Tools: s.registry.Names(), PermissionMode: s.mode, Version: Version,
		SlashCommands: commandRegistry().Names(),
	}, o.Stdout, o.Stderr)
	if err := w.Start(); err != nil {
		return 1, err
	}
	for _, n := range s.notes {
		fmt.Fprintln(o.Stderr, "coda:", n)
	}
	// A leading slash command runs here, never reaching the model as text;
	// a prompt-kind command sends its expansion instead.
	out, err := dispatchCommand(ctx, o, s, text)
	if err != nil {
		return 1, err
	}
	if out.Handled && out.Prompt == "" {
		if err := w.Local(out.Output); err != nil {
			return 1, err
		}
		return 0, w.Flush()
	}
	if out.Handled {
		text = out.Prompt
	}
	for e := range s.agent.Submit(ctx, text) {
		switch e.(type) {
		case agent.TurnComplete, agent.LoopComplete:
			if err := s.sess.Sync(); err != nil {
				fmt.Fprintln(o.Stderr, "coda: save session:", err)
			}
		}
		if err := w.Event(e); err != nil {
			return 1, err
		}
	}
	if err := w.Flush(); err != nil {
		return 1, err
	}
	// As shells report a death by signal: 128 + the signal number.
	switch caught.Load() {
	case syscall.SIGTERM:
		return 143, nil
	case os.Interrupt:
		return 130, nil
	}
	return w.ExitCode(), nil
}

func readPrompt(o Options) (string, error) {
	text := strings.TrimSpace(o.Prompt)
	if text != "" || o.Stdin == nil {
		if text == "" {
			return "", configErrorf("no prompt: pass it as an argument to -p or on standard input")
		}
		return text, nil
	}
	data, err := io.ReadAll(io.LimitReader(o.Stdin, maxStdinPrompt+1))
	if err != nil {
		return "", fmt.Errorf("read prompt from standard input: %w", err)
	}
	if len(data) > maxStdinPrompt {
		return "", fmt.Errorf("prompt on standard input exceeds %d MB", maxStdinPrompt>>20)
	}
	if text = strings.TrimSpace(string(data)); text == "" {
		return "", configErrorf("no prompt: pass it as an argument to -p or on standard input")
	}
	return text, nil
}

// workspace is everything one coda process sets up.
type workspace struct {
	cwd       string
	sessionID string
	mode      string
	model     agent.Model
	registry  *tools.Registry
	env       *tools.Env
	agent     *agent.Agent
	store     *session.Store
	sess      *session.Session
	cleanup   time.Duration
	notes     []string // for the user, once, at start
	gate      *gate
	settings  *config.Loaded
	features  contextFeatures
	logFile   io.Closer
}

func (s *workspace) close() {
	s.env.Close()
	if err := s.sess.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "coda: close session:", err)
	}
	_, _ = s.store.Cleanup(s.cleanup)
	s.logFile.Close()
}

func homeDir(o Options) string {
	if o.Home != "" {
		return o.Home
	}
	home, _ := os.UserHomeDir()
	return home
}

func setup(ctx context.Context, o Options, headless bool) (*workspace, error) {
	cwd, err := workDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	home := homeDir(o)
	cli := &config.Settings{Model: o.Model, FallbackModel: o.FallbackModel}
	cli.Permissions.Allow = splitTools(o.AllowedTools)
	cli.Permissions.Deny = splitTools(o.DisallowedTools)
	cli.Permissions.DefaultMode = o.PermissionMode
	loaded, err := config.Load(config.Options{Home: home, ProjectDir: cwd, CLI: cli, SettingsArg: o.Settings,
		Getenv: func(k string) (string, bool) { v := o.Getenv(k); return v, v != "" }})
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	st := loaded.Settings
	cat, err := catalog(st)
	if err != nil {
		return nil, err
	}
	name := st.Model
	if name == "" {
		if name, err = defaultModel(st, o.Getenv); err != nil {
			return nil, err
		}
	}
	model, err := resolveModel(name, st, cat, o.Getenv)
	if err != nil {
		return nil, err
	}
	var fallback *agent.Model
	if st.FallbackModel != "" {
		fb, err := resolveModel(st.FallbackModel, st, cat, o.Getenv)
		if err != nil {
			return nil, fmt.Errorf("fallback model: %w", err)
		}
		fallback = &fb
	}
	trusted := headless || slices.Contains(st.TrustedDirectories, cwd) || len(wideningSettings(loaded)) == 0
	if !trusted && o.AskTrust != nil && o.AskTrust(cwd, wideningSettings(loaded)) {
		trusted = true
		if err := config.AddTrustedDirectory(config.UserSettingsPath(home), cwd); err != nil {
			fmt.Fprintln(o.Stderr, "coda: remember trust:", err)
		}
	}
	env := tools.NewEnv(cwd, append(additionalDirs(loaded, cwd, trusted), absDirs(cwd, o.AddDirs)...)...)
	store := session.NewStore(home, cwd)
	sess, resumed, notes, err := openSession(store, o)
	if err != nil {
		return nil, err
	}
	ok := false
	var logFile io.Closer = nopCloser{}
	defer func() {
		if !ok {
			sess.Close()
			logFile.Close()
		}
	}()
	perms, err := buildGate(ctx, loaded, cwd, home, env, sess.Dir(), headless, trusted)
	if err != nil {
		return nil, err
	}
	notes = append(perms.warnings, notes...)
	var summarize func(context.Context, string, string) (string, error)
	if name := smallModelName(st, o.Getenv); name != "" {
		small, err := resolveModel(name, st, cat, o.Getenv)
		if err != nil {
			return nil, fmt.Errorf("small model: %w", err)
		}
		summarize = summarizer(small)
	}
	registry := tools.NewRegistry(builtinTools(summarize)...)
	registry.Register(tools.NewExitPlanMode(perms.gate.exitPlan))
	for _, n := range perms.gate.engine.HiddenTools(registry.Names()) {
		registry.Remove(n)
	}
	system := prompt.System(prompt.Options{
		Env: prompt.Detect(ctx, cwd, time.Now()), Tools: registry.Names(),
		Override: o.SystemPrompt, Append: o.AppendSystemPrompt,
	})
	logger, logFile, err := openLog(home, sess.ID())
	if err != nil {
		notes = append(notes, err.Error())
	}
	logger.Info("start", "version", Version, "cwd", cwd, "model", model.Info.Key(), "mode", perms.mode,
		"settings", loaded.Sources(), "headless", headless)
	for _, w := range perms.warnings {
		logger.Warn(w)
	}
	rec := &recorder{sess: sess}
	env.BeforeChange, env.AfterChange = rec.beforeChange, rec.afterChange
	if r := staleReminder(resumed.LastActivity, time.Now()); r != "" {
		env.Remind(r)
	}
	var a *agent.Agent
	features, err := newContextFeatures(ctx, contextInput{
		Cwd: cwd, Home: home, Settings: st, SessionDir: sess.Dir(),
		Model: func() agent.Model { return a.Model() }, Env: env,
		System: system, Tools: registry, Conversation: resumed.Messages,
		OnBoundary: func(b compact.Boundary) {
			if b.Micro {
				// Old tool results were shortened in memory only; the
				// transcript keeps them whole.
				return
			}
			if err := sess.Append(session.Record{Type: session.TypeCompact, Time: time.Now(),
				Compact: &session.Compact{Trigger: b.Trigger, Messages: b.Messages}}); err != nil {
				fmt.Fprintln(o.Stderr, "coda: record compaction:", err)
			}
			a.Emit(agent.CompactBoundary{Trigger: b.Trigger, PreTokens: b.PreTokens})
		},
	})
	if err != nil {
		return nil, err
	}
	a = agent.New(agent.Config{
		Model: model, Fallback: fallback, System: system, Tools: registry, Env: env,
		Conv:     llm.NewConversation(resumed.Messages...),
		MaxTurns: o.MaxTurns, MaxBudgetUSD: o.MaxBudgetUSD, Gate: perms.gate,
		Thinking:  thinkingConfig(st),
		Compactor: features.Compactor, ProcessResults: features.ProcessResults, Reminders: features.Reminders,
		Recorder: rec, Log: logger,
	})
	cleanup := 30 * 24 * time.Hour
	if d := st.CleanupPeriodDays; d != nil && *d > 0 {
		cleanup = time.Duration(*d) * 24 * time.Hour
	}
	ok = true
	mode := string(perms.mode)
	return &workspace{cwd: cwd, sessionID: sess.ID(), mode: mode, model: model,
		registry: registry, env: env, agent: a, store: store, sess: sess, cleanup: cleanup, notes: notes,
		gate: perms.gate, settings: loaded, features: features, logFile: logFile}, nil
}

func thinkingConfig(s config.Settings) *llm.ThinkingConfig {
	if s.AlwaysThinkingEnabled == nil || !*s.AlwaysThinkingEnabled {
		return nil
	}
	budget := 10000
	if s.MaxThinkingTokens != nil && *s.MaxThinkingTokens > 0 {
		budget = *s.MaxThinkingTokens
	}
	return &llm.ThinkingConfig{BudgetTokens: budget}
}

func workDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", configErrorf("working directory %s: %v", dir, err)
	}
	if !info.IsDir() {
		return "", configErrorf("working directory %s is not a directory", dir)
	}
	return abs, nil
}

// additionalDirs are the directories every trusted settings layer adds.
func additionalDirs(loaded *config.Loaded, cwd string, trusted bool) []string {
	var dirs []string
	for _, r := range loaded.Rules() {
		if r.List != "additionalDirectories" {
			continue
		}
		if !trusted && (r.Scope == config.ScopeProject || r.Scope == config.ScopeLocal) {
			continue
		}
		dirs = append(dirs, r.Rule)
	}
	return absDirs(cwd, dirs)
}

func absDirs(base string, dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		out = append(out, filepath.Clean(d))
	}
	return out
}
