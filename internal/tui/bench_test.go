package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// sampleHistory is a conversation of n messages: prompts, answers in Markdown
// with code, tool calls and their results.
func sampleHistory(n int) []llm.Message {
	var msgs []llm.Message
	for i := 0; len(msgs) < n; i++ {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: fmt.Sprintf("question %d: why does the parser fail?", i)}}})
		if i%3 == 0 {
			id := fmt.Sprintf("toolu_%d", i)
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "Let me look."},
					llm.ToolUse{ID: id, Name: "Bash", Input: raw(map[string]any{"command": "go test ./..."})}}},
				llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.ToolResult{ToolUseID: id,
					Content: []llm.Block{llm.Text{Text: "ok  \tparser\t0.01s\nExit code: 0"}}}}})
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: fmt.Sprintf(
			"Answer %d: the **parser** fails on empty input.\n\n```go\nif s == \"\" {\n\treturn nil\n}\n```\n\n- check the length\n- add a test", i)}}})
	}
	return msgs[:n]
}

// streamingModel is a UI showing n messages of history, in the middle of
// streaming an answer.
func streamingModel(tb testing.TB, n int) (*Model, *runState) {
	env := tools.NewEnv("/home/dev/project")
	a := agent.New(agent.Config{Model: agent.Model{Info: llm.ModelInfo{Provider: "anthropic", ID: "claude-sonnet-4-5",
		ContextWindow: 200000}}, Env: env, Conv: llm.NewConversation(sampleHistory(n)...)})
	m := New(context.Background(), Options{Agent: a, Env: env, ProjectDir: "/home/dev/project",
		Now: func() time.Time { return time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC) }})
	m.profile = colorprofile.TrueColor
	m.printer = func(string) tea.Cmd {
		m.printing = false
		return nil
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	r := &runState{cancel: func() {}, started: m.now(), tools: map[string]*toolEntry{}}
	m.run = r
	return m, r
}

// BenchmarkFrameWhileStreaming is the cost of one streamed delta: the
// update, moving finished parts to the scrollback, and drawing the frame.
// It must not grow with the conversation.
func BenchmarkFrameWhileStreaming(b *testing.B) {
	for _, n := range []int{10, 2000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			m, r := streamingModel(b, n)
			deltas := []string{"The fix ", "is to check ", "the **length** ", "first. ", "\n\n```go\nif len(s) == 0 {\n", "\treturn nil\n}\n```\n\n"}
			b.ResetTimer()
			for i := range b.N {
				m.Update(agentEventsMsg{run: r, events: []agent.Event{agent.TextDelta{Text: deltas[i%len(deltas)]}}})
				_ = m.View()
			}
		})
	}
}

// countingEntry counts how often it is drawn.
type countingEntry struct {
	renders int
}

func (e *countingEntry) finished() bool { return true }
func (e *countingEntry) render(*renderCtx, int, bool) string {
	e.renders++
	return "a finished entry"
}

func TestFramesDoNotRedrawFinishedEntries(t *testing.T) {
	m, r := streamingModel(t, 10)
	var entries []*countingEntry
	for range 2000 {
		e := &countingEntry{}
		entries = append(entries, e)
		m.tr.add(e)
	}
	m.Update(agentEventsMsg{run: r, events: []agent.Event{agent.TextDelta{Text: "start"}}})
	for _, e := range entries {
		if e.renders != 1 {
			t.Fatalf("an entry was drawn %d times on its way to the scrollback, want once", e.renders)
		}
	}
	for i := range 20 {
		m.Update(agentEventsMsg{run: r, events: []agent.Event{agent.TextDelta{Text: strings.Repeat("more ", i)}}})
		_ = m.View()
	}
	for _, e := range entries {
		if e.renders != 1 {
			t.Fatalf("streaming redrew a finished entry (%d draws)", e.renders)
		}
	}
}
