package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

//go:embed bashoutput.md
var bashOutputDescription string

type bashOutputInput struct {
	BashID string `json:"bash_id" jsonschema_description:"The id of the background shell (e.g. bash_1), as Bash returned it."`
	Filter string `json:"filter,omitempty" jsonschema_description:"Optional regular expression (RE2 syntax); only new output lines that match it are shown. Lines that do not match are discarded for good."`
}

// BashOutputDisplay is what the UI shows for a BashOutput call.
type BashOutputDisplay struct {
	Status ShellStatus
	Output string // the last lines of the new output
}

// BashOutput reads what a background shell printed since the last read.
type BashOutput struct{}

// NewBashOutput returns the BashOutput tool.
func NewBashOutput() *BashOutput { return &BashOutput{} }

func (*BashOutput) Name() string                               { return "BashOutput" }
func (*BashOutput) Description() string                        { return bashOutputDescription }
func (*BashOutput) InputSchema() json.RawMessage               { return SchemaFor[bashOutputInput]() }
func (*BashOutput) ReadOnly() bool                             { return true }
func (*BashOutput) ConcurrencySafe(input json.RawMessage) bool { return true }

func (*BashOutput) Run(ctx context.Context, call Call) Result {
	in, err := Decode[bashOutputInput](call.Input)
	if err != nil {
		return Errorf("BashOutput: %v", err)
	}
	var filter *regexp.Regexp
	if in.Filter != "" {
		// Compile before reading, so a bad filter loses no output.
		if filter, err = regexp.Compile(in.Filter); err != nil {
			return Errorf("BashOutput: invalid filter regular expression: %v", err)
		}
	}
	if call.Env.Shells == nil {
		return Errorf("BashOutput: no background shells are available here")
	}
	out, err := call.Env.Shells.Output(in.BashID)
	if err != nil {
		return Errorf("BashOutput: %v", err)
	}
	text := out.Text
	if filter != nil {
		text = keepMatchingLines(text, filter)
	}
	text = truncateOutput(text)

	var msg strings.Builder
	fmt.Fprintf(&msg, "Shell %s: %s\n", out.Status.ID, out.Status)
	if out.Dropped > 0 {
		fmt.Fprintf(&msg, "[%d bytes of earlier output were dropped: only the last 1 MB is kept between reads]\n", out.Dropped)
	}
	switch {
	case text != "":
		msg.WriteString("\n" + strings.TrimRight(text, "\n"))
	case filter != nil:
		msg.WriteString("\n(no new output matching the filter)")
	default:
		msg.WriteString("\n(no new output)")
	}
	return Result{
		Content: TextResult(msg.String()).Content,
		Display: BashOutputDisplay{Status: out.Status, Output: lastLines(text, 20, 2000)},
	}
}

func keepMatchingLines(s string, re *regexp.Regexp) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if re.MatchString(strings.TrimRight(line, "\r\n")) {
			b.WriteString(line)
		}
	}
	return b.String()
}
