package llm

import "sync"

// Conversation owns a message list that one writer (the agent loop) changes
// while readers (the UI) take snapshots.
type Conversation struct {
	mu   sync.RWMutex
	msgs []Message
}

// NewConversation starts a conversation holding msgs.
func NewConversation(msgs ...Message) *Conversation {
	return &Conversation{msgs: append([]Message(nil), msgs...)}
}

// Append adds messages at the end.
func (c *Conversation) Append(msgs ...Message) {
	c.mu.Lock()
	c.msgs = append(c.msgs, msgs...)
	c.mu.Unlock()
}

// Update replaces the message with m.ID, reporting whether it was found.
func (c *Conversation) Update(m Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].ID == m.ID {
			c.msgs[i] = m
			return true
		}
	}
	return false
}

// Messages returns a snapshot. The slice is the caller's; blocks are shared
// and must be treated as read-only.
func (c *Conversation) Messages() []Message {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]Message(nil), c.msgs...)
}

// Len is the number of messages.
func (c *Conversation) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.msgs)
}

// Last returns the newest message, if any.
func (c *Conversation) Last() (Message, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.msgs) == 0 {
		return Message{}, false
	}
	return c.msgs[len(c.msgs)-1], true
}

// Replace swaps the whole list, as compaction and rewind do.
func (c *Conversation) Replace(msgs []Message) {
	c.mu.Lock()
	c.msgs = append([]Message(nil), msgs...)
	c.mu.Unlock()
}
