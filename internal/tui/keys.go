package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
)

const escAgainHint = "Press Esc again to rewind or edit a previous prompt"

// handleKey routes a key to whatever has the focus: the pager, the
// approval dialog, a picker, or the input.
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	now := m.now()
	key := k.String()
	twice := key == m.lastKey && now.Sub(m.lastKeyAt) < doublePress
	m.lastKey, m.lastKeyAt = key, now
	if twice {
		// A third press starts a new pair.
		m.lastKey = ""
	}
	if key != "ctrl+c" && key != "esc" {
		m.hint = ""
	}
	switch {
	case m.pager != nil:
		m.pagerKey(k)
		return nil
	case m.dialog != nil:
		return m.dialogKey(k)
	case m.picker != nil:
		return m.pickerKey(k)
	}

	switch key {
	case "ctrl+c":
		if twice {
			return m.quit()
		}
		m.interrupt()
		m.ed.reset()
		m.pop.close()
		m.hint = "Press Ctrl+C again to exit"
		return nil
	case "ctrl+d":
		if m.ed.empty() {
			return m.quit()
		}
		m.ed.key(k)
	case "esc":
		switch {
		case m.pop.open():
			text := m.ed.String()
			m.popDismissed = &text
			m.pop.close()
		case m.isBusy():
			m.interrupt()
		case m.ed.empty() && twice && m.hint == escAgainHint:
			// Only a pair pressed while idle: the Esc that stopped a turn
			// does not count as the first.
			m.hint = ""
			return m.openRewind()
		case m.ed.empty():
			m.hint = escAgainHint
		}
		return nil
	case "shift+tab":
		m.cycleMode()
		return nil
	case "ctrl+o":
		m.openPager()
		return nil
	case "ctrl+l":
		return tea.ClearScreen
	case "tab":
		m.acceptPopup()
	case "up":
		switch {
		case m.pop.open():
			m.pop.move(-1)
			return nil
		case !m.ed.moveVertical(-1, m.width-4-2):
			if s, ok := m.hist.older(m.ed.String()); ok {
				m.recall(s)
			}
		}
	case "down":
		switch {
		case m.pop.open():
			m.pop.move(1)
			return nil
		case !m.ed.moveVertical(1, m.width-4-2):
			if s, ok := m.hist.newer(); ok {
				m.recall(s)
			}
		}
	case "enter":
		if m.pop.open() {
			return m.enterPopup()
		}
		// A backslash right before the cursor at the end of a line asks
		// for a new line, as in a shell.
		if m.ed.pos > 0 && m.ed.buf[m.ed.pos-1] == '\\' && m.ed.pos == m.ed.lineEnd() {
			m.ed.buf = append(m.ed.buf[:m.ed.pos-1], m.ed.buf[m.ed.pos:]...)
			m.ed.pos--
			m.ed.insert("\n")
			break
		}
		return m.submit()
	default:
		m.ed.key(k)
	}
	return m.refreshPopup()
}

// recall shows a history entry; a recalled command does not open the
// palette, so Up and Down keep walking the history.
func (m *Model) recall(s string) {
	m.ed.set(s)
	m.popDismissed = &s
	m.pop.close()
}

// paste inserts pasted text as it is, newlines included: bracketed paste
// keeps a pasted Enter from sending the prompt.
func (m *Model) paste(s string) tea.Cmd {
	switch {
	case m.dialog != nil:
		if m.dialog.feedback != nil {
			m.dialog.feedback.insert(s)
		}
	case m.picker != nil, m.pager != nil:
	default:
		m.ed.insert(s)
		return m.refreshPopup()
	}
	return nil
}

// submit sends the input: a command, a shell line or a prompt.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.ed.String())
	if text == "" {
		return nil
	}
	m.ed.reset()
	m.pop.close()
	if err := m.hist.add(text, m.now()); err != nil {
		m.notice(noticeWarn, err.Error())
	}
	return m.dispatch(text)
}

