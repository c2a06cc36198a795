package compact

import (
	"github.com/coda-cli/coda/internal/llm"
)

// Token estimates. Without the provider's tokenizer, a token is taken as
// four bytes of the block's JSON: close for English and code, and the same
// rule the wire fake uses. What the provider reported for the last
// response anchors the estimate, so the guess covers only what came since.

// imageTokens is the rough cost of one image; its base64 size says little.
const imageTokens = 2000

// Tokens estimates the tokens of text.
func Tokens(text string) int { return (len(text) + 3) / 4 }

func blockTokens(b llm.Block) int {
	switch v := b.(type) {
	case llm.Text:
		return Tokens(v.Text) + 3
	case llm.Thinking:
		return Tokens(v.Thinking) + Tokens(v.Signature) + 5
	case llm.RedactedThinking:
		return Tokens(v.Data) + 5
	case llm.ToolUse:
		return Tokens(v.ID) + Tokens(v.Name) + Tokens(string(v.Input)) + 10
	case llm.ToolResult:
		n := Tokens(v.ToolUseID) + 10
		for _, c := range v.Content {
			n += blockTokens(c)
		}
		return n
	case llm.Image:
		return imageTokens
	}
	return 0
}

func messageTokens(m llm.Message) int {
	n := 4
	for _, b := range m.Blocks {
		n += blockTokens(b)
	}
	return n
}

// estimateMessages estimates the tokens msgs add to a request.
func estimateMessages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageTokens(m)
	}
	return n
}

// lastUsage finds the newest assistant message that carries the
// provider's usage, returning its index, or -1.
func lastUsage(msgs []llm.Message) int {
	for j := len(msgs) - 1; j >= 0; j-- {
		m := msgs[j]
		if m.Role == llm.RoleAssistant && m.Meta.Usage != nil && m.Meta.Usage.TotalInput() > 0 {
			return j
		}
	}
	return -1
}
