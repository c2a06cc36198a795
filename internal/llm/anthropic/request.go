package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/coda-cli/coda/internal/llm"
)

const (
	// defaultMaxTokens is used when a request names no limit; the API
	// requires one.
	defaultMaxTokens = 8192
	// minThinkingBudget is the smallest budget_tokens the API accepts.
	minThinkingBudget = 1024
	// maxCacheBreakpoints is the API's limit of cache_control markers.
	maxCacheBreakpoints = 4
)

// emptyObject is the input sent for a tool_use whose recorded input is not
// a JSON object: the API rejects anything else.
var emptyObject = json.RawMessage(`{}`)

// buildParams converts req into the SDK's request body.
func buildParams(req llm.Request) sdk.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model)}

	if t := req.Thinking; t != nil {
		if t.Adaptive {
			params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
		} else {
			var budget int
			budget, maxTokens = thinkingBudget(t.BudgetTokens, maxTokens)
			// Sent as raw JSON rather than OfEnabled: for some models the
			// SDK prints a deprecation warning for OfEnabled straight to
			// stderr, which belongs to the TUI.
			params.Thinking = param.Override[sdk.ThinkingConfigParamUnion](
				json.RawMessage(fmt.Sprintf(`{"type":"enabled","budget_tokens":%d}`, budget)))
		}
	}
	params.MaxTokens = int64(maxTokens)

	breakpoints := 0
	cache := func() sdk.CacheControlEphemeralParam {
		if !req.Cache || breakpoints >= maxCacheBreakpoints {
			return sdk.CacheControlEphemeralParam{}
		}
		breakpoints++
		return sdk.NewCacheControlEphemeralParam()
	}

	// Breakpoints follow the prefix order the API caches in: tools, then
	// system, then messages.
	for i, spec := range req.Tools {
		tool := &sdk.ToolParam{Name: spec.Name, InputSchema: inputSchema(spec.InputSchema)}
		if spec.Description != "" {
			tool.Description = param.NewOpt(spec.Description)
		}
		if i == len(req.Tools)-1 {
			tool.CacheControl = cache()
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tool})
	}
	if req.NoTools && len(req.Tools) > 0 {
		// Only with tools: the API rejects a tool_choice without them.
		params.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
	}

	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: cache()}}
	}

	msgs := llm.Normalize(dropUnsigned(req.Messages))
	params.Messages = make([]sdk.MessageParam, 0, len(msgs))
	for i, m := range msgs {
		content := convertBlocks(m.Blocks)
		if i == len(msgs)-1 {
			markLastCacheable(content, cache)
		}
		if m.Role == llm.RoleAssistant {
			params.Messages = append(params.Messages, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: content}})
		} else {
			params.Messages = append(params.Messages, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: content}})
		}
	}
	return params
}

// thinkingBudget returns a budget the API accepts and a max_tokens above
// it. It prefers lowering the budget, since max_tokens is usually the
// model's output ceiling.
func thinkingBudget(budget, maxTokens int) (int, int) {
	budget = max(budget, minThinkingBudget)
	switch {
	case budget < maxTokens:
		return budget, maxTokens
	case maxTokens-1 >= minThinkingBudget:
		return maxTokens - 1, maxTokens
	default:
		return budget, budget + 1
	}
}

// inputSchema passes a tool's JSON schema through as given; building it
// from the SDK's fields would reorder its keys and break the prompt cache.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	if !isObject(raw) {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	return param.Override[sdk.ToolInputSchemaParam](raw)
}

// dropUnsigned removes thinking blocks without a signature and empty
// redacted_thinking blocks. They come from an interrupted stream or another
// provider, and the API rejects them.
func dropUnsigned(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if slices.ContainsFunc(m.Blocks, unsigned) {
			m.Blocks = slices.DeleteFunc(slices.Clone(m.Blocks), unsigned)
		}
		out = append(out, m)
	}
	return out
}

func unsigned(b llm.Block) bool {
	switch v := b.(type) {
	case llm.Thinking:
		return v.Signature == ""
	case llm.RedactedThinking:
		return v.Data == ""
	}
	return false
}

func convertBlocks(blocks []llm.Block) []sdk.ContentBlockParamUnion {
	out := make([]sdk.ContentBlockParamUnion, 0, len(blocks))
	for _, b := range blocks {
		switch v := b.(type) {
		case llm.Text:
			out = append(out, sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: v.Text}})
		case llm.Thinking:
			out = append(out, sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{Thinking: v.Thinking, Signature: v.Signature}})
		case llm.RedactedThinking:
			out = append(out, sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: v.Data}})
		case llm.ToolUse:
			input := v.Input
			if !isObject(input) {
				input = emptyObject
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: v.ID, Name: v.Name, Input: input}})
		case llm.ToolResult:
			out = append(out, sdk.ContentBlockParamUnion{OfToolResult: toolResult(v)})
		case llm.Image:
			out = append(out, sdk.ContentBlockParamUnion{OfImage: image(v)})
		}
	}
	return out
}

func toolResult(r llm.ToolResult) *sdk.ToolResultBlockParam {
	p := &sdk.ToolResultBlockParam{ToolUseID: r.ToolUseID}
	if r.IsError {
		p.IsError = param.NewOpt(true)
	}
	for _, c := range r.Content {
		switch v := c.(type) {
		case llm.Text:
			if v.Text == "" {
				continue // the API rejects empty text blocks
			}
			p.Content = append(p.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: v.Text}})
		case llm.Image:
			p.Content = append(p.Content, sdk.ToolResultBlockParamContentUnion{OfImage: image(v)})
		}
	}
	return p
}

func image(img llm.Image) *sdk.ImageBlockParam {
	return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
		Data:      img.Data,
		MediaType: sdk.Base64ImageSourceMediaType(img.MediaType),
	}}}
}

// markLastCacheable puts a breakpoint on the last block of content that
// can carry one (thinking blocks cannot).
func markLastCacheable(content []sdk.ContentBlockParamUnion, cache func() sdk.CacheControlEphemeralParam) {
	for i := len(content) - 1; i >= 0; i-- {
		var cc *sdk.CacheControlEphemeralParam
		switch b := content[i]; {
		case b.OfText != nil:
			cc = &b.OfText.CacheControl
		case b.OfImage != nil:
			cc = &b.OfImage.CacheControl
		case b.OfToolUse != nil:
			cc = &b.OfToolUse.CacheControl
		case b.OfToolResult != nil:
			cc = &b.OfToolResult.CacheControl
		default:
			continue
		}
		*cc = cache()
		return
	}
}

// isObject reports whether raw is a valid JSON object.
func isObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed)
}
