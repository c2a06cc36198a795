package compact

import "github.com/coda-cli/coda/internal/llm"

// tailStart returns where the verbatim tail of msgs begins. The tail grows
// from the newest message backwards until it holds at least minTokens and
// minMessages, but never beyond maxTokens nor half of the conversation,
// and the head keeps at least the first message. It never begins with a
// user message whose tool results answer the message before it: a
// tool_use and its result stay on the same side.
func tailStart(msgs []llm.Message, minTokens, minMessages, maxTokens int) int {
	total := estimateMessages(msgs)
	maxTokens = min(maxTokens, total/2)
	k, tokens := len(msgs), 0
	for k > 1 {
		if tokens >= minTokens && len(msgs)-k >= minMessages {
			break
		}
		n := messageTokens(msgs[k-1])
		if tokens+n > maxTokens {
			break
		}
		tokens += n
		k--
	}
	// Starting on tool results: take their calls too when they fit, or
	// leave the results out.
	for k < len(msgs) && answersPrevious(msgs[k]) {
		if n := messageTokens(msgs[k-1]); k > 1 && tokens+n <= maxTokens {
			tokens += n
			k--
			continue
		}
		tokens -= messageTokens(msgs[k])
		k++
	}
	return k
}

// answersPrevious reports whether m carries tool results, which belong
// with the tool calls of the message before it.
func answersPrevious(m llm.Message) bool {
	if m.Role != llm.RoleUser {
		return false
	}
	for _, b := range m.Blocks {
		if _, ok := b.(llm.ToolResult); ok {
			return true
		}
	}
	return false
}
