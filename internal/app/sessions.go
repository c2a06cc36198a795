package app

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/session"
)

// staleAfter is how long a session may rest before the model is told that
// files may have changed since.
const staleAfter = 24 * time.Hour

// recorder writes every message to the session transcript and remembers
// which user prompt the current turn belongs to, for checkpoints.
type recorder struct {
	sess *session.Session

	mu     sync.Mutex
	prompt string
}

func (r *recorder) Record(m llm.Message) error {
	if m.Role == llm.RoleUser && isPrompt(m) {
		r.mu.Lock()
		r.prompt = m.ID
		r.mu.Unlock()
	}
	return r.sess.AppendMessage(m)
}

func (r *recorder) promptID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prompt
}

// beforeChange checkpoints a file before a tool changes it.
func (r *recorder) beforeChange(abs string) error {
	return r.sess.Checkpoint(r.promptID(), abs)
}

func (r *recorder) afterChange(abs string) {
	_ = r.sess.RecordWrite(r.promptID(), abs)
}

// isPrompt reports whether m is something the user typed (not tool
// results, not a reminder coda added).
func isPrompt(m llm.Message) bool {
	if m.Meta.Reminder {
		return false
	}
	for _, b := range m.Blocks {
		if _, ok := b.(llm.ToolResult); ok {
			return false
		}
	}
	return true
}

// openSession creates, resumes or forks the session the options ask for.
// notes collects what the user should hear about the resume.
func openSession(store *session.Store, o Options) (*session.Session, *session.Loaded, []string, error) {
	id := ""
	switch {
	case o.Resume != "" && o.Resume != ResumePicker:
		resolved, err := store.Resolve(o.Resume)
		if err != nil {
			return nil, nil, nil, configErrorf("resume %s: %v", o.Resume, err)
		}
		id = resolved
	case o.Resume == ResumePicker:
		return nil, nil, nil, configErrorf("--resume needs a session id here; list them with: coda sessions")
	case o.Continue:
		latest, err := store.Latest()
		if err != nil && !errors.Is(err, session.ErrNotFound) {
			return nil, nil, nil, fmt.Errorf("find the latest session: %w", err)
		}
		id = latest
	}
	if id == "" {
		var s *session.Session
		var err error
		if o.SessionID != "" {
			s, err = store.CreateWithID(o.SessionID)
		} else {
			s, err = store.Create()
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("create session: %w", err)
		}
		return s, &session.Loaded{}, nil, nil
	}
	var s *session.Session
	var loaded *session.Loaded
	var err error
	if o.ForkSession {
		s, loaded, err = store.Fork(id)
	} else {
		s, loaded, err = store.Open(id)
	}
	if err != nil {
		var locked *session.LockedError
		if errors.As(err, &locked) {
			return nil, nil, nil, configErrorf("%v; continue it in a new session with --fork-session", err)
		}
		return nil, nil, nil, fmt.Errorf("open session %s: %w", id, err)
	}
	var notes []string
	if loaded.Skipped > 0 || loaded.Dropped > 0 {
		notes = append(notes, fmt.Sprintf("session %s: skipped %d damaged lines and dropped %d messages after the last complete tool call",
			s.ID(), loaded.Skipped, loaded.Dropped))
	}
	return s, loaded, notes, nil
}

// staleReminder tells the model when a resumed session was last used.
func staleReminder(last, now time.Time) string {
	if last.IsZero() || now.Sub(last) < staleAfter {
		return ""
	}
	return fmt.Sprintf("This session was resumed; it was last active %s (%d hours ago). Files may have changed since: Read them again before editing.",
		last.Format("2006-01-02 15:04 MST"), int(now.Sub(last).Hours()))
}

// ListSessions prints this project's sessions, newest first.
func ListSessions(o Options, w io.Writer) error {
	store, err := projectStore(o)
	if err != nil {
		return err
	}
	infos, err := store.List()
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		fmt.Fprintln(w, "No sessions in this project yet.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLAST ACTIVITY\tMESSAGES\tSIZE\tBRANCH\tTITLE")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", in.ID, in.LastActivity.Local().Format("2006-01-02 15:04"),
			in.Messages, humanSize(in.Size), in.GitBranch, oneLine(in.Title, 60))
	}
	return tw.Flush()
}

// RemoveSession deletes one session of this project.
func RemoveSession(o Options, id string) error {
	store, err := projectStore(o)
	if err != nil {
		return err
	}
	full, err := store.Resolve(id)
	if err != nil {
		return err
	}
	return store.Remove(full)
}

func projectStore(o Options) (*session.Store, error) {
	cwd, err := workDir(o.Cwd)
	if err != nil {
		return nil, err
	}
	return session.NewStore(homeDir(o), cwd), nil
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
