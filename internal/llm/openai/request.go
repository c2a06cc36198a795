package openai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/coda-cli/coda/internal/llm"
)

// emptySchema is the parameters of a tool that declares none.
const emptySchema = `{"type":"object","properties":{}}`

// buildParams translates req into a Chat Completions request body.
// maxCompletionTokens picks the field for the token limit: OpenAI itself
// wants max_completion_tokens, older compatible servers know only max_tokens.
// req.Thinking and req.Cache have no Chat Completions counterpart (OpenAI
// caches prefixes by itself) and are ignored.
func buildParams(req llm.Request, maxCompletionTokens bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		if maxCompletionTokens {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range llm.Normalize(req.Messages) {
		if m.Role == llm.RoleAssistant {
			p.Messages = append(p.Messages, assistantMessage(m))
		} else {
			p.Messages = append(p.Messages, userMessages(m)...)
		}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, toolParam(t))
	}
	if req.NoTools && len(p.Tools) > 0 {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt("none")}
	}
	return p
}

// assistantMessage sends text as content, tool uses as tool_calls and
// thinking as reasoning_content (DeepSeek's thinking mode rejects a
// conversation whose tool-calling turns lost it). Signatures and redacted
// thinking mean nothing to these servers and are dropped.
func assistantMessage(m llm.Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	var text []string
	var thinking strings.Builder
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case llm.Text:
			text = append(text, b.Text)
		case llm.Thinking:
			thinking.WriteString(b.Thinking)
		case llm.ToolUse:
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      b.Name,
						Arguments: toolArguments(b.Input),
					},
				},
			})
		}
	}
	// A message with tool calls may go without content; one without must
	// carry some, even empty, or the API rejects it.
	if len(text) > 0 || len(a.ToolCalls) == 0 {
		a.Content.OfString = param.NewOpt(strings.Join(text, "\n\n"))
	}
	if thinking.Len() > 0 {
		a.SetExtraFields(map[string]any{"reasoning_content": thinking.String()})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toolArguments is the tool call's input as the JSON text the API expects;
// input that is not JSON becomes "{}" so the request stays valid.
func toolArguments(input json.RawMessage) string {
	if len(input) == 0 || !json.Valid(input) {
		return "{}"
	}
	return string(input)
}

// userMessages turns one user message into a tool message per tool result,
// followed by one user message with the images the tools returned and the
// user's own text and images. Keeping it to one user message matters to
// servers whose chat templates insist that roles alternate.
func userMessages(m llm.Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, b := range m.Blocks {
		r, ok := b.(llm.ToolResult)
		if !ok {
			continue
		}
		text, images := toolResultContent(r)
		out = append(out, openai.ToolMessage(text, r.ToolUseID))
		if len(images) > 0 {
			parts = append(parts, openai.TextContentPart("Images returned by tool call "+r.ToolUseID+":"))
			parts = append(parts, images...)
		}
	}
	toolParts := len(parts)
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case llm.Text:
			parts = append(parts, openai.TextContentPart(b.Text))
		case llm.Image:
			parts = append(parts, imagePart(b))
		}
	}
	switch {
	case len(parts) == 0:
	case len(parts) == 1 && toolParts == 0 && parts[0].OfText != nil:
		// Plain text as a string: every compatible server understands it.
		out = append(out, openai.UserMessage(parts[0].OfText.Text))
	default:
		out = append(out, openai.UserMessage(parts))
	}
	return out
}

// toolResultContent splits a tool result into the text of its tool message
// and its images. An error result says so, since the wire has no flag for it.
func toolResultContent(r llm.ToolResult) (string, []openai.ChatCompletionContentPartUnionParam) {
	var text []string
	var images []openai.ChatCompletionContentPartUnionParam
	for _, c := range r.Content {
		switch c := c.(type) {
		case llm.Text:
			text = append(text, c.Text)
		case llm.Image:
			images = append(images, imagePart(c))
		}
	}
	s := strings.Join(text, "\n")
	if len(images) > 0 {
		s = strings.TrimSpace(s + "\n(The images are in the next message.)")
	}
	if r.IsError {
		s = "Error: " + s
	}
	return s, images
}

func imagePart(img llm.Image) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
		URL: "data:" + img.MediaType + ";base64," + img.Data,
	})
}

// toolParam declares a tool. The schema goes through as raw JSON so its key
// order, which the model reads, survives.
func toolParam(t llm.ToolSpec) openai.ChatCompletionToolUnionParam {
	schema := t.InputSchema
	if len(schema) == 0 || !json.Valid(schema) {
		schema = json.RawMessage(emptySchema)
	}
	def := openai.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		def.Description = param.NewOpt(t.Description)
	}
	def.SetExtraFields(map[string]any{"parameters": schema})
	return openai.ChatCompletionFunctionTool(def)
}
