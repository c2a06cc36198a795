package llmtest

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Validation of Anthropic Messages requests. Error texts follow the real
// API's where they are known (PROTOCOLS.md H.4, H.5).

type antRequest struct {
	Model        string            `json:"model"`
	MaxTokens    *int              `json:"max_tokens"`
	Messages     []antMessageIn    `json:"messages"`
	System       json.RawMessage   `json:"system"`
	Tools        []json.RawMessage `json:"tools"`
	ToolChoice   json.RawMessage   `json:"tool_choice"`
	Thinking     json.RawMessage   `json:"thinking"`
	Temperature  *float64          `json:"temperature"`
	Stream       bool              `json:"stream"`
	CacheControl json.RawMessage   `json:"cache_control"`
}

type antMessageIn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antBlockIn struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	raw       json.RawMessage
}

// antOtherBlocks are content block types accepted without further checks.
var antOtherBlocks = map[string]bool{
	"image": true, "document": true, "search_result": true, "redacted_thinking": true,
	"server_tool_use": true, "web_search_tool_result": true, "web_fetch_tool_result": true,
	"code_execution_tool_result": true, "bash_code_execution_tool_result": true,
	"text_editor_code_execution_tool_result": true, "tool_search_tool_result": true,
	"mcp_tool_use": true, "mcp_tool_result": true, "container_upload": true,
}

func invalid(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", message: fmt.Sprintf(format, args...)}
}

func (a anthropicAPI) check(h http.Header, body []byte) (*prompt, *apiError) {
	if h.Get("x-api-key") == "" && !strings.HasPrefix(h.Get("Authorization"), "Bearer ") {
		return nil, &apiError{status: http.StatusUnauthorized, typ: "authentication_error", message: "x-api-key header is required"}
	}
	if h.Get("anthropic-version") == "" {
		return nil, invalid("anthropic-version: header is required")
	}
	var req antRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, invalid("There was an error parsing the body of your request: %v", err)
	}
	switch {
	case req.Model == "":
		return nil, invalid("model: Field required")
	case req.MaxTokens == nil:
		return nil, invalid("max_tokens: Field required")
	case *req.MaxTokens < 1:
		return nil, invalid("max_tokens: Input should be greater than or equal to 1")
	case len(req.Messages) == 0:
		return nil, invalid("messages: List should have at least 1 item after validation, not 0")
	}
	p := newPrompt("anthropic", req.Model)
	p.stream = req.Stream
	markers := 0
	addPart := func(key string, raw json.RawMessage, extra string) {
		c, ttls := canonical(raw)
		at := p.add([]byte(extra+key+string(c)), estimateTokens(len(c)))
		for _, ttl := range ttls {
			p.mark(at, ttl)
		}
		markers += len(ttls)
	}

	if e := checkAntTools(req.Tools); e != nil {
		return nil, e
	}
	for _, raw := range req.Tools {
		addPart("tool:", raw, "")
	}
	system, e := antSystemBlocks(req.System)
	if e != nil {
		return nil, e
	}
	for _, raw := range system {
		addPart("system:", raw, "")
	}

	msgs, e := checkAntMessages(req.Messages)
	if e != nil {
		return nil, e
	}
	// Tool choice and thinking settings invalidate the cached messages.
	settings := "settings:" + string(canonicalOrNull(req.ToolChoice)) + string(canonicalOrNull(req.Thinking)) + "\x00"
	for i, blocks := range msgs {
		for _, b := range blocks {
			addPart(req.Messages[i].Role+":", b.raw, settings)
			settings = ""
		}
	}
	if len(req.CacheControl) > 0 && string(req.CacheControl) != "null" && len(p.parts) > 0 {
		var cc any
		json.Unmarshal(req.CacheControl, &cc)
		p.mark(len(p.parts)-1, ttlOf(cc))
		markers++
	}
	if markers > maxCacheControls {
		return nil, invalid("A maximum of %d blocks with cache_control may be provided. Found %d.", maxCacheControls, markers)
	}
	if e := checkAntThinking(req); e != nil {
		return nil, e
	}
	return p, nil
}

func canonicalOrNull(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	c, _ := canonical(raw)
	return c
}

