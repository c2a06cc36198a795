package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

// The PROTOCOLS.md section I transcript, verbatim.
var weatherStream = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"location"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"Paris, France"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1722610517,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":71,"completion_tokens":18,"total_tokens":89}}`,
}

func TestStreamToolCallTranscript(t *testing.T) {
	events := streamEvents(t, sse(weatherStream...))
	want := []llm.Event{
		llm.MessageStart{ID: "chatcmpl-1", Model: "gpt-4o"},
		llm.ToolUseStart{Index: 0, ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather"},
		llm.BlockDone{Index: 0, Block: llm.ToolUse{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather", Input: json.RawMessage(`{"location":"Paris, France"}`)}},
		llm.Stop{Reason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 71, OutputTokens: 18}},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n got %#v\nwant %#v", events, want)
	}
}

func TestStreamTextWithReasoningContent(t *testing.T) {
	// DeepSeek thinking mode: reasoning_content first, then content.
	events := streamEvents(t, sse(
		deltaChunk(`{"role":"assistant","content":null,"reasoning_content":""}`, "null"),
		deltaChunk(`{"content":null,"reasoning_content":"Think "}`, "null"),
		deltaChunk(`{"content":null,"reasoning_content":"hard."}`, "null"),
		deltaChunk(`{"content":"Hello","reasoning_content":null}`, "null"),
		deltaChunk(`{"content":" world"}`, "null"),
		deltaChunk(`{}`, `"stop"`),
		usageChunk(`{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}}`),
	))
	want := []llm.Event{
		llm.MessageStart{ID: "chatcmpl-1", Model: "m-1"},
		llm.ThinkingDelta{Index: 0, Text: "Think "},
		llm.ThinkingDelta{Index: 0, Text: "hard."},
		llm.TextDelta{Index: 1, Text: "Hello"},
		llm.TextDelta{Index: 1, Text: " world"},
		llm.BlockDone{Index: 0, Block: llm.Thinking{Thinking: "Think hard."}},
		llm.BlockDone{Index: 1, Block: llm.Text{Text: "Hello world"}},
		llm.Stop{Reason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 36, CacheReadInputTokens: 64, OutputTokens: 20}},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n got %#v\nwant %#v", events, want)
	}
}

func TestStreamReasoningField(t *testing.T) {
	// Ollama and newer vLLM call it "reasoning"; a server sending both
	// names for the same text must not double it.
	events := streamEvents(t, sse(
		deltaChunk(`{"role":"assistant","content":"","reasoning":"Let me "}`, "null"),
		deltaChunk(`{"reasoning":"see.","reasoning_content":"see."}`, "null"),
		deltaChunk(`{"content":"Done."}`, `"stop"`),
	))
	blocks, stop := final(t, events)
	want := []llm.Block{llm.Thinking{Thinking: "Let me see."}, llm.Text{Text: "Done."}}
	if !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks = %#v, want %#v", blocks, want)
	}
	if stop.Reason != llm.StopEndTurn {
		t.Errorf("reason = %s, want end_turn", stop.Reason)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	events := streamEvents(t, sse(
		deltaChunk(`{"role":"assistant","content":"Reading both."}`, "null"),
		deltaChunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Read","arguments":""}}]}`, "null"),
		deltaChunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Grep","arguments":"{\"pattern\":"}}]}`, "null"),
		deltaChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_path\":\"a.go\"}"}}]}`, "null"),
		deltaChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"x\"}"}}]}`, "null"),
		deltaChunk(`{}`, `"tool_calls"`),
	))
	var starts []llm.ToolUseStart
	for _, ev := range events {
		if s, ok := ev.(llm.ToolUseStart); ok {
			starts = append(starts, s)
		}
	}
	wantStarts := []llm.ToolUseStart{{Index: 1, ID: "call_a", Name: "Read"}, {Index: 2, ID: "call_b", Name: "Grep"}}
	if !reflect.DeepEqual(starts, wantStarts) {
		t.Errorf("starts = %#v, want %#v", starts, wantStarts)
	}
	blocks, stop := final(t, events)
	want := []llm.Block{
		llm.Text{Text: "Reading both."},
		llm.ToolUse{ID: "call_a", Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)},
		llm.ToolUse{ID: "call_b", Name: "Grep", Input: json.RawMessage(`{"pattern":"x"}`)},
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks:\n got %#v\nwant %#v", blocks, want)
	}
	if stop.Reason != llm.StopToolUse {
		t.Errorf("reason = %s, want tool_use", stop.Reason)
	}
}

func TestStreamToolCallQuirks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []llm.ToolUse
	}{
		{
			name: "index -1 (Bedrock)",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":-1,"id":"tooluse_1","type":"function","function":{"name":"Bash","arguments":""}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"index":-1,"function":{"arguments":"{\"command\":\"ls\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{{ID: "tooluse_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		},
		{
			name: "missing index",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"id":"c1","type":"function","function":{"name":"Bash","arguments":"{\"command\":"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"function":{"arguments":"\"ls\"}"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"id":"c2","type":"function","function":{"name":"Read","arguments":"{}"}}]}`, "null"),
			},
			want: []llm.ToolUse{
				{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				{ID: "c2", Name: "Read", Input: json.RawMessage(`{}`)},
			},
		},
		{
			name: "index reused with a new id",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"Bash","arguments":"{\"command\":"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"pwd\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{
				{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				{ID: "c2", Name: "Bash", Input: json.RawMessage(`{"command":"pwd"}`)},
			},
		},
		{
			name: "missing ids",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"index":1,"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"b\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{
				{ID: "call_0", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
				{ID: "call_1", Name: "Read", Input: json.RawMessage(`{"file_path":"b"}`)},
			},
		},
		{
			name: "whole calls in one chunk (Ollama)",
			chunks: []string{
				deltaChunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","index":0,"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}},{"id":"call_x2","index":1,"type":"function","function":{"name":"Glob","arguments":"{\"pattern\":\"*.go\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{
				{ID: "call_x1", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
				{ID: "call_x2", Name: "Glob", Input: json.RawMessage(`{"pattern":"*.go"}`)},
			},
		},
		{
			name: "same name again without id or index",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"b\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{
				{ID: "call_0", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
				{ID: "call_1", Name: "Read", Input: json.RawMessage(`{"file_path":"b"}`)},
			},
		},
		{
			name: "name repeated on every fragment",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"Bash","arguments":"{\"command\":"}}]}`, "null"),
				deltaChunk(`{"tool_calls":[{"index":0,"function":{"name":"Bash","arguments":"\"ls\"}"}}]}`, "null"),
			},
			want: []llm.ToolUse{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		},
		{
			name: "arguments as an object",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Bash","arguments":{"command":"ls -la"}}}]}`, "null"),
			},
			want: []llm.ToolUse{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}},
		},
		{
			name: "no arguments",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"TodoRead","arguments":""}}]}`, "null"),
			},
			want: []llm.ToolUse{{ID: "c1", Name: "TodoRead", Input: json.RawMessage(`{}`)}},
		},
		{
			name: "invalid JSON passed through",
			chunks: []string{
				deltaChunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Bash","arguments":"{\"command\": \"ls"}}]}`, "null"),
			},
			want: []llm.ToolUse{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command": "ls`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Servers disagree on the finish reason after tool calls;
			// "stop" must still mean the tools run.
			events := streamEvents(t, sse(append(tt.chunks, deltaChunk(`{}`, `"stop"`))...))
			blocks, stop := final(t, events)
			var got []llm.ToolUse
			for _, b := range blocks {
				got = append(got, b.(llm.ToolUse))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("tool uses:\n got %s\nwant %s", jsonString(t, got), jsonString(t, tt.want))
			}
			if stop.Reason != llm.StopToolUse {
				t.Errorf("reason = %s, want tool_use", stop.Reason)
			}
			// Every call is announced once, before it is done, with
			// the id and name it ends with.
			started := map[int]llm.ToolUseStart{}
			for _, ev := range events {
				switch ev := ev.(type) {
				case llm.ToolUseStart:
					if _, dup := started[ev.Index]; dup {
						t.Errorf("block %d started twice", ev.Index)
					}
					started[ev.Index] = ev
				case llm.BlockDone:
					s, ok := started[ev.Index]
					use := ev.Block.(llm.ToolUse)
					if !ok || s.ID != use.ID || s.Name != use.Name {
						t.Errorf("BlockDone %#v without a matching ToolUseStart (%#v)", ev, s)
					}
				}
			}
		})
	}
}

func TestStreamStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		extra  string // a delta before the finish
		want   llm.StopReason
	}{
		{`"stop"`, `{"content":"hi"}`, llm.StopEndTurn},
		{`"length"`, `{"content":"hi"}`, llm.StopMaxTokens},
		{`"content_filter"`, `{"content":"hi"}`, llm.StopRefusal},
		{`"tool_calls"`, `{"tool_calls":[{"index":0,"id":"c","function":{"name":"Read","arguments":"{}"}}]}`, llm.StopToolUse},
		{`"function_call"`, `{"tool_calls":[{"index":0,"id":"c","function":{"name":"Read","arguments":"{}"}}]}`, llm.StopToolUse},
		{`"length"`, `{"tool_calls":[{"index":0,"id":"c","function":{"name":"Read","arguments":"{}"}}]}`, llm.StopToolUse},
		{`"tool_calls"`, `{"content":"no call after all"}`, llm.StopEndTurn},
		{`"stop"`, `{"refusal":"I can't help with that."}`, llm.StopRefusal},
		{`"eos"`, `{"content":"hi"}`, llm.StopEndTurn},
	}
	for _, tt := range tests {
		t.Run(tt.finish+" after "+tt.extra, func(t *testing.T) {
			_, stop := final(t, streamEvents(t, sse(deltaChunk(tt.extra, "null"), deltaChunk(`{}`, tt.finish))))
			if stop.Reason != tt.want {
				t.Errorf("reason = %s, want %s", stop.Reason, tt.want)
			}
		})
	}
}

func TestStreamRefusalIsShownAsText(t *testing.T) {
	events := streamEvents(t, sse(deltaChunk(`{"refusal":"I can't help with that."}`, `"stop"`)))
	blocks, _ := final(t, events)
	if want := []llm.Block{llm.Text{Text: "I can't help with that."}}; !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks = %#v, want %#v", blocks, want)
	}
}

func TestStreamUsage(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   llm.Usage
	}{
		{
			name:   "final usage chunk with cached tokens",
			chunks: []string{deltaChunk(`{"content":"x"}`, `"stop"`), usageChunk(`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920},"completion_tokens_details":{"reasoning_tokens":0}}`)},
			want:   llm.Usage{InputTokens: 86, CacheReadInputTokens: 1920, OutputTokens: 300},
		},
		{
			name: "usage on every chunk, the last one counts",
			chunks: []string{
				`{"id":"a","choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":10,"completion_tokens":1}}`,
				`{"id":"a","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":7}}`,
			},
			want: llm.Usage{InputTokens: 10, OutputTokens: 7},
		},
		{
			name:   "DeepSeek cache hit tokens",
			chunks: []string{deltaChunk(`{"content":"x"}`, `"stop"`), usageChunk(`{"prompt_tokens":50,"completion_tokens":5,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":18}`)},
			want:   llm.Usage{InputTokens: 18, CacheReadInputTokens: 32, OutputTokens: 5},
		},
		{
			name:   "no usage at all",
			chunks: []string{deltaChunk(`{"content":"x"}`, `"stop"`)},
			want:   llm.Usage{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stop := final(t, streamEvents(t, sse(tt.chunks...)))
			if stop.Usage != tt.want {
				t.Errorf("usage = %+v, want %+v", stop.Usage, tt.want)
			}
		})
	}
}

