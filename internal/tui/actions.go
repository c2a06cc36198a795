package tui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// uiRecorder is the commands.UI a command sees. Commands run off the UI
// goroutine, so their calls are recorded and applied when they return.
type uiRecorder struct {
	mu      sync.Mutex
	mode    string
	clear   bool
	exit    bool
	reload  bool
	input   *string
	newMode string
	choose  *picker
}

// uiCalls is what a command asked of the UI while it ran.
type uiCalls struct {
	clear, exit, reload bool
	input               *string
	newMode             string
	choose              *picker
}

// take returns the calls recorded so far and forgets them: a picker's
// follow-up records on the same recorder as the command that opened it.
func (u *uiRecorder) take() uiCalls {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := uiCalls{clear: u.clear, exit: u.exit, reload: u.reload, input: u.input, newMode: u.newMode, choose: u.choose}
	if u.newMode != "" {
		u.mode = u.newMode
	}
	u.clear, u.exit, u.reload, u.input, u.newMode, u.choose = false, false, false, nil, "", nil
	return c
}

func (u *uiRecorder) SetInput(text string) {
	u.mu.Lock()
	u.input = &text
	u.mu.Unlock()
}

func (u *uiRecorder) Reload() {
	u.mu.Lock()
	u.reload = true
	u.mu.Unlock()
}

func (u *uiRecorder) Clear() {
	u.mu.Lock()
	u.clear = true
	u.mu.Unlock()
}

func (u *uiRecorder) PermissionMode() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.newMode != "" {
		return u.newMode
	}
	return u.mode
}

func (u *uiRecorder) SetPermissionMode(mode string) {
	u.mu.Lock()
	u.newMode = mode
	u.mu.Unlock()
}

func (u *uiRecorder) Choose(title string, choices []commands.Choice, then func(context.Context, string) (commands.Result, error)) {
	u.mu.Lock()
	u.choose = newPicker(title, choices, then)
	u.choose.ui = u
	u.mu.Unlock()
}

func (u *uiRecorder) Exit() {
	u.mu.Lock()
	u.exit = true
	u.mu.Unlock()
}

// commandDoneMsg is a finished command (or a picker's follow-up).
type commandDoneMsg struct {
	line string // "" for a picker's follow-up
	busy bool   // the command held the input while it ran
	res  commands.Result
	err  error
	ui   *uiRecorder
}

func (m *Model) commandContext(args string, ui commands.UI) commands.Context {
	c := commands.Context{Args: args, Agent: m.o.Agent, Session: m.o.Session, UI: ui, Commands: m.o.Commands, Now: m.now}
	if m.o.Settings != nil {
		c.Settings = m.o.Settings()
	}
	if m.o.Agent != nil {
		c.Conv = m.o.Agent.Conversation()
	}
	return c
}

// runCommand runs a slash command off the UI goroutine: /compact may talk
// to the model for a while.
func (m *Model) runCommand(line string, cmd *commands.Command, args string) tea.Cmd {
	rec := &uiRecorder{mode: m.mode}
	c := m.commandContext(args, rec)
	busy := !cmd.WhileBusy
	if busy {
		m.busy = line
		if m.busy == "" {
			m.busy = "/" + cmd.Name
		}
	}
	ctx := m.ctx
	return tea.Batch(func() tea.Msg {
		res, err := cmd.Run(ctx, &c)
		return commandDoneMsg{line: line, busy: busy, res: res, err: err, ui: rec}
	}, m.startTicking())
}

// runPicked runs the follow-up of a picker with the chosen value. It
// records on the recorder of the command that opened the picker: the
// follow-up's calls go through the command's Context.
func (m *Model) runPicked(p *picker, value string) tea.Cmd {
	if p.then == nil {
		return nil
	}
	rec := p.ui
	if rec == nil {
		rec = &uiRecorder{}
	}
	rec.mu.Lock()
	rec.mode = m.mode
	rec.mu.Unlock()
	m.busy = p.heading()
	ctx := m.ctx
	then := p.then
	return tea.Batch(func() tea.Msg {
		res, err := then(ctx, value)
		return commandDoneMsg{busy: true, res: res, err: err, ui: rec}
	}, m.startTicking())
}