// dispatch runs text now, or queues it while something else runs.
func (m *Model) dispatch(text string) tea.Cmd {
	if strings.HasPrefix(text, "!") {
		if m.isBusy() {
			m.queue = append(m.queue, text)
			return nil
		}
		return m.runShell(strings.TrimSpace(text[1:]))
	}
	if name, args, ok := commands.Parse(text); ok {
		cmd, err := commands.Resolve(m.o.Commands, name, args)
		if err != nil {
			m.tr.add(&commandEntry{line: text, output: err.Error(), isErr: true})
			return nil
		}
		if m.isBusy() && !cmd.WhileBusy {
			m.queue = append(m.queue, text)
			return nil
		}
		return m.runCommand(text, cmd, args)
	}
	if m.isBusy() {
		m.queue = append(m.queue, text)
		return nil
	}
	m.tr.add(&userEntry{text: text})
	return m.startRun(text)
}

// next sends what was queued, once nothing runs. Prompts queued in a row
// go as one message.
func (m *Model) next() tea.Cmd {
	if m.isBusy() || len(m.queue) == 0 {
		return nil
	}
	n := 0
	for n < len(m.queue) && plainPrompt(m.queue[n]) {
		n++
	}
	if n == 0 {
		first := m.queue[0]
		m.queue = m.queue[1:]
		return m.dispatch(first)
	}
	text := strings.Join(m.queue[:n], "\n\n")
	m.queue = m.queue[n:]
	return m.dispatch(text)
}

func plainPrompt(s string) bool {
	if strings.HasPrefix(s, "!") {
		return false
	}
	_, _, isCommand := commands.Parse(s)
	return !isCommand
}

// interrupt stops what runs. The partial answer stays on screen; queued
// messages come back into the input so nothing typed is lost.
func (m *Model) interrupt() {
	if m.shellCancel != nil {
		m.shellCancel()
	}
	if m.run == nil {
		return
	}
	if !m.run.interrupted {
		m.run.interrupted = true
		m.run.cancel()
	}
	if m.dialog != nil {
		m.reply(agent.Approval{Allow: false})
	}
	if len(m.queue) > 0 {
		text := strings.Join(m.queue, "\n\n")
		if !m.ed.empty() {
			text += "\n\n" + m.ed.String()
		}
		m.ed.set(text)
		m.queue = nil
	}
}

// editPrevious rewinds the conversation to before the last prompt and
// puts that prompt in the input to be edited and sent again.
func (m *Model) editPrevious() {
	text := ""
	if m.o.Agent != nil {
		conv := m.o.Agent.Conversation()
		msgs := conv.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if p, ok := promptText(msgs[i]); ok {
				conv.Replace(msgs[:i])
				text = p
				m.notice(noticeInfo, "Rewound the conversation to before your last prompt; edit it and press Enter.")
				break
			}
		}
	}
	if text == "" {
		last, ok := m.hist.last()
		if !ok {
			return
		}
		text = last
	}
	m.ed.set(text)
}

// promptText is the text the user typed, if m is a prompt (not tool
// results, reminders or a "!" command).
func promptText(msg llm.Message) (string, bool) {
	if msg.Role != llm.RoleUser || msg.Meta.Reminder || len(msg.Blocks) == 0 {
		return "", false
	}
	t, ok := msg.Blocks[0].(llm.Text)
	if !ok || strings.HasPrefix(t.Text, "<system-reminder>") || strings.HasPrefix(t.Text, "<bash-input>") {
		return "", false
	}
	return t.Text, true
}

// cycleMode moves to the next permission mode.
func (m *Model) cycleMode() {
	next := m.modes[0]
	for i, md := range m.modes {
		if md == m.mode {
			next = m.modes[(i+1)%len(m.modes)]
		}
	}
	m.setMode(next)
}

func (m *Model) setMode(mode string) {
	m.mode = mode
	if m.o.SetMode != nil {
		m.o.SetMode(mode)
	}
}

func (m *Model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	act, ans := m.dialog.key(k, m.now())
	switch act {
	case approvalAnswered:
		m.reply(ans)
	case approvalInterrupt:
		m.reply(agent.Approval{Allow: false})
		m.interrupt()
	}
	return nil
}

// reply answers the open approval dialog and closes it. The reply channel
// holds one answer; a second is dropped rather than blocking the UI.
func (m *Model) reply(a agent.Approval) {
	if m.dialog == nil {
		return
	}
	select {
	case m.dialog.req.Reply <- a:
	default:
	}
	m.dialog = nil
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	value, done := m.picker.key(k)
	if !done {
		return nil
	}
	p := m.picker
	m.picker = nil
	if value == "" {
		return nil
	}
	return m.runPicked(p, value)
}