func checkAntTools(tools []json.RawMessage) *apiError {
	seen := map[string]bool{}
	for i, raw := range tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return invalid("tools.%d: Input should be a valid dictionary", i)
		}
		if !validToolName(t.Name, 64) {
			return invalid("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
		if seen[t.Name] {
			return invalid("tools: Tool names must be unique.")
		}
		seen[t.Name] = true
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool such as web_search_20250305
		}
		if len(t.InputSchema) == 0 {
			return invalid("tools.%d.custom.input_schema: Field required", i)
		}
		var schema map[string]any
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema == nil {
			return invalid("tools.%d.custom.input_schema: Input should be a valid dictionary", i)
		}
		if schema["type"] != "object" {
			return invalid("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
	}
	return nil
}

// validToolName matches ^[a-zA-Z0-9_-]{1,maxLen}$.
func validToolName(name string, maxLen int) bool {
	if name == "" || len(name) > maxLen {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// antSystemBlocks returns the system prompt as text blocks; a string counts
// as one text block, as the API caches it the same way.
func antSystemBlocks(raw json.RawMessage) ([]json.RawMessage, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("system: Input should be a valid string")
		}
		return []json.RawMessage{textBlockJSON(s)}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, invalid("system: Input should be a valid list")
	}
	for i, b := range blocks {
		var t struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(b, &t) != nil || t.Type != "text" || t.Text == nil {
			return nil, invalid("system.%d: Input should be a valid text block", i)
		}
		if *t.Text == "" {
			return nil, invalid("system: text content blocks must be non-empty")
		}
	}
	return blocks, nil
}

func textBlockJSON(s string) json.RawMessage {
	b, _ := marshalJSON(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", s})
	return b
}

// checkAntMessages checks roles, every content block and the pairing of
// tool_use with tool_result, and returns each message's blocks.
func checkAntMessages(in []antMessageIn) ([][]antBlockIn, *apiError) {
	msgs := make([][]antBlockIn, len(in))
	for i, m := range in {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		blocks, e := antContent(i, m.Content)
		if e != nil {
			return nil, e
		}
		msgs[i] = blocks
	}
	if in[0].Role != "user" {
		return nil, invalid(`messages: first message must use the "user" role`)
	}
	if in[len(in)-1].Role == "assistant" {
		return nil, invalid("This model does not support assistant message prefill. The conversation must end with a user message.")
	}
	turns := mergeTurns(in, msgs)
	latest := -1 // first message of the latest assistant turn
	for _, t := range turns {
		if t.role == "assistant" {
			latest = t.first
		}
	}
	toolUseIDs := map[string]bool{}
	for i, blocks := range msgs {
		for j, b := range blocks {
			inLatest := turnOf(turns, i).first == latest
			if e := checkAntBlock(i, j, in[i].Role, b, inLatest, toolUseIDs); e != nil {
				return nil, e
			}
		}
	}
	for k := range turns {
		if e := checkAntPairing(turns, k); e != nil {
			return nil, e
		}
	}
	return msgs, nil
}

// antContent decodes a message's content; a string is one text block.
func antContent(i int, raw json.RawMessage) ([]antBlockIn, *apiError) {
	raw = bytes.TrimSpace(raw)
	empty := invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, invalid("messages.%d.content: Field required", i)
	}
	var raws []json.RawMessage
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("messages.%d.content: Input should be a valid string", i)
		}
		if s == "" {
			return nil, empty
		}
		raws = []json.RawMessage{textBlockJSON(s)}
	} else if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, invalid("messages.%d.content: Input should be a valid list", i)
	}
	if len(raws) == 0 {
		return nil, empty
	}
	blocks := make([]antBlockIn, len(raws))
	for j, r := range raws {
		if err := json.Unmarshal(r, &blocks[j]); err != nil {
			return nil, invalid("messages.%d.content.%d: Input should be a valid dictionary", i, j)
		}
		blocks[j].raw = r
	}
	return blocks, nil
}

