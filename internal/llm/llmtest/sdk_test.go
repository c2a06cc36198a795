package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	antoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaoption "github.com/openai/openai-go/v3/option"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// The official SDKs' streaming decoders must read every scripted turn.

func anthropicClient(s *llmtest.Server) anthropic.Client {
	return anthropic.NewClient(antoption.WithBaseURL(s.URL()), antoption.WithAPIKey("test-key"), antoption.WithMaxRetries(0))
}

func openAIClient(s *llmtest.Server) openai.Client {
	return openai.NewClient(oaoption.WithBaseURL(s.OpenAIURL()), oaoption.WithAPIKey("test-key"), oaoption.WithMaxRetries(0))
}

// antStream runs one streaming request and accumulates the message.
func antStream(t *testing.T, c anthropic.Client, params anthropic.MessageNewParams) (anthropic.Message, error) {
	t.Helper()
	stream := c.Messages.NewStreaming(context.Background(), params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulate: %v", err)
		}
	}
	return msg, stream.Err()
}

func TestAnthropicSDKDecodesEveryTurn(t *testing.T) {
	s := llmtest.NewServer(t)
	c := anthropicClient(s)
	s.Enqueue(llmtest.Reply(
		llmtest.Thinking("I should read the file first."),
		llmtest.RedactedThinking("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"),
		llmtest.Text("Let me read it — ünïcödé included."),
		llmtest.ToolCall("", "read_file", `{"path": "notes/a.txt", "limit": 20}`),
	))
	s.Enqueue(llmtest.Reply(llmtest.Text("The file says hello.")))
	params := anthropic.MessageNewParams{
		Model:     "claude-test-1",
		MaxTokens: 4096,
		Thinking:  anthropic.ThinkingConfigParamOfEnabled(1024),
		System:    []anthropic.TextBlockParam{{Text: "You are coda."}},
		Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"path": map[string]any{"type": "string"}},
		}, "read_file")},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is in notes/a.txt?"))},
	}
	msg, err := antStream(t, c, params)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if msg.Model != "claude-test-1" || msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 4 {
		t.Fatalf("message %+v", msg)
	}
	var toolID string
	for _, block := range msg.Content {
		switch b := block.AsAny().(type) {
		case anthropic.ThinkingBlock:
			if b.Thinking != "I should read the file first." || b.Signature == "" {
				t.Errorf("thinking %+v", b)
			}
		case anthropic.RedactedThinkingBlock:
			if !strings.HasPrefix(b.Data, "EmwKAhgB") {
				t.Errorf("redacted %+v", b)
			}
		case anthropic.TextBlock:
			if b.Text != "Let me read it — ünïcödé included." {
				t.Errorf("text %q", b.Text)
			}
		case anthropic.ToolUseBlock:
			var in struct {
				Path  string `json:"path"`
				Limit int    `json:"limit"`
			}
			if err := json.Unmarshal(b.Input, &in); err != nil || in.Path != "notes/a.txt" || in.Limit != 20 {
				t.Errorf("tool input %s: %v", b.Input, err)
			}
			toolID = b.ID
		}
	}
	if msg.Usage.InputTokens == 0 || msg.Usage.OutputTokens < 10 {
		t.Errorf("usage %+v", msg.Usage)
	}

	// The SDK's own round trip (thinking and signature included) is accepted.
	params.Messages = append(params.Messages, msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(toolID, "hello", false)))
	second, err := antStream(t, c, params)
	if err != nil {
		t.Fatalf("second turn: %v (rejections %v)", err, s.Rejections())
	}
	if second.StopReason != anthropic.StopReasonEndTurn || second.Content[0].Text != "The file says hello." {
		t.Errorf("second message %+v", second)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("rejections %v", r)
	}
}

