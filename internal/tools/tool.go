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

// Registry holds the tools of one agent.
type Registry struct {
	tools map[string]Tool
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
func (r *Registry) Register(t Tool) { r.tools[t.Name()] = t }

// Remove drops a tool by name.
func (r *Registry) Remove(name string) { delete(r.tools, name) }

// Get finds a tool by name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names lists tool names sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Specs returns the tools as the model sees them, sorted by name so the
// request prefix (and the prompt cache) stays stable.
func (r *Registry) Specs() []llm.ToolSpec {
	names := r.Names()
	specs := make([]llm.ToolSpec, 0, len(names))
	for _, n := range names {
		t := r.tools[n]
		specs = append(specs, llm.ToolSpec{Name: n, Description: t.Description(), InputSchema: t.InputSchema()})
	}
	return specs
}
