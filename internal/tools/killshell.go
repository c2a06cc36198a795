package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed killshell.md
var killShellDescription string

type killShellInput struct {
	ShellID string `json:"shell_id" jsonschema_description:"The id of the background shell to stop (e.g. bash_1)."`
}

// KillShell stops a background shell and everything it started.
type KillShell struct{}

// NewKillShell returns the KillShell tool.
func NewKillShell() *KillShell { return &KillShell{} }

func (*KillShell) Name() string                               { return "KillShell" }
func (*KillShell) Description() string                        { return killShellDescription }
func (*KillShell) InputSchema() json.RawMessage               { return SchemaFor[killShellInput]() }
func (*KillShell) ReadOnly() bool                             { return false }
func (*KillShell) ConcurrencySafe(input json.RawMessage) bool { return false }

func (*KillShell) Run(ctx context.Context, call Call) Result {
	in, err := Decode[killShellInput](call.Input)
	if err != nil {
		return Errorf("KillShell: %v", err)
	}
	if call.Env.Shells == nil {
		return Errorf("KillShell: no background shells are available here")
	}
	before, err := call.Env.Shells.Status(in.ShellID)
	if err != nil {
		return Errorf("KillShell: %v", err)
	}
	if before.State != ShellRunning {
		text := fmt.Sprintf("Background shell %s is not running (%s); nothing to kill.", before.ID, before)
		return Result{Content: TextResult(text).Content, Display: before}
	}
	st, err := call.Env.Shells.Kill(in.ShellID)
	if err != nil {
		return Errorf("KillShell: %v", err)
	}
	text := fmt.Sprintf("Killed background shell %s (`%s`) and its processes.", st.ID, oneLine(st.Command, 80))
	if st.State == ShellExited {
		// It ended by itself just before the kill landed.
		text = fmt.Sprintf("Background shell %s had already %s.", st.ID, st)
	}
	return Result{Content: TextResult(text).Content, Display: st}
}
