package prompt

import (
	"sync"
)

// ReminderSource yields the context one source has for the next user
// message: zero or more texts, each sent as its own <system-reminder>.
// It is called once per user message, from the agent's loop.
type ReminderSource func() []string

// Reminders is the registry of everything that adds context mid-session:
// project instructions, rules on first touch, todo nudges, files changed
// on disk, and later plan mode, hooks and background results. The agent
// appends what Collect returns to the newest user message, so the system
// prompt never changes and the session records exactly what was sent.
type Reminders struct {
	mu      sync.Mutex
	entries []reminderEntry
}

type reminderEntry struct {
	name string
	src  ReminderSource
}

// NewReminders returns an empty registry.
func NewReminders() *Reminders { return &Reminders{} }

// Register adds a source under name. Sources are asked in registration
// order; registering a name again replaces that source in its place.
func (r *Reminders) Register(name string, src ReminderSource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.entries {
		if e.name == name {
			r.entries[i].src = src
			return
		}
	}
	r.entries = append(r.entries, reminderEntry{name: name, src: src})
}

// Unregister removes the source called name, if any.
func (r *Reminders) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.entries {
		if e.name == name {
			r.entries = append(r.entries[:i], r.entries[i+1:]...)
			return
		}
	}
}

// Names lists the registered sources in the order they are asked.
func (r *Reminders) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.entries))
	for i, e := range r.entries {
		out[i] = e.name
	}
	return out
}

// Collect asks every source, in order, and returns their non-empty texts.
// It is the agent's Config.Reminders.
func (r *Reminders) Collect() []string {
	r.mu.Lock()
	entries := append([]reminderEntry(nil), r.entries...)
	r.mu.Unlock()
	var out []string
	for _, e := range entries {
		for _, text := range e.src() {
			if text != "" {
				out = append(out, text)
			}
		}
	}
	return out
}
