package anthropic

import (
	"encoding/json"
	"io"
	"reflect"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

// h2Example is the tool_use stream of PROTOCOLS.md H.2, verbatim: a ping,
// an empty first input fragment, the input JSON split mid-string.
const h2Example = `event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-opus-5","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let's check the weather"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" for San Francisco, CA:"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"San"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" Francisc"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"o,"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" CA\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

`

func streamOf(t *testing.T, body string) ([]llm.Event, error) {
	t.Helper()
	f := serveSSE(t, body)
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer s.Close()
	return collect(t, s)
}

func TestStreamToolUseExample(t *testing.T) {
	events, err := streamOf(t, h2Example)
	if err != io.EOF {
		t.Fatalf("stream ended with %v, want io.EOF", err)
	}
	want := []llm.Event{
		llm.MessageStart{ID: "msg_014p7gG3wDgGV9EUtLvnow3U", Model: "claude-opus-5", Usage: llm.Usage{InputTokens: 472, OutputTokens: 2}},
		llm.TextDelta{Index: 0, Text: "Okay, let's check the weather"},
		llm.TextDelta{Index: 0, Text: " for San Francisco, CA:"},
		llm.BlockDone{Index: 0, Block: llm.Text{Text: "Okay, let's check the weather for San Francisco, CA:"}},
		llm.ToolUseStart{Index: 1, ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather"},
		llm.BlockDone{Index: 1, Block: llm.ToolUse{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Input: json.RawMessage(`{"location": "San Francisco, CA"}`)}},
		llm.Stop{Reason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 472, OutputTokens: 89}},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n got %#v\nwant %#v", events, want)
	}
}

func TestStreamEOFRepeats(t *testing.T) {
	f := serveSSE(t, h2Example)
	s, err := f.provider(Config{}).Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, s); err != io.EOF {
		t.Fatalf("first end = %v", err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("Next after the end = %v, want io.EOF again", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestStreamThinkingWithSignature(t *testing.T) {
	body := event("message_start", `{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":1200,"cache_read_input_tokens":3400,"output_tokens":1}}}`) +
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think <about> \"it\""}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" & more."}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/Y=="}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":1}`) +
		textBlock(2, "Done.") +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}`) +
		event("message_stop", `{"type":"message_stop"}`)

	events, err := streamOf(t, body)
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	startUsage := llm.Usage{InputTokens: 5, OutputTokens: 1, CacheCreationInputTokens: 1200, CacheReadInputTokens: 3400}
	want := []llm.Event{
		llm.MessageStart{ID: "msg_t", Model: "claude-test", Usage: startUsage},
		llm.ThinkingDelta{Index: 0, Text: `Let me think <about> "it"`},
		llm.ThinkingDelta{Index: 0, Text: " & more."},
		llm.BlockDone{Index: 0, Block: llm.Thinking{Thinking: `Let me think <about> "it" & more.`, Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/Y=="}},
		llm.BlockDone{Index: 1, Block: llm.RedactedThinking{Data: "EmwKAhgBEgy3va3pzix/LafPsn4a"}},
		llm.TextDelta{Index: 2, Text: "Done."},
		llm.BlockDone{Index: 2, Block: llm.Text{Text: "Done."}},
		llm.Stop{Reason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 5, OutputTokens: 42, CacheCreationInputTokens: 1200, CacheReadInputTokens: 3400}},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n got %#v\nwant %#v", events, want)
	}
}

func TestStreamInterleavedToolInputs(t *testing.T) {
	// Two tool_use blocks whose deltas and stops interleave, an unknown
	// event type, a tool with no input fragments, one with broken JSON.
	body := messageStart("msg_i") +
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"Read","input":{}}}`) +
		event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_b","name":"Grep","input":{}}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\":"}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.go\""}}`) +
		event("future_event", `{"type":"future_event","index":0,"something":true}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"x\"}"}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":1}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"}"}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		event("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_c","name":"TodoRead","input":{}}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":2}`) +
		event("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_d","name":"Bash","input":{}}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":3}`) +
		messageEnd("tool_use", 30)

	events, err := streamOf(t, body)
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	var done []llm.BlockDone
	for _, ev := range events {
		if d, ok := ev.(llm.BlockDone); ok {
			done = append(done, d)
		}
	}
	want := []llm.BlockDone{
		{Index: 1, Block: llm.ToolUse{ID: "toolu_b", Name: "Grep", Input: json.RawMessage(`{"pattern":"x"}`)}},
		{Index: 0, Block: llm.ToolUse{ID: "toolu_a", Name: "Read", Input: json.RawMessage(`{"path":"a.go"}`)}},
		{Index: 2, Block: llm.ToolUse{ID: "toolu_c", Name: "TodoRead", Input: json.RawMessage(`{}`)}},
		{Index: 3, Block: llm.ToolUse{ID: "toolu_d", Name: "Bash", Input: json.RawMessage(`{"command": "ls`)}},
	}
	if !reflect.DeepEqual(done, want) {
		t.Errorf("finished blocks:\n got %#v\nwant %#v", done, want)
	}
	starts := 0
	for _, ev := range events {
		if _, ok := ev.(llm.ToolUseStart); ok {
			starts++
		}
	}
	if starts != 4 {
		t.Errorf("got %d ToolUseStart events, want 4", starts)
	}
}

func TestStreamSkipsServerToolBlocks(t *testing.T) {
	body := messageStart("msg_s") +
		event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`) +
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}`) +
		event("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		textBlock(1, "ok") +
		messageEnd("end_turn", 3)
	events, err := streamOf(t, body)
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	for _, ev := range events {
		if d, ok := ev.(llm.BlockDone); ok && d.Index != 1 {
			t.Errorf("unexpected finished block %#v", d)
		}
	}
}

func TestStreamUsageFromMessageDelta(t *testing.T) {
	// Newer API versions repeat the input side in message_delta; a proxy may
	// send zeros there. Neither may lower what message_start said.
	body := event("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}}}`) +
		textBlock(0, "a") +
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":0,"cache_creation_input_tokens":7,"output_tokens":12}}`) +
		event("message_stop", `{"type":"message_stop"}`)
	events, err := streamOf(t, body)
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	stop, ok := events[len(events)-1].(llm.Stop)
	if !ok {
		t.Fatalf("last event %#v, want Stop", events[len(events)-1])
	}
	want := llm.Stop{Reason: llm.StopMaxTokens, Usage: llm.Usage{InputTokens: 100, OutputTokens: 12, CacheCreationInputTokens: 7, CacheReadInputTokens: 50}}
	if stop != want {
		t.Errorf("Stop = %#v, want %#v", stop, want)
	}
}

func TestStreamIgnoresTrailingProxyLines(t *testing.T) {
	// OpenRouter-style lines after message_stop are never read.
	events, err := streamOf(t, h2Example+"event: data\ndata: [DONE]\n\n")
	if err != io.EOF {
		t.Fatalf("stream ended with %v", err)
	}
	if _, ok := events[len(events)-1].(llm.Stop); !ok {
		t.Errorf("last event %#v, want Stop", events[len(events)-1])
	}
}
