package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/session"
)

// Rewinder is a Session that can go back to the state just before one of
// the user's prompts (/rewind).
type Rewinder interface {
	// Prompts lists the user's prompts in the conversation, oldest first.
	Prompts() []RewindPoint
	// RewindConversation cuts the agent's conversation back to just
	// before the prompt; the transcript records it, so a resume agrees.
	RewindConversation(promptID string) error
	// RewindCode restores every file the agent changed at or after the
	// prompt to its content just before it and returns the files it
	// changed. Files nobody but the user touched are left alone. Files
	// changed on disk since the agent's edit make it refuse, with a
	// *session.ConflictError listing them, unless force.
	RewindCode(promptID string, force bool) ([]string, error)
}

// RewindPoint is a prompt of the user's, a point /rewind can go back to.
type RewindPoint struct {
	ID   string
	Text string // as the user typed it
	Time time.Time
}

// bashNote is shown on the rewind screens: only the file tools record
// what they change.
const bashNote = "Changes made by Bash commands are not tracked: rewinding does not undo them."

// Values of the rewind pickers.
const (
	rewindEditLast     = "edit"
	rewindBoth         = "both"
	rewindConversation = "conversation"
	rewindCode         = "code"
	answerYes          = "yes"
	answerNo           = "no"
)

// rewind is one /rewind: the screens follow each other through the
// pickers' follow-ups.
type rewind struct {
	c   *Context
	rw  Rewinder
	cwd string
}

func runRewind(_ context.Context, c *Context) (Result, error) {
	rw, ok := c.Session.(Rewinder)
	if !ok {
		return Result{}, errors.New("rewinding is not available here")
	}
	if c.UI == nil {
		return Result{}, errors.New("/rewind is for interactive sessions")
	}
	prompts := rw.Prompts()
	if len(prompts) == 0 {
		return Result{Output: "Nothing to rewind: no prompt in this conversation yet."}, nil
	}
	r := &rewind{c: c, rw: rw, cwd: c.Session.Info().Cwd}
	last := prompts[len(prompts)-1]
	now := c.now()
	choices := []Choice{{Value: rewindEditLast, Label: "Edit your last prompt", Detail: "conversation only; files stay as they are"}}
	for i := len(prompts) - 1; i >= 0; i-- {
		p := prompts[i]
		choices = append(choices, Choice{Value: strconv.Itoa(i), Label: oneLine(p.Text, 70), Detail: ago(p.Time, now)})
	}
	c.UI.Choose("Rewind to before which prompt?\n"+bashNote, choices, func(_ context.Context, value string) (Result, error) {
		if value == rewindEditLast {
			return r.editLast(last)
		}
		i, err := strconv.Atoi(value)
		if err != nil || i < 0 || i >= len(prompts) {
			return Result{}, fmt.Errorf("no prompt %q to rewind to", value)
		}
		return r.askWhat(prompts[i])
	})
	return Result{}, nil
}

// editLast takes the conversation back to before the last prompt and puts
// the prompt in the input, to be edited and sent again.
func (r *rewind) editLast(p RewindPoint) (Result, error) {
	if err := r.rw.RewindConversation(p.ID); err != nil {
		return Result{}, fmt.Errorf("rewind the conversation: %w", err)
	}
	r.c.UI.Reload()
	r.c.UI.SetInput(p.Text)
	return Result{Output: "Rewound the conversation to before your last prompt; edit it and press Enter."}, nil
}

// askWhat asks what to restore to the state before p.
func (r *rewind) askWhat(p RewindPoint) (Result, error) {
	choices := []Choice{
		{Value: rewindBoth, Label: "Restore code and conversation"},
		{Value: rewindConversation, Label: "Restore conversation only", Detail: "files stay as they are"},
		{Value: rewindCode, Label: "Restore code only", Detail: "the conversation stays"},
	}
	title := fmt.Sprintf("Rewind to before “%s”\n%s", oneLine(p.Text, 60), bashNote)
	r.c.UI.Choose(title, choices, func(_ context.Context, value string) (Result, error) {
		return r.apply(p, value, false)
	})
	return Result{}, nil
}

// apply restores what was chosen: the files first, so a refusal leaves
// the conversation as it was too.
func (r *rewind) apply(p RewindPoint, what string, force bool) (Result, error) {
	code := what == rewindBoth || what == rewindCode
	conv := what == rewindBoth || what == rewindConversation
	if !code && !conv {
		return Result{}, fmt.Errorf("unknown rewind choice %q", what)
	}
	var out []string
	if code {
		restored, err := r.rw.RewindCode(p.ID, force)
		var conflict *session.ConflictError
		if errors.As(err, &conflict) && !force {
			r.confirmOverwrite(p, what, conflict.Paths)
			return Result{}, nil
		}
		if err != nil {
			if len(restored) > 0 {
				return Result{}, fmt.Errorf("restore files (restored %s): %w", r.list(restored), err)
			}
			return Result{}, fmt.Errorf("restore files: %w", err)
		}
		switch len(restored) {
		case 0:
			out = append(out, "No file needed restoring.")
		case 1:
			out = append(out, "Restored "+r.list(restored)+".")
		default:
			out = append(out, fmt.Sprintf("Restored %d files: %s.", len(restored), r.list(restored)))
		}
	}
	if conv {
		if err := r.rw.RewindConversation(p.ID); err != nil {
			return Result{Output: strings.Join(out, " ")}, fmt.Errorf("rewind the conversation: %w", err)
		}
		r.c.UI.Reload()
		r.c.UI.SetInput(p.Text)
		out = append([]string{fmt.Sprintf("Rewound the conversation to before “%s”; the prompt is back in the input.", oneLine(p.Text, 50))}, out...)
	}
	return Result{Output: strings.Join(out, " ")}, nil
}

// confirmOverwrite asks before restoring files the user changed after
// coda's edit: saying yes loses those changes.
func (r *rewind) confirmOverwrite(p RewindPoint, what string, paths []string) {
	var b strings.Builder
	b.WriteString("These files changed since coda edited them:")
	for _, path := range paths {
		b.WriteString("\n  " + r.rel(path))
	}
	b.WriteString("\nOverwrite them? [y/N]")
	choices := []Choice{
		{Value: answerNo, Label: "No, keep them", Key: "n"},
		{Value: answerYes, Label: "Yes, overwrite them", Key: "y"},
	}
	r.c.UI.Choose(b.String(), choices, func(_ context.Context, value string) (Result, error) {
		if value != answerYes && !strings.EqualFold(value, "y") {
			return Result{Output: "Rewind cancelled: nothing was changed."}, nil
		}
		return r.apply(p, what, true)
	})
}

func (r *rewind) list(paths []string) string {
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = r.rel(p)
	}
	return strings.Join(rel, ", ")
}

// rel shows path relative to the project when it is inside it.
func (r *rewind) rel(path string) string {
	if r.cwd == "" {
		return path
	}
	if rel, err := filepath.Rel(r.cwd, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return path
}