func TestAnthropicSDKSeesFaults(t *testing.T) {
	s := llmtest.NewServer(t)
	c := anthropicClient(s)
	params := anthropic.MessageNewParams{
		Model: "claude-test-1", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
	s.Enqueue(llmtest.RateLimited(3*time.Second), llmtest.Overloaded(), llmtest.ServerError(), llmtest.PromptTooLong())
	for _, status := range []int{429, 529, 500, 400} {
		_, err := antStream(t, c, params)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status {
			t.Errorf("want an API error with status %d, got %v", status, err)
		}
	}

	s.Enqueue(llmtest.OverloadedMidStream(llmtest.Text("partial")))
	msg, err := antStream(t, c, params)
	if err == nil || !strings.Contains(err.Error(), "overloaded_error") || msg.Content[0].Text != "partial" {
		t.Errorf("overloaded mid-stream: %v, content %+v", err, msg.Content)
	}
	s.Enqueue(llmtest.DropMidStream(llmtest.Text("partial")))
	if _, err := antStream(t, c, params); err == nil {
		t.Error("dropped stream: no error")
	}
}

func TestOpenAISDKDecodesEveryTurn(t *testing.T) {
	s := llmtest.NewServer(t)
	c := openAIClient(s)
	s.Enqueue(llmtest.Reply(
		llmtest.Text("Reading both."),
		llmtest.ToolCall("", "read_file", `{"path": "a.txt"}`),
		llmtest.ToolCall("", "read_file", `{"path": "b.txt"}`),
	))
	s.Enqueue(llmtest.Reply(llmtest.Text("Both say hi.")).WithStop("max_tokens"))
	params := openai.ChatCompletionNewParams{
		Model:         "gpt-test-1",
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "read_file",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		})},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are coda."), openai.UserMessage("Read a and b.")},
	}
	acc, err := oaStream(t, c, params)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	choice := acc.Choices[0]
	if acc.Model != "gpt-test-1" || choice.FinishReason != "tool_calls" || choice.Message.Content != "Reading both." || len(choice.Message.ToolCalls) != 2 {
		t.Fatalf("completion %+v", acc.ChatCompletion)
	}
	if choice.Message.ToolCalls[1].Function.Arguments != `{"path": "b.txt"}` || acc.Usage.PromptTokens == 0 {
		t.Errorf("tool calls %+v usage %+v", choice.Message.ToolCalls, acc.Usage)
	}

	params.Messages = append(params.Messages, choice.Message.ToParam())
	for i, call := range choice.Message.ToolCalls {
		params.Messages = append(params.Messages, openai.ToolMessage([]string{"hi from a", "hi from b"}[i], call.ID))
	}
	acc, err = oaStream(t, c, params)
	if err != nil {
		t.Fatalf("second turn: %v (rejections %v)", err, s.Rejections())
	}
	if acc.Choices[0].FinishReason != "length" || acc.Choices[0].Message.Content != "Both say hi." {
		t.Errorf("second completion %+v", acc.ChatCompletion)
	}
	if got := s.Requests()[1].LastUserText(); got != "hi from a\nhi from b" {
		t.Errorf("LastUserText %q", got)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("rejections %v", r)
	}
}

func oaStream(t *testing.T, c openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, error) {
	t.Helper()
	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator refused chunk %s", stream.Current().RawJSON())
		}
	}
	return acc, stream.Err()
}

func TestOpenAISDKSeesFaults(t *testing.T) {
	s := llmtest.NewServer(t)
	c := openAIClient(s)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test-1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
	s.Enqueue(llmtest.RateLimited(time.Second), llmtest.Overloaded(), llmtest.ServerError(), llmtest.PromptTooLong())
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInternalServerError, http.StatusBadRequest} {
		_, err := oaStream(t, c, params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status {
			t.Errorf("want an API error with status %d, got %v", status, err)
		}
	}
	s.Enqueue(llmtest.OverloadedMidStream(llmtest.Text("partial")), llmtest.DropMidStream(llmtest.Text("partial")))
	if _, err := oaStream(t, c, params); err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("overloaded mid-stream: %v", err)
	}
	if _, err := oaStream(t, c, params); err == nil {
		t.Error("dropped stream: no error")
	}
}