func TestStreamLooseChunks(t *testing.T) {
	// No id, created or model; choices without index; a second choice
	// that is not ours; comments and blank data lines.
	events := streamEvents(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		io.WriteString(w, ": keep-alive\n\n")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"A"}},{"index":1,"delta":{"content":"Z"}}]}`+"\n\n")
		io.WriteString(w, "data:\n\n")
		io.WriteString(w, `data:{"choices":[{"delta":{"content":"B"},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	if start, ok := events[0].(llm.MessageStart); !ok || start.Model != "m-1" {
		t.Errorf("first event = %#v, want MessageStart with the requested model", events[0])
	}
	blocks, _ := final(t, events)
	if want := []llm.Block{llm.Text{Text: "AB"}}; !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks = %#v, want %#v", blocks, want)
	}
}

func TestStreamEmptyAnswer(t *testing.T) {
	events := streamEvents(t, sse())
	want := []llm.Event{llm.MessageStart{Model: "m-1"}, llm.Stop{Reason: llm.StopEndTurn}}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events = %#v, want %#v", events, want)
	}
}

func TestStreamFinishedWithoutDone(t *testing.T) {
	// The finish reason arrived; only [DONE] (and usage) were lost.
	events := streamEvents(t, sseHandler(deltaChunk(`{"content":"ok"}`, "null"), deltaChunk(`{}`, `"stop"`)))
	blocks, stop := final(t, events)
	if want := []llm.Block{llm.Text{Text: "ok"}}; !reflect.DeepEqual(blocks, want) || stop.Reason != llm.StopEndTurn {
		t.Errorf("blocks = %#v, stop = %#v", blocks, stop)
	}
}
