package llm

// InterruptedResult is the text of the synthetic error result given to a
// tool_use that never got a real one (the run was cancelled).
const InterruptedResult = "Interrupted: the tool call did not run to completion."

// Normalize returns msgs in the shape every provider accepts: empty text
// blocks and empty messages dropped, adjacent same-role messages merged,
// the first message from the user, every tool_use answered by a tool_result
// in the very next user message (a synthetic error result when it is
// missing), tool_results without their tool_use dropped, and tool_result
// blocks first in their message. msgs is not modified. Thinking blocks pass
// through unchanged.
func Normalize(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		blocks := make([]Block, 0, len(m.Blocks))
		for _, b := range m.Blocks {
			if t, ok := b.(Text); ok && t.Text == "" {
				continue
			}
			blocks = append(blocks, b)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			prev := &out[n-1]
			prev.Blocks = append(append([]Block(nil), prev.Blocks...), blocks...)
			continue
		}
		m.Blocks = blocks
		out = append(out, m)
	}

	if len(out) > 0 && out[0].Role != RoleUser {
		out = append([]Message{{Role: RoleUser, Blocks: []Block{Text{Text: "(continued)"}}, Meta: Meta{Reminder: true}}}, out...)
	}

	fixed := make([]Message, 0, len(out)+1)
	var pending []ToolUse // tool_uses of the previous assistant message
	for i, m := range out {
		if m.Role == RoleAssistant {
			if len(pending) > 0 {
				fixed = append(fixed, Message{Role: RoleUser, Blocks: answerMissing(pending, nil), Meta: Meta{Reminder: true}})
			}
			fixed = append(fixed, m)
			pending = m.ToolUses()
			if i == len(out)-1 && len(pending) > 0 {
				fixed = append(fixed, Message{Role: RoleUser, Blocks: answerMissing(pending, nil), Meta: Meta{Reminder: true}})
				pending = nil
			}
			continue
		}
		m.Blocks = answerMissing(pending, m.Blocks)
		pending = nil
		if len(m.Blocks) == 0 {
			continue
		}
		fixed = append(fixed, m)
	}
	return fixed
}

// answerMissing returns blocks with tool_results first: the results for
// uses in order (synthetic ones for any that blocks lacks), then every
// other non-result block. Results for ids not in uses are dropped.
func answerMissing(uses []ToolUse, blocks []Block) []Block {
	results := make(map[string]ToolResult)
	var rest []Block
	for _, b := range blocks {
		if r, ok := b.(ToolResult); ok {
			if _, dup := results[r.ToolUseID]; !dup {
				results[r.ToolUseID] = r
			}
			continue
		}
		rest = append(rest, b)
	}
	out := make([]Block, 0, len(uses)+len(rest))
	for _, u := range uses {
		r, ok := results[u.ID]
		if !ok {
			r = ToolResult{ToolUseID: u.ID, Content: []Block{Text{Text: InterruptedResult}}, IsError: true}
		}
		out = append(out, r)
	}
	return append(out, rest...)
}
