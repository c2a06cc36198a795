package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// fakeModel answers summary requests with a function of the request.
type fakeModel struct {
	mu     sync.Mutex
	reqs   []llm.Request
	answer func(n int, req llm.Request) (string, error)
}

func (f *fakeModel) Name() string { return "fake" }

func (f *fakeModel) Stream(_ context.Context, req llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	f.mu.Unlock()
	text, err := f.answer(n, req)
	if err != nil {
		return nil, err
	}
	return &fakeStream{events: []llm.Event{
		llm.MessageStart{},
		llm.TextDelta{Index: 0, Text: text},
		llm.BlockDone{Index: 0, Block: llm.Text{Text: text}},
		llm.Stop{Reason: llm.StopEndTurn},
	}}, nil
}

func (f *fakeModel) requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.reqs...)
}

type fakeStream struct{ events []llm.Event }

func (s *fakeStream) Next() (llm.Event, error) {
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	e := s.events[0]
	s.events = s.events[1:]
	return e, nil
}

func (s *fakeStream) Close() error { return nil }

// summaryAnswer is a well-formed answer.
func summaryAnswer(text string) func(int, llm.Request) (string, error) {
	return func(int, llm.Request) (string, error) {
		return "<analysis>thinking it over</analysis>\n<summary>\n" + text + "\n</summary>", nil
	}
}

var testClockStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var testModel = llm.ModelInfo{Provider: "fake", ID: "fake-1", ContextWindow: 100000, MaxOutputTokens: 8192}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// setup returns a compactor over a fake model, a clock, and the boundaries
// it reported.
func setup(t *testing.T, f *fakeModel, opt func(*Options)) (*Compactor, *clock, *[]Boundary) {
	t.Helper()
	clk := &clock{now: testClockStart}
	var bounds []Boundary
	o := Options{
		Model:      func() (llm.Provider, llm.ModelInfo) { return f, testModel },
		System:     "SYSTEM PROMPT",
		Tools:      func() []llm.ToolSpec { return []llm.ToolSpec{{Name: "Bash"}, {Name: "Read"}} },
		Dir:        t.TempDir(),
		Now:        clk.Now,
		OnBoundary: func(b Boundary) { bounds = append(bounds, b) },
		RetryDelay: func(int, time.Duration) time.Duration { return 0 },
	}
	if opt != nil {
		opt(&o)
	}
	return New(o), clk, &bounds
}

// builder writes conversations: prompts, tool rounds, answers.
type builder struct {
	t    *testing.T
	msgs []llm.Message
	n    int
	at   time.Time
}

func newBuilder(t *testing.T, at time.Time) *builder { return &builder{t: t, at: at} }

func (b *builder) id(prefix string) string {
	b.n++
	return fmt.Sprintf("%s%03d", prefix, b.n)
}

func (b *builder) user(text string) *builder {
	b.msgs = append(b.msgs, llm.Message{ID: b.id("u"), Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: text}}})
	return b
}

// round appends an assistant message calling tool with input and a user
// message holding a result of size bytes.
func (b *builder) round(tool string, input map[string]any, size int) *builder {
	raw, _ := json.Marshal(input)
	id := b.id("toolu_")
	b.msgs = append(b.msgs,
		llm.Message{ID: b.id("a"), Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: "running " + tool}, llm.ToolUse{ID: id, Name: tool, Input: raw}},
			Meta: llm.Meta{Time: b.at, Model: testModel.ID}},
		llm.Message{ID: b.id("u"), Role: llm.RoleUser, Blocks: []llm.Block{llm.ToolResult{ToolUseID: id, Content: []llm.Block{llm.Text{Text: filler(id, size)}}}}})
	return b
}

func (b *builder) answer(text string) *builder {
	b.msgs = append(b.msgs, llm.Message{ID: b.id("a"), Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: text}},
		Meta: llm.Meta{Time: b.at, Model: testModel.ID}})
	return b
}

// usage sets the usage of the newest assistant message.
func (b *builder) usage(input int) *builder {
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if b.msgs[i].Role == llm.RoleAssistant {
			b.msgs[i].Meta.Usage = &llm.Usage{InputTokens: 10, CacheReadInputTokens: input - 10, OutputTokens: 50}
			return b
		}
	}
	b.t.Fatal("no assistant message")
	return b
}

func (b *builder) conv() *llm.Conversation { return llm.NewConversation(b.msgs...) }

// filler is size bytes of distinct lines starting with tag.
func filler(tag string, size int) string {
	var s strings.Builder
	for i := 0; s.Len() < size; i++ {
		fmt.Fprintf(&s, "%s line %d of output\n", tag, i)
	}
	return s.String()[:size]
}

// pairsIntact asserts every tool_use is answered in the next message and
// every result follows its use.
func pairsIntact(t *testing.T, msgs []llm.Message) {
	t.Helper()
	for i, m := range msgs {
		for _, b := range m.Blocks {
			r, ok := b.(llm.ToolResult)
			if !ok {
				continue
			}
			found := false
			if i > 0 {
				for _, u := range msgs[i-1].ToolUses() {
					found = found || u.ID == r.ToolUseID
				}
			}
			if !found {
				t.Fatalf("message %d: result %s without its tool_use in the message before", i, r.ToolUseID)
			}
		}
		if uses := m.ToolUses(); len(uses) > 0 && i+1 < len(msgs) {
			for _, u := range uses {
				found := false
				for _, b := range msgs[i+1].Blocks {
					if r, ok := b.(llm.ToolResult); ok && r.ToolUseID == u.ID {
						found = true
					}
				}
				if !found {
					t.Fatalf("message %d: tool_use %s not answered in the next message", i, u.ID)
				}
			}
		}
	}
}

func newEnv(t *testing.T) *tools.Env {
	t.Helper()
	env := tools.NewEnv(t.TempDir())
	t.Cleanup(env.Close)
	return env
}
