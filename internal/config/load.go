package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultManagedDir holds administrator policy on Linux, as /etc/claude-code
// does for Claude Code.
const DefaultManagedDir = "/etc/coda"

// LocalSettingsRel is the local settings file relative to the project root,
// the path EnsureGitignored is given.
const LocalSettingsRel = ".coda/settings.local.json"

// UserSettingsPath is <home>/.coda/settings.json.
func UserSettingsPath(home string) string { return filepath.Join(home, ".coda", "settings.json") }

// ProjectSettingsPath is <project>/.coda/settings.json.
func ProjectSettingsPath(projectDir string) string {
	return filepath.Join(projectDir, ".coda", "settings.json")
}

// LocalSettingsPath is <project>/.coda/settings.local.json.
func LocalSettingsPath(projectDir string) string {
	return filepath.Join(projectDir, filepath.FromSlash(LocalSettingsRel))
}

// Options says where settings live. An empty Home or ProjectDir skips the
// layers under it, so nothing reads the real home directory unless told.
type Options struct {
	Home       string
	ProjectDir string
	ManagedDir string // "" means DefaultManagedDir

	CLI         *Settings // built from flags; nil = none
	SettingsArg string    // --settings: inline JSON if it starts with "{", else a file (relative to the working directory); "" = none

	Getenv func(string) (string, bool) // for ${VAR}; nil means os.LookupEnv
}

// Scope names where a layer comes from.
type Scope string

const (
	ScopeManaged Scope = "managed"
	ScopeCLI     Scope = "cli"
	ScopeLocal   Scope = "local"
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
)

// Layer is one source of settings, after ${VAR} expansion.
type Layer struct {
	Scope    Scope
	Path     string // the file; "" for flags and inline --settings JSON
	Settings Settings
	Raw      map[string]any // every key as written, nested unknown keys too
}

// Loaded is the outcome of Load.
type Loaded struct {
	Settings Settings       // all layers merged
	Raw      map[string]any // all layers merged, every key
	Layers   []Layer        // highest precedence first; only sources that exist
}

// Load reads every layer and merges them. Layers, highest first:
//
//  1. managed: <ManagedDir>/managed-settings.d/*.json (the alphabetically
//     last file first, as with systemd drop-ins), then
//     <ManagedDir>/managed-settings.json;
//  2. cli: Options.CLI, then Options.SettingsArg;
//  3. local: <ProjectDir>/.coda/settings.local.json;
//  4. project: <ProjectDir>/.coda/settings.json;
//  5. user: <Home>/.coda/settings.json.
//
// A missing file is skipped, except a --settings file, which the user named.
// An unreadable file, malformed JSON or a value of the wrong type is an
// error naming the file, line and column; the app should refuse to start.
func Load(opts Options) (*Loaded, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	managedDir := opts.ManagedDir
	if managedDir == "" {
		managedDir = DefaultManagedDir
	}

	var (
		l     Loaded
		roots []*node
	)
	add := func(scope Scope, path string, root *node, s Settings) {
		l.Layers = append(l.Layers, Layer{Scope: scope, Path: path, Settings: s, Raw: plain(root).(map[string]any)})
		roots = append(roots, root)
	}
	addFile := func(scope Scope, path string) error {
		root, s, err := readLayer(path, getenv)
		if err != nil || root == nil {
			return err
		}
		add(scope, path, root, s)
		return nil
	}

	managed, err := managedFiles(managedDir)
	if err != nil {
		return nil, err
	}
	for _, path := range managed {
		if err := addFile(ScopeManaged, path); err != nil {
			return nil, err
		}
	}

	if opts.CLI != nil {
		data, err := json.Marshal(opts.CLI)
		if err != nil {
			return nil, fmt.Errorf("command-line settings: %w", err)
		}
		root, s, err := parseLayer("command-line settings", data, nil)
		if err != nil {
			return nil, err
		}
		add(ScopeCLI, "", root, s)
	}
	if arg := strings.TrimSpace(opts.SettingsArg); arg != "" {
		if strings.HasPrefix(arg, "{") {
			root, s, err := parseLayer("--settings", []byte(arg), getenv)
			if err != nil {
				return nil, err
			}
			add(ScopeCLI, "", root, s)
		} else {
			path, err := filepath.Abs(arg)
			if err != nil {
				return nil, fmt.Errorf("--settings %s: %w", arg, err)
			}
			root, s, err := readLayer(path, getenv)
			if err != nil {
				return nil, err
			}
			if root == nil {
				return nil, fmt.Errorf("--settings: %s does not exist", path)
			}
			add(ScopeCLI, path, root, s)
		}
	}

	if opts.ProjectDir != "" {
		if err := addFile(ScopeLocal, LocalSettingsPath(opts.ProjectDir)); err != nil {
			return nil, err
		}
		if err := addFile(ScopeProject, ProjectSettingsPath(opts.ProjectDir)); err != nil {
			return nil, err
		}
	}
	if opts.Home != "" {
		if err := addFile(ScopeUser, UserSettingsPath(opts.Home)); err != nil {
			return nil, err
		}
	}

	var merged *node
	for i, root := range roots {
		if s := l.Layers[i].Scope; s == ScopeProject || s == ScopeLocal {
			root = root.without("trustedDirectories")
		}
		merged = merge(merged, root, nil)
	}
	if merged == nil {
		merged = newObject()
	}
	if err := decodeSettings(merged, &l.Settings); err != nil {
		return nil, fmt.Errorf("merge settings: %w", err) // every layer decoded alone, so a bug
	}
	for name, p := range l.Settings.Providers {
		if p.Type == "" {
			p.Type = name
			l.Settings.Providers[name] = p
		}
	}
	l.Raw = plain(merged).(map[string]any)
	return &l, nil
}

