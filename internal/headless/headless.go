// Package headless runs one prompt without a UI (`coda -p`) and writes the
// run in Claude Code's headless shapes: plain text, one JSON result object,
// or stream-json (one JSON object per line), so CI wrappers written for it
// work unchanged.
package headless

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
)

// Format is an --output-format value.
type Format string

const (
	FormatText       Format = "text"
	FormatJSON       Format = "json"
	FormatStreamJSON Format = "stream-json"
)

// ParseFormat validates an --output-format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatText, FormatJSON, FormatStreamJSON:
		return f, nil
	case "":
		return FormatText, nil
	}
	return "", fmt.Errorf("unknown output format %q: use text, json or stream-json", s)
}

// Info describes the run for the init line and the result object.
type Info struct {
	SessionID      string
	Cwd            string
	Model          string // provider/model
	ModelInfo      llm.ModelInfo
	Tools          []string
	PermissionMode string
	SlashCommands  []string
	Version        string
}

// Writer turns agent events into output. Call Event for each event in
// order; the LoopComplete event writes the result. Exit reports the exit
// code once the run is over.
type Writer struct {
	format  Format
	verbose bool
	info    Info
	out     *bufio.Writer
	errOut  io.Writer
	done    *agent.LoopComplete
	wroteIt bool
}

// NewWriter starts output in format to out; errors for the user go to errOut.
func NewWriter(format Format, verbose bool, info Info, out, errOut io.Writer) *Writer {
	return &Writer{format: format, verbose: verbose, info: info, out: bufio.NewWriter(out), errOut: errOut}
}

// Start writes what comes before any event (the stream-json init line).
func (w *Writer) Start() error {
	if w.format != FormatStreamJSON {
		return nil
	}
	tools := w.info.Tools
	if tools == nil {
		tools = []string{}
	}
	cmds := w.info.SlashCommands
	if cmds == nil {
		cmds = []string{}
	}
	return w.line(initLine{
		Type: "system", Subtype: "init", Cwd: w.info.Cwd, SessionID: w.info.SessionID,
		Tools: tools, MCPServers: []any{}, Model: w.info.Model, PermissionMode: w.info.PermissionMode,
		SlashCommands: cmds, APIKeySource: "environment", Version: w.info.Version, OutputStyle: "default",
		Agents: []string{}, Skills: []string{}, Plugins: []any{}, UUID: newUUID(),
	})
}

// Event handles one agent event.
func (w *Writer) Event(e agent.Event) error {
	switch e := e.(type) {
	case agent.MessageAppended:
		if w.format == FormatStreamJSON {
			return w.message(e.Message)
		}
	case agent.Notice:
		if w.format == FormatStreamJSON && e.Retry != nil {
			return w.line(retryLine{Type: "system", Subtype: "api_retry", Attempt: e.Retry.Attempt,
				MaxRetries: e.Retry.MaxRetries, RetryDelayMS: e.Retry.Delay.Milliseconds(),
				ErrorStatus: e.Retry.Status, Error: e.Retry.Err, SessionID: w.info.SessionID, UUID: newUUID()})
		}
		if w.verbose && w.format != FormatStreamJSON {
			fmt.Fprintln(w.errOut, "coda:", e.Text)
		}
	case agent.CompactBoundary:
		if w.format == FormatStreamJSON {
			return w.line(compactLine{Type: "system", Subtype: "compact_boundary",
				Metadata:  compactMetadata{Trigger: e.Trigger, PreTokens: e.PreTokens},
				SessionID: w.info.SessionID, UUID: newUUID()})
		}
	case agent.LoopComplete:
		w.done = &e
		return w.result(e)
	}
	return nil
}

// Local reports a slash command that ran without the model: its output is
// the run's result.
func (w *Writer) Local(output string) error {
	return w.Event(agent.LoopComplete{Reason: agent.StopSuccess, Result: output})
}

// Flush writes buffered output.
func (w *Writer) Flush() error { return w.out.Flush() }

