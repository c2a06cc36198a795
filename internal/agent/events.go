package agent

import (
	"encoding/json"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// Event is what the loop tells its consumer (TUI, headless writer, tests).
// The consumer must read the channel until it is closed.
type Event interface{ isEvent() }

// TextDelta is streamed assistant text.
type TextDelta struct{ Text string }

// ThinkingDelta is streamed reasoning.
type ThinkingDelta struct{ Text string }

// StreamReset tells the consumer to discard the partial answer it has
// shown: the request failed mid-stream and is being retried.
type StreamReset struct{}

// MessageAppended reports a message that became part of the conversation:
// the user prompt, each complete assistant answer, each tool-result message.
type MessageAppended struct{ Message llm.Message }

// ToolStarted reports a tool call about to run.
type ToolStarted struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolFinished reports a tool call's outcome.
type ToolFinished struct {
	ID       string
	Name     string
	Input    json.RawMessage
	Result   tools.Result
	Duration time.Duration
}

// ApprovalRequest asks the human whether a tool call may run. The loop
// blocks until Reply receives exactly one Approval (or the run is cancelled).
type ApprovalRequest struct {
	ID          string
	Tool        string
	Input       json.RawMessage
	Reason      string
	Suggestions []string // rules "allow always" would save
	Reply       chan<- Approval
}

// Approval is the human's answer.
type Approval struct {
	Allow   bool
	Always  bool   // remember the suggested rules
	Message string // optional text for the model (with a denial)
	Mode    string // for a plan approval: the permission mode to continue in
}

// TurnComplete ends one model request and the tool calls it asked for.
type TurnComplete struct {
	Turn  int
	Usage llm.Usage // of this request
}

// UsageUpdate carries cumulative usage and cost for the agent's lifetime.
type UsageUpdate struct {
	Total   llm.Usage
	CostUSD float64
	// ContextTokens is the input size of the latest request: what the
	// context window currently holds.
	ContextTokens int
}

// Notice is a short message for the user (a retry, a model switch).
type Notice struct {
	Text  string
	Retry *RetryInfo // set for retries
}

// RetryInfo describes one retry of a failed request.
type RetryInfo struct {
	Attempt    int
	MaxRetries int
	Delay      time.Duration
	Status     int
	Err        string
}

// CompactBoundary reports that the conversation was compacted.
type CompactBoundary struct {
	Trigger   string // "auto" or "manual"
	PreTokens int
}

// ErrorEvent reports a failure that ended the run.
type ErrorEvent struct{ Err error }

// StopReason says why a run ended.
type StopReason string

const (
	StopSuccess      StopReason = "success"
	StopMaxTurns     StopReason = "error_max_turns"
	StopMaxBudget    StopReason = "error_max_budget_usd"
	StopError        StopReason = "error_during_execution"
	StopInterrupted  StopReason = "interrupted"
	StopUnknownTools StopReason = "error_unknown_tools"
)

// LoopComplete is the last event of a run.
type LoopComplete struct {
	Reason      StopReason
	Turns       int
	Result      string // final assistant text
	Err         error
	Usage       llm.Usage // this run
	CostUSD     float64   // this run
	Duration    time.Duration
	APIDuration time.Duration
	// ModelStop is the provider's stop reason of the last answer.
	ModelStop llm.StopReason
	Denials   []Denial
}

// Denial records a tool call the permission layer refused.
type Denial struct {
	ToolName  string
	ToolUseID string
	Input     json.RawMessage
}

func (TextDelta) isEvent()       {}
func (ThinkingDelta) isEvent()   {}
func (StreamReset) isEvent()     {}
func (MessageAppended) isEvent() {}
func (ToolStarted) isEvent()     {}
func (ToolFinished) isEvent()    {}
func (ApprovalRequest) isEvent() {}
func (TurnComplete) isEvent()    {}
func (UsageUpdate) isEvent()     {}
func (Notice) isEvent()          {}
func (ErrorEvent) isEvent()      {}
func (CompactBoundary) isEvent() {}
func (LoopComplete) isEvent()    {}