// managedFiles lists the managed policy files, highest precedence first.
func managedFiles(dir string) ([]string, error) {
	dropIns := filepath.Join(dir, "managed-settings.d")
	entries, err := os.ReadDir(dropIns)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read managed settings: %w", err)
	}
	var files []string
	for _, e := range entries { // sorted by name
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		files = append(files, filepath.Join(dropIns, name))
	}
	slices.Reverse(files)
	return append(files, filepath.Join(dir, "managed-settings.json")), nil
}

// readLayer reads and decodes one settings file; a missing file gives a nil
// root and no error.
func readLayer(path string, getenv func(string) (string, bool)) (*node, Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Settings{}, nil
	}
	if err != nil {
		return nil, Settings{}, fmt.Errorf("read settings: %w", err)
	}
	return parseLayer(path, data, getenv)
}

// parseLayer parses, expands (unless getenv is nil) and decodes a document;
// label names it in errors.
func parseLayer(label string, data []byte, getenv func(string) (string, bool)) (*node, Settings, error) {
	var s Settings
	root, err := parse(data)
	if err != nil {
		return nil, s, place(label, data, err)
	}
	if getenv != nil {
		expandNode(root, getenv)
	}
	if err := decodeSettings(root, &s); err != nil {
		return nil, s, place(label, data, err)
	}
	return root, s, nil
}

// Sources lists the settings files in effect, highest precedence first, for
// /status. Flags and inline --settings JSON have no file and are not listed.
func (l *Loaded) Sources() []string {
	var out []string
	for _, layer := range l.Layers {
		if layer.Path != "" && !slices.Contains(out, layer.Path) {
			out = append(out, layer.Path)
		}
	}
	return out
}

// Rule is one permission entry and where it came from. The permission
// engine resolves relative path rules against Path and honours project
// rules only after workspace trust.
type Rule struct {
	List  string // "deny", "ask", "allow" or "additionalDirectories"
	Rule  string // the rule, or the directory for additionalDirectories
	Scope Scope
	Path  string // the settings file; "" for flags and inline --settings
}

// Rules lists every permission entry of every layer: layers highest first,
// within a layer deny, ask, allow, then additionalDirectories, each in file
// order without repeats. The same rule in two layers is listed twice, once
// per source.
func (l *Loaded) Rules() []Rule {
	var out []Rule
	for _, layer := range l.Layers {
		p := layer.Settings.Permissions
		for _, list := range []struct {
			name    string
			entries []string
		}{
			{"deny", p.Deny},
			{"ask", p.Ask},
			{"allow", p.Allow},
			{"additionalDirectories", p.AdditionalDirectories},
		} {
			var seen []string
			for _, r := range list.entries {
				if slices.Contains(seen, r) {
					continue
				}
				seen = append(seen, r)
				out = append(out, Rule{List: list.name, Rule: r, Scope: layer.Scope, Path: layer.Path})
			}
		}
	}
	return out
}
