package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/session"
)

// Resumer is a Session that can switch to another session of the project
// (/resume).
type Resumer interface {
	// Sessions lists the project's sessions, newest activity first.
	Sessions() ([]session.Info, error)
	// Resume opens the session id (or a unique prefix of it), or with
	// fork a new session holding a copy of it, ready to take over. A
	// session another process holds gives a *session.LockedError. The
	// switch happens when the UI exits, which the command asks for.
	Resume(ctx context.Context, id string, fork bool) error
}

// resume is one /resume.
type resume struct {
	c  *Context
	rs Resumer
}

func runResume(ctx context.Context, c *Context) (Result, error) {
	rs, ok := c.Session.(Resumer)
	if !ok {
		return Result{}, errors.New("resuming another session is not available here")
	}
	if c.UI == nil {
		return Result{}, errors.New("/resume is for interactive sessions; start coda with --resume <id> instead")
	}
	r := &resume{c: c, rs: rs}
	if c.Args != "" {
		return r.to(ctx, c.Args, false)
	}
	infos, err := rs.Sessions()
	if err != nil {
		return Result{}, fmt.Errorf("list sessions: %w", err)
	}
	current := c.Session.Info().SessionID
	var others []session.Info
	for _, in := range infos {
		if in.ID != current && in.Messages > 0 {
			others = append(others, in)
		}
	}
	if len(others) == 0 {
		return Result{Output: "No other session of this project to resume."}, nil
	}
	c.UI.Choose("Resume a session", SessionChoices(others, c.now()), func(ctx context.Context, id string) (Result, error) {
		return r.to(ctx, id, false)
	})
	return Result{}, nil
}

// to switches to session id. One that another coda holds can be forked.
func (r *resume) to(ctx context.Context, id string, fork bool) (Result, error) {
	err := r.rs.Resume(ctx, id, fork)
	var locked *session.LockedError
	if errors.As(err, &locked) && !fork {
		holder := ""
		if locked.PID != 0 {
			holder = fmt.Sprintf(" (pid %d)", locked.PID)
		}
		title := fmt.Sprintf("Session %s is open in another coda process%s.\nFork it to continue in a new session with a copy of its conversation?", locked.ID, holder)
		choices := []Choice{
			{Value: "fork", Label: "Fork it into a new session", Key: "f"},
			{Value: "cancel", Label: "Cancel", Key: "n"},
		}
		r.c.UI.Choose(title, choices, func(ctx context.Context, value string) (Result, error) {
			if value != "fork" && !strings.EqualFold(value, "f") {
				return Result{Output: "Not resumed: staying in this session."}, nil
			}
			return r.to(ctx, locked.ID, true)
		})
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	r.c.UI.Exit()
	if fork {
		return Result{Output: fmt.Sprintf("Forking session %s…", id)}, nil
	}
	return Result{Output: fmt.Sprintf("Resuming session %s…", id)}, nil
}

// SessionChoices are the entries of a session picker: the title (the
// first prompt, shortened), then how long ago it was active, its message
// count and git branch.
func SessionChoices(infos []session.Info, now time.Time) []Choice {
	out := make([]Choice, 0, len(infos))
	for _, in := range infos {
		title := oneLine(TypedText(in.Title), 50)
		if title == "" {
			title = "(no prompt)"
		}
		var detail []string
		if when := ago(in.LastActivity, now); when != "" {
			detail = append(detail, when)
		}
		detail = append(detail, plural(in.Messages, "message"))
		if in.GitBranch != "" {
			detail = append(detail, in.GitBranch)
		}
		out = append(out, Choice{Value: in.ID, Label: title, Detail: strings.Join(detail, " · ")})
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
