// Package tools defines the Tool interface, the registry the agent sends to
// the model, input decoding against each tool's schema, and the per-agent
// state tools share (working directory, file-state cache, background shells).
// Each built-in tool lives in its own file, with its model-facing
// description in a Markdown file beside it.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/coda-cli/coda/internal/llm"
)

// Tool is one capability the model can call.
type Tool interface {
	Name() string
	// Description is written for the model: what the tool does, when to use
	// it and when not, what each parameter changes, its limits.
	Description() string
	// InputSchema is a JSON Schema object for the input.
	InputSchema() json.RawMessage
	// ReadOnly reports that the tool never changes anything.
	ReadOnly() bool
	// ConcurrencySafe reports whether this call may run in parallel with
	// other concurrency-safe calls.
	ConcurrencySafe(input json.RawMessage) bool
	// Run executes the call. Failures are results with IsError set, never
	// panics; ctx cancellation must stop the work promptly.
	Run(ctx context.Context, call Call) Result
}

// Call is one invocation of a tool.
type Call struct {
	ID    string          // the tool_use id
	Input json.RawMessage // validated against the schema by the registry
	Env   *Env
}

// Result is what a tool produced. Content is what the model reads (Text and
// Image blocks); Display is for the UI only (diffs, exit codes, counts).
type Result struct {
	Content []llm.Block
	IsError bool
	Display any
}

// TextResult is a successful result holding text.
func TextResult(text string) Result {
	return Result{Content: []llm.Block{llm.Text{Text: text}}}
}

// Errorf is an error result; the message should tell the model how to
// recover.
func Errorf(format string, args ...any) Result {
	return Result{Content: []llm.Block{llm.Text{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// Text returns the concatenated text of the result's content.
func (r Result) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(llm.Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Registry holds the tools of one agent. It is safe for concurrent use:
// the loop reads it while a UI or an extension may add tools.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	specs []llm.ToolSpec // built on first use after a change; schemas are costly to make
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool)}
	for _, t := range ts {
		r.Register(t)
	}
	return r
}

// Register adds or replaces a tool.
func (r *Registry) Register(t Tool) {
	r.mu.Lock()
	r.tools[t.Name()] = t
	r.specs = nil
	r.mu.Unlock()
}

// Remove drops a tool by name.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	delete(r.tools, name)
	r.specs = nil
	r.mu.Unlock()
}

// Get finds a tool by name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names lists tool names sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Specs returns the tools as the model sees them, sorted by name so the
// request prefix (and the prompt cache) stays stable. They are built once
// per change of the tool set, not on every request: each schema is made
// by reflection. The slice is shared; callers must not modify it.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	specs := r.specs
	r.mu.RUnlock()
	if specs != nil {
		return specs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.specs == nil {
		names := r.namesLocked()
		r.specs = make([]llm.ToolSpec, 0, len(names))
		for _, n := range names {
			t := r.tools[n]
			r.specs = append(r.specs, llm.ToolSpec{Name: n, Description: t.Description(), InputSchema: t.InputSchema()})
		}
	}
	return r.specs
}