func checkAntBlock(i, j int, role string, b antBlockIn, latest bool, toolUseIDs map[string]bool) *apiError {
	at := fmt.Sprintf("messages.%d.content.%d", i, j)
	switch b.Type {
	case "text":
		switch {
		case b.Text == nil:
			return invalid("%s.text: Field required", at)
		case *b.Text == "":
			return invalid("messages: text content blocks must be non-empty")
		case strings.TrimSpace(*b.Text) == "":
			return invalid("messages: text content blocks must contain non-whitespace text")
		}
	case "tool_use":
		if role != "assistant" {
			return invalid("%s: tool_use blocks may only appear in assistant messages", at)
		}
		if b.ID == "" {
			return invalid("%s.tool_use.id: Field required", at)
		}
		if toolUseIDs[b.ID] {
			return invalid("%s: `tool_use` ids must be unique", at)
		}
		toolUseIDs[b.ID] = true
		if !validToolName(b.Name, 200) {
			return invalid("%s.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,200}$'", at)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(b.Input, &obj) != nil || obj == nil {
			return invalid("%s.tool_use.input: Input should be a valid dictionary", at)
		}
	case "tool_result":
		if role != "user" {
			return invalid("%s: tool_result blocks may only appear in user messages", at)
		}
		if b.ToolUseID == "" {
			return invalid("%s.tool_result.tool_use_id: Field required", at)
		}
		return checkAntToolResultContent(at, b.Content)
	case "thinking":
		if role != "assistant" {
			return invalid("%s: thinking blocks may only appear in assistant messages", at)
		}
		if b.Thinking == nil {
			return invalid("%s.thinking.thinking: Field required", at)
		}
		if b.Signature == nil {
			return invalid("%s.thinking.signature: Field required", at)
		}
		if !hmac.Equal([]byte(*b.Signature), []byte(signThinking(*b.Thinking))) {
			if latest {
				return invalid("%s: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.", at)
			}
			return invalid("%s: Invalid `signature` in `thinking` block", at)
		}
	default:
		if !antOtherBlocks[b.Type] {
			return invalid("%s.type: Input tag '%s' found using 'type' does not match any of the expected tags", at, b.Type)
		}
	}
	return nil
}

func checkAntToolResultContent(at string, raw json.RawMessage) *apiError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || string(raw) == "null" {
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return invalid("%s.tool_result.content: Input should be a valid list", at)
	}
	for k, c := range blocks {
		switch c.Type {
		case "text", "image", "document", "search_result":
		default:
			return invalid("%s.tool_result.content.%d.type: Input tag '%s' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'search_result'", at, k, c.Type)
		}
	}
	return nil
}

// antTurn is a run of consecutive messages of one role: the API combines
// them into a single turn before it pairs tool calls with results.
type antTurn struct {
	role   string
	first  int // index of the turn's first message
	blocks []antBlockIn
	at     []string // "messages.i.content.j" of each block
}

func mergeTurns(in []antMessageIn, msgs [][]antBlockIn) []antTurn {
	var turns []antTurn
	for i, blocks := range msgs {
		if len(turns) == 0 || turns[len(turns)-1].role != in[i].Role {
			turns = append(turns, antTurn{role: in[i].Role, first: i})
		}
		t := &turns[len(turns)-1]
		for j, b := range blocks {
			t.blocks = append(t.blocks, b)
			t.at = append(t.at, fmt.Sprintf("messages.%d.content.%d", i, j))
		}
	}
	return turns
}

func turnOf(turns []antTurn, msg int) antTurn {
	for k := len(turns) - 1; k >= 0; k-- {
		if turns[k].first <= msg {
			return turns[k]
		}
	}
	return antTurn{}
}

// checkAntPairing enforces that an assistant turn's tool_use blocks are
// answered first thing in the next user turn, and that a user turn's
// tool_result blocks answer the assistant turn just before.
func checkAntPairing(turns []antTurn, k int) *apiError {
	t := turns[k]
	switch t.role {
	case "assistant":
		var ids []string
		for _, b := range t.blocks {
			if b.Type == "tool_use" {
				ids = append(ids, b.ID)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		answered := map[string]bool{}
		if k+1 < len(turns) {
			for _, b := range turns[k+1].blocks {
				if b.Type != "tool_result" {
					break // results after other content do not count
				}
				answered[b.ToolUseID] = true
			}
		}
		var missing []string
		for _, id := range ids {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", t.first, strings.Join(missing, ", "))
		}
	case "user":
		called := map[string]bool{}
		if k > 0 {
			for _, b := range turns[k-1].blocks {
				if b.Type == "tool_use" {
					called[b.ID] = true
				}
			}
		}
		results := map[string]bool{}
		for n, b := range t.blocks {
			if b.Type != "tool_result" {
				continue
			}
			if !called[b.ToolUseID] {
				return invalid("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", t.at[n], b.ToolUseID)
			}
			if results[b.ToolUseID] {
				return invalid("%s: each tool_use must have a single result. Found multiple `tool_result` blocks with id: %s", t.at[n], b.ToolUseID)
			}
			results[b.ToolUseID] = true
		}
	}
	return nil
}
