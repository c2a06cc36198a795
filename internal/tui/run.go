package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// runState is one agent run the UI is showing.
type runState struct {
	cancel      context.CancelFunc
	events      <-chan agent.Event
	started     time.Time
	interrupted bool
	// The entries the current model request streams into.
	answer   *assistantEntry
	thinking *thinkingEntry
	retry    *retryEntry // updated in place while requests are retried
	tools    map[string]*toolEntry
}

// agentEventsMsg carries the events that were ready, in order.
type agentEventsMsg struct {
	run    *runState
	events []agent.Event
	closed bool
}

// maxEventBatch bounds how many waiting events one message carries: a
// burst of deltas becomes one update and one frame.
const maxEventBatch = 128

// waitEvents reads the next events of r.
func waitEvents(r *runState) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-r.events
		if !ok {
			return agentEventsMsg{run: r, closed: true}
		}
		batch := []agent.Event{e}
		for len(batch) < maxEventBatch {
			select {
			case e, ok := <-r.events:
				if !ok {
					return agentEventsMsg{run: r, events: batch, closed: true}
				}
				batch = append(batch, e)
			default:
				return agentEventsMsg{run: r, events: batch}
			}
		}
		return agentEventsMsg{run: r, events: batch}
	}
}

// startRun sends prompt (with its @ attachments) to the agent.
func (m *Model) startRun(prompt string) tea.Cmd {
	if m.o.Agent == nil {
		m.notice(noticeError, "no model is configured")
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	r := &runState{cancel: cancel, started: m.now(), tools: map[string]*toolEntry{}}
	r.events = m.o.Agent.SubmitBlocks(ctx, m.promptBlocks(prompt))
	m.run = r
	return tea.Batch(waitEvents(r), m.startTicking())
}

func (m *Model) onEvents(msg agentEventsMsg) tea.Cmd {
	r := msg.run
	if r != m.run {
		// A run the UI already let go of: drain it so its goroutine ends.
		if msg.closed {
			return nil
		}
		return waitEvents(r)
	}
	var save tea.Cmd
	for _, e := range msg.events {
		if done, ok := e.(agent.LoopComplete); ok {
			// LoopComplete is the last event; the channel closes right
			// after it. Wait for that, so the next Submit starts only once
			// this run has let go of the agent.
			if !msg.closed {
				for range r.events {
				}
			}
			return tea.Batch(m.save(), m.endRun(done))
		}
		if _, ok := e.(agent.TurnComplete); ok {
			save = m.save()
		}
		m.onEvent(r, e)
	}
	if msg.closed {
		return tea.Batch(save, m.endRun(agent.LoopComplete{Reason: agent.StopError, Err: errors.New("the agent stopped without a result")}))
	}
	return tea.Batch(save, waitEvents(r))
}

// save makes the transcript durable off the UI goroutine.
func (m *Model) save() tea.Cmd {
	save := m.o.Save
	if save == nil {
		return nil
	}
	return func() tea.Msg {
		if err := save(); err != nil {
			return saveFailedMsg{err}
		}
		return nil
	}
}

func (m *Model) onEvent(r *runState, e agent.Event) {
	if n, ok := e.(agent.Notice); ok && n.Retry != nil {
		m.onRetry(r, *n.Retry)
		return
	}
	if _, ok := e.(agent.UsageUpdate); !ok && r.retry != nil {
		r.retry.done = true
		r.retry = nil
	}
	switch e := e.(type) {
	case agent.TextDelta:
		m.closeThinking(r)
		if r.answer == nil {
			r.answer = &assistantEntry{}
			m.tr.add(r.answer)
		}
		r.answer.s.append(e.Text)
	case agent.ThinkingDelta:
		if r.thinking == nil {
			r.thinking = &thinkingEntry{started: m.now()}
			m.tr.add(r.thinking)
		}
		r.thinking.text.WriteString(e.Text)
	case agent.StreamReset:
		m.resetStream(r)
	case agent.MessageAppended:
		if e.Message.Role == llm.RoleAssistant {
			m.finishMessage(r, e.Message)
		}
	case agent.ToolStarted:
		m.closeStream(r)
		m.toolEntry(r, e.ID, e.Name, e.Input)
	case agent.ToolFinished:
		t := m.toolEntry(r, e.ID, e.Name, e.Input)
		t.done, t.res, t.dur = true, e.Result, e.Duration
		if e.Name == "TodoWrite" {
			m.refreshTodos()
		}
		if d, ok := e.Result.Display.(tools.PlanDisplay); ok && d.Mode != "" {
			// The plan's approval chose the mode the work continues in.
			m.mode = d.Mode
		}
		m.refreshShells()
	case agent.ApprovalRequest:
		m.closeStream(r)
		m.dialog = newApproval(e, m.now(), m.o.ProjectDir)
		m.pop.close()
	case agent.UsageUpdate:
		m.usage, m.cost, m.contextTokens = e.Total, e.CostUSD, e.ContextTokens
	case agent.Notice:
		m.notice(noticeWarn, e.Text)
	case agent.ErrorEvent:
		m.closeStream(r)
		m.notice(noticeError, "Error: "+e.Err.Error())
	}
}

// onRetry shows a retry as one line that counts up.
func (m *Model) onRetry(r *runState, info agent.RetryInfo) {
	cause := info.Err
	if info.Status != 0 {
		cause = fmt.Sprintf("%s (%d)", cause, info.Status)
	}
	text := fmt.Sprintf("%s · retrying in %s (attempt %d of %d)", cause, shortDuration(info.Delay), info.Attempt+1, info.MaxRetries+1)
	if r.retry == nil {
		r.retry = &retryEntry{}
		m.tr.add(r.retry)
	}
	r.retry.text = text
}

// toolEntry finds the entry of a call, adding it when the call is new.
func (m *Model) toolEntry(r *runState, id, name string, input []byte) *toolEntry {
	if t, ok := r.tools[id]; ok {
		return t
	}
	t := &toolEntry{id: id, name: name, input: input, started: m.now()}
	r.tools[id] = t
	m.tr.add(t)
	return t
}

func (m *Model) closeThinking(r *runState) {
	if r.thinking != nil {
		r.thinking.close(m.now())
		r.thinking = nil
	}
}

// closeStream ends the entries of the current request.
func (m *Model) closeStream(r *runState) {
	m.closeThinking(r)
	if r.answer != nil {
		r.answer.close()
		r.answer = nil
	}
}

// finishMessage closes the streamed entries with the final message. A
// provider that did not stream its text still gets it shown.
func (m *Model) finishMessage(r *runState, msg llm.Message) {
	streamed := r.answer != nil || r.thinking != nil
	m.closeStream(r)
	if streamed {
		return
	}
	for _, b := range msg.Blocks {
		switch b := b.(type) {
		case llm.Thinking:
			t := &thinkingEntry{started: m.now()}
			t.text.WriteString(b.Thinking)
			t.close(m.now())
			m.tr.add(t)
		case llm.Text:
			if b.Text != "" {
				m.tr.add(newAssistant(b.Text))
			}
		}
	}
}

// resetStream discards the partial answer of a request being retried.
// What already reached the scrollback cannot be taken back; it is marked.
func (m *Model) resetStream(r *runState) {
	var partial []entry
	if r.answer != nil {
		partial = append(partial, r.answer)
	}
	if r.thinking != nil {
		partial = append(partial, r.thinking)
	}
	m.closeStream(r)
	for _, e := range partial {
		for i := m.tr.len() - 1; i >= 0; i-- {
			if m.tr.at(i) != e {
				continue
			}
			if !m.tr.drop(i) {
				m.notice(noticeInfo, "(the partial answer above was discarded; retrying)")
			}
			break
		}
	}
}

// endRun closes the run's entries, reports how it ended and sends what
// was queued meanwhile.
func (m *Model) endRun(done agent.LoopComplete) tea.Cmd {
	r := m.run
	m.closeStream(r)
	if r.retry != nil {
		r.retry.done = true
	}
	for _, t := range r.tools {
		if !t.done {
			t.done = true
			t.res = tools.Result{IsError: true, Content: []llm.Block{llm.Text{Text: "not run"}}}
		}
	}
	if m.dialog != nil {
		m.dialog = nil
	}
	switch done.Reason {
	case agent.StopSuccess, agent.StopError:
		// Errors were reported as they happened.
	case agent.StopInterrupted:
		m.notice(noticeWarn, "Interrupted · tell coda what to do instead")
	default:
		if done.Err != nil {
			m.notice(noticeError, done.Err.Error())
		}
	}
	r.cancel()
	m.run = nil
	m.refreshTodos()
	m.refreshShells()
	return tea.Batch(m.next(), m.loadBranch())
}

// loadConversation shows a conversation that already has messages.
func (m *Model) loadConversation(msgs []llm.Message) {
	calls := map[string]*toolEntry{}
	for _, msg := range msgs {
		if msg.Meta.Reminder {
			continue
		}
		if msg.Role == llm.RoleUser {
			if text, ok := promptText(msg); ok {
				m.tr.add(&userEntry{text: text})
				continue
			}
			for _, b := range msg.Blocks {
				if res, ok := b.(llm.ToolResult); ok {
					if t := calls[res.ToolUseID]; t != nil {
						t.done = true
						t.res = tools.Result{Content: res.Content, IsError: res.IsError}
					}
				}
			}
			continue
		}
		for _, b := range msg.Blocks {
			switch b := b.(type) {
			case llm.Text:
				if b.Text != "" {
					m.tr.add(newAssistant(b.Text))
				}
			case llm.Thinking:
				t := &thinkingEntry{}
				t.text.WriteString(b.Thinking)
				t.closed = true
				m.tr.add(t)
			case llm.ToolUse:
				t := &toolEntry{id: b.ID, name: b.Name, input: b.Input}
				calls[b.ID] = t
				m.tr.add(t)
			}
		}
	}
	for _, t := range calls {
		t.done = true
	}
}
