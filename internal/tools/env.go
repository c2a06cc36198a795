package tools

import (
	"path/filepath"
	"strings"
	"sync"
)

// Env is the per-agent state tools share. Each agent (and later each
// subagent) has its own; nothing here is global.
type Env struct {
	// ProjectDir is the absolute project root; Roots are every directory
	// tools may work in (the project and additional directories).
	ProjectDir string
	Roots      []string

	Files  *FileState
	Shells *Shells
	Todos  *Todos

	// BeforeChange, when set, is called before a tool changes the file at
	// an absolute path (the session checkpoints it for rewind), and
	// AfterChange once the change is written.
	BeforeChange func(abs string) error
	AfterChange  func(abs string)

	// WrapShell, when set, rewrites the argv of every shell command before
	// it starts (the OS sandbox wraps it in bwrap). nil runs commands as is.
	WrapShell func(argv []string) []string

	mu        sync.Mutex
	cwd       string
	reminders []string
}

// NewEnv returns an Env rooted at projectDir (absolute), with extra roots.
func NewEnv(projectDir string, extraRoots ...string) *Env {
	roots := append([]string{projectDir}, extraRoots...)
	return &Env{
		ProjectDir: projectDir,
		Roots:      roots,
		Files:      NewFileState(),
		Shells:     NewShells(),
		Todos:      &Todos{},
		cwd:        projectDir,
	}
}

// Cwd is the working directory Bash calls start in.
func (e *Env) Cwd() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cwd
}

// SetCwd moves the working directory.
func (e *Env) SetCwd(dir string) {
	e.mu.Lock()
	e.cwd = dir
	e.mu.Unlock()
}

// Abs makes path absolute against the working directory and cleans it.
func (e *Env) Abs(path string) string {
	if strings.HasPrefix(path, "~/") {
		// Left to the caller's permission layer to judge; resolve plainly.
		return filepath.Clean(path)
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(e.Cwd(), path)
}

// InRoots reports whether abs lies inside one of the roots.
func (e *Env) InRoots(abs string) bool {
	for _, r := range e.Roots {
		if abs == r || strings.HasPrefix(abs, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Remind queues text for the next request the model sees (as a
// system reminder), e.g. "background shell 3 exited".
func (e *Env) Remind(text string) {
	e.mu.Lock()
	e.reminders = append(e.reminders, text)
	e.mu.Unlock()
}

// TakeReminders returns and clears the queued reminders.
func (e *Env) TakeReminders() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.reminders
	e.reminders = nil
	return r
}

// NoteBeforeChange tells the session a tool is about to change abs.
func (e *Env) NoteBeforeChange(abs string) error {
	if e.BeforeChange == nil {
		return nil
	}
	return e.BeforeChange(abs)
}

// NoteAfterChange tells the session a tool changed abs.
func (e *Env) NoteAfterChange(abs string) {
	if e.AfterChange != nil {
		e.AfterChange(abs)
	}
}

// Close stops everything the Env owns (background shells).
func (e *Env) Close() {
	if e.Shells != nil {
		e.Shells.Close()
	}
}
