package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed exitplanmode.md
var exitPlanModeDescription string

type exitPlanModeInput struct {
	Plan string `json:"plan" jsonschema_description:"The plan to present for approval, in Markdown."`
}

// ExitPlanMode presents a plan for approval and leaves plan mode. The
// approval itself is the permission layer's question; by the time Run is
// called the user (or a rule) has said yes.
type ExitPlanMode struct {
	// exit leaves plan mode and returns the mode now in effect, or an error
	// when the session is not in plan mode.
	exit func() (string, error)
}

// NewExitPlanMode returns the tool; exit switches the session's mode.
func NewExitPlanMode(exit func() (string, error)) *ExitPlanMode {
	return &ExitPlanMode{exit: exit}
}

func (*ExitPlanMode) Name() string                         { return "ExitPlanMode" }
func (*ExitPlanMode) Description() string                  { return exitPlanModeDescription }
func (*ExitPlanMode) InputSchema() json.RawMessage         { return SchemaFor[exitPlanModeInput]() }
func (*ExitPlanMode) ReadOnly() bool                       { return false }
func (*ExitPlanMode) ConcurrencySafe(json.RawMessage) bool { return false }

// PlanDisplay is what the UI shows for an approved plan.
type PlanDisplay struct {
	Plan string
	Mode string
}

func (t *ExitPlanMode) Run(_ context.Context, call Call) Result {
	in, err := Decode[exitPlanModeInput](call.Input)
	if err != nil {
		return Errorf("ExitPlanMode: %v", err)
	}
	if strings.TrimSpace(in.Plan) == "" {
		return Errorf("ExitPlanMode: the plan is empty; write the plan and pass it in `plan`")
	}
	mode, err := t.exit()
	if err != nil {
		return Errorf("ExitPlanMode: %v", err)
	}
	r := TextResult(fmt.Sprintf("The user approved your plan. Permission mode is now %s: start the work, following the plan.", mode))
	r.Display = PlanDisplay{Plan: in.Plan, Mode: mode}
	return r
}
