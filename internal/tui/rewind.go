package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/commands"
)

// openRewind is Esc twice on an empty input: the /rewind list, whose
// first entry edits the previous prompt. Without a session that can
// rewind, the previous prompt comes back to be edited at once.
func (m *Model) openRewind() tea.Cmd {
	cmd, ok := m.o.Commands.Lookup("rewind")
	if _, canRewind := m.o.Session.(commands.Rewinder); !ok || !canRewind {
		m.editPrevious()
		return nil
	}
	return m.runCommand("", cmd, "")
}

// reload shows the agent's conversation again from its start, after a
// command replaced it (/rewind). What the scrollback holds stays there
// (an inline UI cannot take it back, and a clear-screen races the
// printing): the conversation is printed anew under a fresh header.
func (m *Model) reload() {
	m.tr.clear()
	m.outbox = nil
	m.contextTokens = 0
	m.tr.add(&headerEntry{version: m.o.Version, model: m.modelName(), cwd: m.o.ProjectDir})
	if m.o.Agent != nil {
		m.loadConversation(m.o.Agent.Conversation().Messages())
	}
}
