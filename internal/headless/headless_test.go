package headless

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/llm"
)

func run(t *testing.T, format Format, events ...agent.Event) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	w := NewWriter(format, true, Info{SessionID: "s1", Cwd: "/p", Model: "anthropic/m", Tools: []string{"Read"},
		PermissionMode: "default", ModelInfo: llm.ModelInfo{ID: "m", ContextWindow: 100}}, &out, &errOut)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := w.Event(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return out.String(), errOut.String(), w.ExitCode()
}

func TestJSONResultKeyOrder(t *testing.T) {
	out, _, code := run(t, FormatJSON, agent.LoopComplete{Reason: agent.StopSuccess, Result: "done", Turns: 2,
		Duration: 1500 * time.Millisecond, CostUSD: 0.5, ModelStop: llm.StopEndTurn})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := `{"type":"result","subtype":"success","is_error":false,"duration_ms":1500,"duration_api_ms":0,"num_turns":2,"result":"done","stop_reason":"end_turn","session_id":"s1","total_cost_usd":0.5,`
	if !strings.HasPrefix(out, want) {
		t.Fatalf("result line:\n got %s\nwant prefix %s", out, want)
	}
}

func TestErrorResults(t *testing.T) {
	for reason, subtype := range map[agent.StopReason]string{
		agent.StopMaxTurns:     "error_max_turns",
		agent.StopMaxBudget:    "error_max_budget_usd",
		agent.StopError:        "error_during_execution",
		agent.StopInterrupted:  "error_during_execution",
		agent.StopUnknownTools: "error_during_execution",
	} {
		out, _, code := run(t, FormatJSON, agent.LoopComplete{Reason: reason, Err: errors.New("boom")})
		var res map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if code != 1 || res["subtype"] != subtype || res["is_error"] != true || res["errors"].([]any)[0] != "boom" {
			t.Errorf("%s: exit %d, %v", reason, code, res)
		}
		if _, ok := res["result"]; ok {
			t.Errorf("%s: error result carries a result field", reason)
		}
	}
}

func TestStreamJSONLines(t *testing.T) {
	assistant := llm.Message{ID: "msg_1", Role: llm.RoleAssistant, Meta: llm.Meta{Model: "m", StopReason: llm.StopToolUse},
		Blocks: []llm.Block{llm.Text{Text: "hi"}, llm.ToolUse{ID: "t1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}}}
	user := llm.Message{ID: "msg_2", Role: llm.RoleUser, Blocks: []llm.Block{
		llm.ToolResult{ToolUseID: "t1", Content: []llm.Block{llm.Text{Text: "contents"}}}}}
	out, _, _ := run(t, FormatStreamJSON,
		agent.MessageAppended{Message: assistant},
		agent.MessageAppended{Message: user},
		agent.Notice{Text: "retrying", Retry: &agent.RetryInfo{Attempt: 1, MaxRetries: 9, Delay: 500 * time.Millisecond, Status: 529, Err: "overloaded"}},
		agent.CompactBoundary{Trigger: "auto", PreTokens: 1234},
		agent.LoopComplete{Reason: agent.StopSuccess, Result: "ok"},
	)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	checks := []string{
		`{"type":"system","subtype":"init","cwd":"/p","session_id":"s1","tools":["Read"]`,
		`{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}],"stop_reason":"tool_use"`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"contents","is_error":false}]},"parent_tool_use_id":null,"session_id":"s1"`,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":9,"retry_delay_ms":500,"error_status":529,"error":"overloaded"`,
		`{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":1234}`,
		`{"type":"result","subtype":"success"`,
	}
	for i, want := range checks {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d:\n got %s\nwant prefix %s", i, lines[i], want)
		}
	}
}

func TestTextFormat(t *testing.T) {
	out, _, code := run(t, FormatText, agent.LoopComplete{Reason: agent.StopSuccess, Result: "the answer"})
	if out != "the answer\n" || code != 0 {
		t.Fatalf("text: %q %d", out, code)
	}
	out, errOut, code := run(t, FormatText, agent.LoopComplete{Reason: agent.StopError, Err: errors.New("boom")})
	if out != "" || !strings.Contains(errOut, "boom") || code != 1 {
		t.Fatalf("text error: %q %q %d", out, errOut, code)
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Fatal("bad format accepted")
	}
}