// ExitCode is 0 when the run succeeded, 1 otherwise.
func (w *Writer) ExitCode() int {
	if w.done == nil || w.done.Reason != agent.StopSuccess {
		return 1
	}
	return 0
}

func (w *Writer) line(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	w.out.Write(data)
	w.out.WriteByte('\n')
	return w.out.Flush()
}

func (w *Writer) message(m llm.Message) error {
	content := make([]json.RawMessage, 0, len(m.Blocks))
	for _, b := range m.Blocks {
		raw, err := wireBlock(b)
		if err != nil {
			return err
		}
		content = append(content, raw)
	}
	if m.Role == llm.RoleAssistant {
		usage := llm.Usage{}
		if m.Meta.Usage != nil {
			usage = *m.Meta.Usage
		}
		var stop *string
		if m.Meta.StopReason != "" {
			s := string(m.Meta.StopReason)
			stop = &s
		}
		return w.line(assistantLine{Type: "assistant", Message: anthropicMessage{
			ID: m.ID, Type: "message", Role: "assistant", Model: m.Meta.Model, Content: content,
			StopReason: stop, Usage: usage}, SessionID: w.info.SessionID, UUID: newUUID()})
	}
	return w.line(userLine{Type: "user", Message: userMessage{Role: "user", Content: content},
		SessionID: w.info.SessionID, UUID: newUUID()})
}

// wireBlock renders a block as the Anthropic API shows it; a tool result
// holding only text uses the string form, as Claude Code's output does.
func wireBlock(b llm.Block) (json.RawMessage, error) {
	if r, ok := b.(llm.ToolResult); ok {
		allText := true
		var sb strings.Builder
		for _, c := range r.Content {
			t, ok := c.(llm.Text)
			if !ok {
				allText = false
				break
			}
			sb.WriteString(t.Text)
		}
		if allText {
			return json.Marshal(toolResultText{Type: "tool_result", ToolUseID: r.ToolUseID, Content: sb.String(), IsError: r.IsError})
		}
	}
	return llm.EncodeBlock(b)
}

func (w *Writer) result(e agent.LoopComplete) error {
	res := resultLine{
		Type: "result", Subtype: string(e.Reason), IsError: e.Reason != agent.StopSuccess,
		DurationMS: e.Duration.Milliseconds(), DurationAPIMS: e.APIDuration.Milliseconds(),
		NumTurns: e.Turns, StopReason: nullable(string(e.ModelStop)), SessionID: w.info.SessionID,
		TotalCostUSD: e.CostUSD, Usage: e.Usage, PermissionDenials: []denial{}, UUID: newUUID(),
	}
	switch e.Reason {
	case agent.StopSuccess, agent.StopMaxTurns, agent.StopMaxBudget:
	default:
		res.Subtype = string(agent.StopError)
	}
	if e.Reason == agent.StopSuccess {
		res.Result = &e.Result
	} else if e.Err != nil {
		res.Errors = []string{e.Err.Error()}
	}
	res.ModelUsage = map[string]modelUsage{}
	if w.info.ModelInfo.ID != "" {
		res.ModelUsage[w.info.ModelInfo.ID] = modelUsage{
			InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens,
			CacheReadInputTokens: e.Usage.CacheReadInputTokens, CacheCreationInputTokens: e.Usage.CacheCreationInputTokens,
			CostUSD: e.CostUSD, ContextWindow: w.info.ModelInfo.ContextWindow, MaxOutputTokens: w.info.ModelInfo.MaxOutputTokens,
		}
	}
	for _, d := range e.Denials {
		input := d.Input
		if !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		res.PermissionDenials = append(res.PermissionDenials, denial{ToolName: d.ToolName, ToolUseID: d.ToolUseID, ToolInput: input})
	}
	switch w.format {
	case FormatText:
		if e.Reason == agent.StopSuccess {
			fmt.Fprintln(w.out, e.Result)
		} else if e.Err != nil {
			fmt.Fprintln(w.errOut, "coda:", e.Err)
		}
		return w.out.Flush()
	default:
		return w.line(res)
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
