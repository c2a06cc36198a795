package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/session"
)

// Prompts lists the user's prompts in the conversation, oldest first, as
// they were typed: the text of the message itself, without the files an
// @ mention attached or the reminders coda added.
func (a *appSession) Prompts() []commands.RewindPoint {
	typed := map[string]string{}
	for _, m := range a.s.agent.Conversation().Messages() {
		if m.Role != llm.RoleUser || m.ID == "" || len(m.Blocks) == 0 {
			continue
		}
		if t, ok := m.Blocks[0].(llm.Text); ok {
			typed[m.ID] = commands.TypedText(t.Text)
		}
	}
	prompts := a.s.sess.Prompts()
	out := make([]commands.RewindPoint, 0, len(prompts))
	for _, p := range prompts {
		if p.ID == "" {
			continue
		}
		text, ok := typed[p.ID]
		if !ok {
			text = commands.TypedText(p.Text)
		}
		out = append(out, commands.RewindPoint{ID: p.ID, Text: text, Time: p.Time})
	}
	return out
}

// RewindConversation cuts the transcript and the agent's conversation
// back to just before the prompt. Back at the very start, the project
// instructions go with the next prompt again, as after /clear.
func (a *appSession) RewindConversation(promptID string) error {
	msgs, err := a.s.sess.RewindConversation(promptID)
	if err != nil {
		return err
	}
	a.s.agent.Conversation().Replace(msgs)
	if len(msgs) == 0 && a.s.features.Project != nil {
		a.s.features.Project.Reset()
	}
	return nil
}

// RewindCode restores the files the agent changed at or after the prompt.
func (a *appSession) RewindCode(promptID string, force bool) ([]string, error) {
	return a.s.sess.RewindCode(promptID, force)
}

// Sessions lists the project's sessions, newest activity first.
func (a *appSession) Sessions() ([]session.Info, error) {
	return a.s.store.List()
}

// Resume sets up the workspace of session id (or, with fork, of a new
// session holding a copy of it) for runInteractive to switch to once the
// UI exits. The chosen session is opened, and locked, before anything of
// the current one is let go: if it cannot be, the user stays where they
// are. The model and permission mode in use carry over.
func (a *appSession) Resume(ctx context.Context, id string, fork bool) error {
	full, err := a.s.store.Resolve(id)
	if err != nil {
		return err
	}
	if full == a.s.sessionID && !fork {
		return fmt.Errorf("session %s is the one open here", full)
	}
	o := a.o
	o.Resume, o.Continue, o.ForkSession, o.SessionID = full, false, fork, ""
	o.AskTrust = nil // answered at the start; a yes was saved
	o.Model = a.s.model.Info.Key()
	o.PermissionMode = a.mode()
	next, err := setup(ctx, o, false)
	if err != nil {
		if locked := lockedBy(a.s.store, full); locked != nil && !fork {
			return locked
		}
		return fmt.Errorf("resume session %s: %w", full, err)
	}
	info := fmt.Sprintf("Resumed session %s.", full)
	if fork {
		info = fmt.Sprintf("Forked session %s into the new session %s.", full, next.sessionID)
	}
	a.mu.Lock()
	old := a.next
	a.next, a.nextInfo = next, info
	a.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

// takeNext returns the workspace Resume set up, if any, with the line
// that tells the user about it, and forgets them.
func (a *appSession) takeNext() (*workspace, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	next, info := a.next, a.nextInfo
	a.next, a.nextInfo = nil, ""
	return next, info
}

// lockedBy tells whether session id could not be opened because another
// process holds it. setup reports that as text; trying the lock again
// recovers the holder's PID for the offer to fork.
func lockedBy(store *session.Store, id string) *session.LockedError {
	sess, _, err := store.Open(id)
	var locked *session.LockedError
	if errors.As(err, &locked) {
		return locked
	}
	if err == nil {
		_ = sess.Close()
	}
	return nil
}
