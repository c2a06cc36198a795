package llmtest_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	antoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaoption "github.com/openai/openai-go/v3/option"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// These two tests show the intended use: script the model's turns, point a
// client at the fake, run the conversation, then check what the client sent.
// A test of coda's binary does the same with ANTHROPIC_BASE_URL=s.URL() or
// OPENAI_BASE_URL=s.OpenAIURL().

func TestExampleAnthropicToolUse(t *testing.T) {
	s := llmtest.NewServer(t)
	s.Enqueue(
		llmtest.Reply(llmtest.Text("I'll read it."), llmtest.ToolCall("toolu_1", "Read", `{"file_path":"hello.txt"}`)),
		llmtest.Reply(llmtest.Text("It says hello.")),
	)
	client := anthropic.NewClient(antoption.WithBaseURL(s.URL()), antoption.WithAPIKey("test"))
	params := anthropic.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What does hello.txt say?"))},
	}

	first := client.Messages.NewStreaming(context.Background(), params)
	var answer anthropic.Message
	for first.Next() {
		answer.Accumulate(first.Current())
	}
	if err := first.Err(); err != nil || answer.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("first turn: %v, stop %q", err, answer.StopReason)
	}
	// The client runs the tool and sends its result back.
	params.Messages = append(params.Messages, answer.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", "hello", false)))
	second := client.Messages.NewStreaming(context.Background(), params)
	answer = anthropic.Message{}
	for second.Next() {
		answer.Accumulate(second.Current())
	}
	if err := second.Err(); err != nil || answer.Content[0].Text != "It says hello." {
		t.Fatalf("second turn: %v, %+v", err, answer.Content)
	}

	if got := s.Requests()[1].LastUserText(); got != "hello" {
		t.Errorf("the tool result the model saw: %q", got)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("the real API would have refused: %v", r)
	}
}

func TestExampleOpenAIToolUse(t *testing.T) {
	s := llmtest.NewServer(t)
	s.Enqueue(
		llmtest.Reply(llmtest.ToolCall("call_1", "Read", `{"file_path":"hello.txt"}`)),
		llmtest.Reply(llmtest.Text("It says hello.")),
	)
	client := openai.NewClient(oaoption.WithBaseURL(s.OpenAIURL()), oaoption.WithAPIKey("test"))
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-5",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What does hello.txt say?")},
	}

	var acc openai.ChatCompletionAccumulator
	first := client.Chat.Completions.NewStreaming(context.Background(), params)
	for first.Next() {
		acc.AddChunk(first.Current())
	}
	if err := first.Err(); err != nil || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("first turn: %v, %+v", err, acc.ChatCompletion)
	}
	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(), openai.ToolMessage("hello", "call_1"))
	acc = openai.ChatCompletionAccumulator{}
	second := client.Chat.Completions.NewStreaming(context.Background(), params)
	for second.Next() {
		acc.AddChunk(second.Current())
	}
	if err := second.Err(); err != nil || acc.Choices[0].Message.Content != "It says hello." {
		t.Fatalf("second turn: %v, %+v", err, acc.ChatCompletion)
	}

	if got := s.Requests()[1].LastUserText(); got != "hello" {
		t.Errorf("the tool result the model saw: %q", got)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("the real API would have refused: %v", r)
	}
}