func (m *Model) onCommandDone(msg commandDoneMsg) tea.Cmd {
	if msg.busy {
		m.busy = ""
	}
	var cmds []tea.Cmd
	calls := msg.ui.take()
	if calls.clear {
		m.tr.clear()
		m.outbox = nil
		if m.o.Env != nil && m.o.Env.Todos != nil {
			m.o.Env.Todos.Set(nil)
		}
		m.todos = nil
		m.contextTokens = 0
		cmds = append(cmds, tea.ClearScreen)
	}
	if calls.reload {
		m.reload()
	}
	if calls.newMode != "" {
		m.setMode(calls.newMode)
	}
	output := msg.res.Output
	isErr := false
	if msg.err != nil {
		output, isErr = msg.err.Error(), true
	}
	switch {
	case msg.line != "":
		m.tr.add(&commandEntry{line: msg.line, output: output, isErr: isErr})
	case isErr:
		m.notice(noticeError, output)
	case output != "":
		m.notice(noticeInfo, output)
	}
	if calls.input != nil {
		m.recall(*calls.input)
	}
	if calls.exit {
		return m.quit()
	}
	if calls.choose != nil {
		m.picker = calls.choose
	}
	if msg.res.Prompt != "" && msg.err == nil {
		if m.isBusy() {
			m.queue = append([]string{msg.res.Prompt}, m.queue...)
		} else {
			cmds = append(cmds, m.startRun(msg.res.Prompt))
		}
	}
	cmds = append(cmds, m.next())
	return tea.Batch(cmds...)
}

// shellDoneMsg is a finished "!" line.
type shellDoneMsg struct {
	entry *shellEntry
	res   tools.Result
}

// runShell runs a "!" line through the Bash tool, as the model's commands
// run (same permission and sandbox path).
func (m *Model) runShell(command string) tea.Cmd {
	if command == "" {
		return nil
	}
	if m.o.RunShell == nil {
		m.notice(noticeError, "running shell commands with ! is not available here")
		return nil
	}
	e := &shellEntry{command: command}
	m.tr.add(e)
	m.busy = "!" + command
	ctx, cancel := context.WithCancel(m.ctx)
	m.shellCancel = cancel
	run := m.o.RunShell
	return tea.Batch(func() tea.Msg {
		defer cancel()
		return shellDoneMsg{entry: e, res: run(ctx, command)}
	}, m.startTicking())
}

// maxShellContext caps the output of a "!" line added to the conversation.
const maxShellContext = 30000

func (m *Model) onShellDone(msg shellDoneMsg) tea.Cmd {
	m.busy = ""
	m.shellCancel = nil
	msg.entry.done, msg.entry.res = true, msg.res
	if m.o.Agent != nil {
		out := msg.res.Text()
		if len(out) > maxShellContext {
			out = out[:maxShellContext/2] + "\n… (output cut) …\n" + out[len(out)-maxShellContext/2:]
		}
		// The model sees what the user ran and what it printed, as Claude
		// Code shows it, so the next prompt can refer to it.
		err := m.o.Agent.AppendMessage(llm.Message{
			ID:   newMessageID(),
			Role: llm.RoleUser,
			Blocks: []llm.Block{
				llm.Text{Text: "<bash-input>" + msg.entry.command + "</bash-input>"},
				llm.Text{Text: "<bash-stdout>" + strings.TrimRight(out, "\n") + "</bash-stdout>"},
			},
			Meta: llm.Meta{Time: m.now(), Status: llm.StatusComplete},
		})
		if err != nil {
			m.notice(noticeWarn, "could not save the shell command to the session: "+err.Error())
		}
	}
	return m.next()
}

func newMessageID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}
