package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAnthropicStreamsTheMessagesEvents(t *testing.T) {
	s := NewServer(t)
	say := "Okay, let's check the weather for San Francisco, CA:"
	input := `{"location": "San Francisco, CA", "unit": "celsius"}`
	s.Enqueue(Reply(Text(say), ToolCall("toolu_01T1x1", "get_weather", input)))

	events := mustEvents(t, antPost(t, s, antReq(user("weather?"))))

	var names []string
	for _, e := range events {
		names = append(names, e.name)
		if got := e.json(t)["type"]; got != e.name {
			t.Errorf("event %q carries type %v", e.name, got)
		}
	}
	if names[0] != "message_start" || names[1] != "content_block_start" || names[2] != "ping" {
		t.Errorf("stream opens with %v, want message_start, content_block_start, ping", names[:3])
	}
	if tail := names[len(names)-2:]; tail[0] != "message_delta" || tail[1] != "message_stop" {
		t.Errorf("stream ends with %v", tail)
	}

	start := events[0].json(t)["message"].(map[string]any)
	if start["model"] != "claude-test-1" || start["role"] != "assistant" || start["stop_reason"] != nil {
		t.Errorf("message_start = %v", start)
	}
	if u := start["usage"].(map[string]any); u["input_tokens"].(float64) <= 0 {
		t.Errorf("message_start usage = %v", u)
	}

	var said, args strings.Builder
	textDeltas, jsonDeltas := 0, 0
	var firstJSON *string
	for _, e := range events {
		m := e.json(t)
		switch e.name {
		case "content_block_start":
			cb := m["content_block"].(map[string]any)
			if cb["type"] == "tool_use" && (cb["id"] != "toolu_01T1x1" || cb["name"] != "get_weather") {
				t.Errorf("tool_use start = %v", cb)
			}
		case "content_block_delta":
			d := m["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				textDeltas++
				said.WriteString(d["text"].(string))
			case "input_json_delta":
				p := d["partial_json"].(string)
				if firstJSON == nil {
					firstJSON = &p
				}
				jsonDeltas++
				args.WriteString(p)
			}
		case "message_delta":
			if m["delta"].(map[string]any)["stop_reason"] != "tool_use" {
				t.Errorf("message_delta = %v", m)
			}
			if out := m["usage"].(map[string]any)["output_tokens"].(float64); out < 10 {
				t.Errorf("output_tokens = %v, want an estimate of the content", out)
			}
		}
	}
	if said.String() != say || textDeltas < 2 {
		t.Errorf("text %q in %d deltas, want %q in several", said.String(), textDeltas, say)
	}
	if firstJSON == nil || *firstJSON != "" || jsonDeltas < 3 || args.String() != input {
		t.Errorf("tool input %q in %d deltas (first %v), want %q after an empty first delta", args.String(), jsonDeltas, firstJSON, input)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("rejections: %v", r)
	}
}

func TestAnthropicThinkingMustComeBackUnchanged(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Thinking("The user wants a file listing."), ToolCall("toolu_a", "ls", `{}`)))
	events := mustEvents(t, antPost(t, s, antReq(user("list files"))))
	var thought, signature string
	var order []string
	for _, e := range events {
		if e.name != "content_block_delta" {
			continue
		}
		d := e.json(t)["delta"].(map[string]any)
		order = append(order, d["type"].(string))
		switch d["type"] {
		case "thinking_delta":
			thought += d["thinking"].(string)
		case "signature_delta":
			signature = d["signature"].(string)
		}
	}
	if thought != "The user wants a file listing." || signature == "" {
		t.Fatalf("thinking %q signature %q", thought, signature)
	}
	if i := strings.Index(strings.Join(order, ","), "signature_delta,input_json_delta"); i < 0 {
		t.Errorf("signature_delta must close the thinking block before the tool block: %v", order)
	}

	next := func(thinking, sig string) *http.Response {
		s.Enqueue(Reply(Text("ok")))
		return antPost(t, s, antReq(
			user("list files"),
			assistant(map[string]any{"type": "thinking", "thinking": thinking, "signature": sig},
				toolUse("toolu_a", "ls", map[string]any{})),
			user([]any{toolResult("toolu_a", "a.txt")}),
		))
	}
	if resp := next(thought, signature); resp.StatusCode != http.StatusOK {
		t.Fatalf("unchanged thinking refused: %v", errorBody(t, resp))
	}
	for name, resp := range map[string]*http.Response{
		"changed text":      next(thought+" ", signature),
		"changed signature": next(thought, signature[:len(signature)-4]+"AAA="),
	} {
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, resp.StatusCode)
			continue
		}
		msg := errorBody(t, resp)["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, "cannot be modified") {
			t.Errorf("%s: message %q", name, msg)
		}
	}
	if got := len(s.Rejections()); got != 2 {
		t.Errorf("%d rejections recorded, want 2: %v", got, s.Rejections())
	}
}

func TestAnthropicRejectsWhatTheAPIRejects(t *testing.T) {
	valid := func() map[string]any { return antReq(user("hi")) }
	with := func(key string, v any) map[string]any {
		r := valid()
		r[key] = v
		return r
	}
	pair := []map[string]any{
		user("read a"),
		assistant(text("reading"), toolUse("toolu_1", "read", map[string]any{"path": "a"})),
	}
	conv := func(tail ...map[string]any) map[string]any {
		return antReq(append(append([]map[string]any{}, pair...), tail...)...)
	}
	five := func() []any {
		var tools []any
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			tools = append(tools, cached(tool(n)))
		}
		return tools
	}
	cases := []struct {
		name    string
		header  map[string]string
		body    any
		status  int
		errType string
		message string
	}{
		{name: "no api key", header: map[string]string{"x-api-key": ""}, body: valid(),
			status: 401, errType: "authentication_error", message: "x-api-key header is required"},
		{name: "no version", header: map[string]string{"anthropic-version": ""}, body: valid(),
			status: 400, message: "anthropic-version: header is required"},
		{name: "no model", body: with("model", ""), status: 400, message: "model: Field required"},
		{name: "zero max_tokens", body: with("max_tokens", 0), status: 400, message: "max_tokens: Input should be greater than or equal to 1"},
		{name: "no messages", body: with("messages", []any{}), status: 400, message: "at least 1 item"},
		{name: "first message assistant", body: antReq(assistant(text("hi")), user("hi")), status: 400, message: `first message must use the "user" role`},
		{name: "prefill", body: antReq(user("hi"), assistant(text("Sure"))), status: 400, message: "does not support assistant message prefill"},
		{name: "empty text block", body: antReq(user([]any{text("")})), status: 400, message: "text content blocks must be non-empty"},
		{name: "missing tool_result", body: conv(user("go on")), status: 400,
			message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{name: "tool_result after text", body: conv(user([]any{text("here"), toolResult("toolu_1", "x")})), status: 400,
			message: "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{name: "message between use and result", body: conv(user("wait"), assistant(text("ok")), user([]any{toolResult("toolu_1", "x")})), status: 400,
			message: "without `tool_result` blocks immediately after"},
		{name: "unknown tool_use_id", body: conv(user([]any{toolResult("toolu_1", "x"), toolResult("toolu_9", "y")})), status: 400,
			message: "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9"},
		{name: "duplicate tool_use ids", body: antReq(user("x"),
			assistant(toolUse("toolu_1", "read", map[string]any{}), toolUse("toolu_1", "read", map[string]any{})),
			user([]any{toolResult("toolu_1", "x")})), status: 400, message: "`tool_use` ids must be unique"},
		{name: "tool_use input not an object", body: antReq(user("x"),
			assistant(toolUse("toolu_1", "read", `{"path":"a"}`)),
			user([]any{toolResult("toolu_1", "x")})), status: 400, message: "tool_use.input: Input should be a valid dictionary"},
		{name: "bad tool name", body: with("tools", []any{tool("read file")}), status: 400,
			message: "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"},
		{name: "tool name too long", body: with("tools", []any{tool(strings.Repeat("x", 65))}), status: 400,
			message: "String should match pattern"},
		{name: "five cache breakpoints", body: with("tools", five()), status: 400,
			message: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{name: "forced tool with thinking", body: func() map[string]any {
			r := with("thinking", map[string]any{"type": "enabled", "budget_tokens": 1024})
			r["max_tokens"] = 4096
			r["tool_choice"] = map[string]any{"type": "any"}
			return r
		}(), status: 400, message: "Thinking may not be enabled when tool_choice forces tool use."},
		{name: "thinking budget over max_tokens", body: with("thinking", map[string]any{"type": "enabled", "budget_tokens": 2048}),
			status: 400, message: "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{name: "thinking without signature", body: antReq(user("x"),
			assistant(map[string]any{"type": "thinking", "thinking": "hm"}, toolUse("toolu_1", "read", map[string]any{})),
			user([]any{toolResult("toolu_1", "x")})), status: 400, message: "signature: Field required"},
		{name: "not JSON", body: "{", status: 400, message: "error parsing the body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Enqueue(Reply(Text("should not be played")))
			h := antHeaders()
			for k, v := range c.header {
				h[k] = v
			}
			resp := post(t, s.URL()+"/v1/messages", c.body, h)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, c.status, errorBody(t, resp))
			}
			if resp.Header.Get("request-id") == "" {
				t.Error("no request-id header")
			}
			body := errorBody(t, resp)
			e := body["error"].(map[string]any)
			want := c.errType
			if want == "" {
				want = "invalid_request_error"
			}
			if body["type"] != "error" || e["type"] != want || !strings.HasPrefix(body["request_id"].(string), "req_") {
				t.Errorf("error body %v, want type %s", body, want)
			}
			if msg := e["message"].(string); !strings.Contains(msg, c.message) {
				t.Errorf("message %q, want it to contain %q", msg, c.message)
			}
			rejections := s.Rejections()
			if len(rejections) != 1 || !strings.Contains(rejections[0], c.message) {
				t.Errorf("rejections %q", rejections)
			}
			if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Rejected == "" || reqs[0].Status != c.status {
				t.Errorf("request record %+v", reqs[0])
			}
			// The scripted turn was not used up by the refused request.
			if resp := antPost(t, s, antReq(user("hi"))); resp.StatusCode != http.StatusOK {
				t.Errorf("valid request after a refused one: %d", resp.StatusCode)
			}
		})
	}
}

func TestAnthropicAcceptsAValidToolConversation(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("done")))
	body := antReq(
		user("read a and b"),
		assistant(text("reading"), toolUse("toolu_1", "read", map[string]any{"path": "a"}), toolUse("toolu_2", "read", map[string]any{"path": "b"})),
		user([]any{toolResult("toolu_2", "B"), toolResult("toolu_1", "A"), text("<reminder>be brief</reminder>")}),
	)
	body["tools"] = []any{tool("read")}
	body["system"] = []any{cached(text("You are coda."))}
	resp := antPost(t, s, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("valid conversation refused: %v", errorBody(t, resp))
	}
	mustEvents(t, resp)
	r := s.Requests()[0]
	if got := r.LastUserText(); got != "B\nA\n<reminder>be brief</reminder>" {
		t.Errorf("LastUserText = %q", got)
	}
	if r.System() != "You are coda." || strings.Join(r.ToolNames(), ",") != "read" || len(r.Messages()) != 3 {
		t.Errorf("System %q ToolNames %v messages %d", r.System(), r.ToolNames(), len(r.Messages()))
	}
}

func TestAnthropicCombinesConsecutiveMessagesOfOneRole(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("done")))
	// The API merges same-role neighbours before pairing tool calls.
	resp := antPost(t, s, antReq(
		user("read a and b"),
		assistant(text("reading a")),
		assistant(toolUse("toolu_1", "read", map[string]any{"path": "a"}), toolUse("toolu_2", "read", map[string]any{"path": "b"})),
		user([]any{toolResult("toolu_1", "A")}),
		user([]any{toolResult("toolu_2", "B"), text("go on")}),
	))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("merged turns refused: %v", errorBody(t, resp))
	}
	if got := s.Requests()[0].LastUserText(); got != "B\ngo on" {
		t.Errorf("LastUserText = %q", got)
	}
}

func TestAnthropicFaults(t *testing.T) {
	cases := []struct {
		turn    Turn
		status  int
		errType string
		message string
	}{
		{RateLimited(1500 * time.Millisecond), 429, "rate_limit_error", "rate limit"},
		{Overloaded(), 529, "overloaded_error", "Overloaded"},
		{ServerError(), 500, "api_error", "Internal server error"},
		{PromptTooLong(), 400, "invalid_request_error", "prompt is too long: "},
	}
	for _, c := range cases {
		t.Run(c.errType, func(t *testing.T) {
			s := NewServer(t)
			s.Enqueue(c.turn)
			resp := antPost(t, s, antReq(user("hi")))
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			e := errorBody(t, resp)["error"].(map[string]any)
			if e["type"] != c.errType || !strings.Contains(e["message"].(string), c.message) {
				t.Errorf("error %v", e)
			}
			if c.status == 429 && (resp.Header.Get("retry-after") != "2" || resp.Header.Get("retry-after-ms") != "1500") {
				t.Errorf("retry headers %v", resp.Header)
			}
			if len(s.Rejections()) != 0 {
				t.Errorf("a scripted fault is not a rejection: %v", s.Rejections())
			}
		})
	}

	t.Run("prompt too long numbers", func(t *testing.T) {
		s := NewServer(t)
		s.SetContextWindow(0)
		s.Enqueue(PromptTooLong())
		msg := errorBody(t, antPost(t, s, antReq(user("hi"))))["error"].(map[string]any)["message"].(string)
		m := regexp.MustCompile(`^prompt is too long: (\d+) tokens > 200000 maximum$`).FindStringSubmatch(msg)
		if n, _ := strconv.Atoi(m1(m)); n <= 200000 {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("overloaded mid-stream", func(t *testing.T) {
		s := NewServer(t)
		s.Enqueue(OverloadedMidStream(Text("partial answer")))
		resp := antPost(t, s, antReq(user("hi")))
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		events := mustEvents(t, resp)
		last := events[len(events)-1]
		if last.name != "error" || last.data != `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` {
			t.Errorf("last event %+v", last)
		}
		for _, e := range events {
			if e.name == "message_stop" || e.name == "message_delta" {
				t.Errorf("a failed stream must not finish: %v", e.name)
			}
		}
	})

	t.Run("dropped mid-stream", func(t *testing.T) {
		s := NewServer(t)
		s.Enqueue(DropMidStream(Text("partial"), ToolCall("toolu_x", "read", `{"path":"a"}`)))
		resp := antPost(t, s, antReq(user("hi")))
		events, err := readEvents(t, resp)
		if err == nil {
			t.Fatal("stream ended cleanly, want a broken connection")
		}
		stops := 0
		for _, e := range events {
			if e.name == "message_stop" {
				t.Error("dropped stream delivered message_stop")
			}
			if e.name == "content_block_stop" {
				stops++
			}
		}
		if stops != 2 {
			t.Errorf("%d blocks completed before the drop, want 2", stops)
		}
	})
}

func TestContextWindowAnswersPromptTooLong(t *testing.T) {
	s := NewServer(t)
	s.SetContextWindow(50)
	s.Enqueue(Reply(Text("small is fine")))
	big := strings.Repeat("lorem ipsum ", 100)

	resp := antPost(t, s, antReq(user(big)))
	msg := errorBody(t, resp)["error"].(map[string]any)["message"].(string)
	if resp.StatusCode != 400 || !regexp.MustCompile(`^prompt is too long: \d+ tokens > 50 maximum$`).MatchString(msg) {
		t.Errorf("anthropic: %d %q", resp.StatusCode, msg)
	}
	resp = oaPost(t, s, oaReq(oaMsg("user", big)))
	e := errorBody(t, resp)["error"].(map[string]any)
	if resp.StatusCode != 400 || e["code"] != "context_length_exceeded" || e["param"] != "messages" ||
		!strings.HasPrefix(e["message"].(string), "This model's maximum context length is 50 tokens. However, your messages resulted in ") {
		t.Errorf("openai: %d %v", resp.StatusCode, e)
	}
	if resp := antPost(t, s, antReq(user("hi"))); resp.StatusCode != 200 {
		t.Errorf("a prompt under the window: %d", resp.StatusCode)
	}
	if r := s.Rejections(); len(r) != 0 {
		t.Errorf("an over-long prompt is an API answer, not a malformed request: %v", r)
	}
	if reqs := s.Requests(); !strings.HasPrefix(reqs[0].Rejected, "prompt is too long") || reqs[0].Status != 400 {
		t.Errorf("request record %+v", reqs[0])
	}
}

func TestStopReasonsAndScriptedUsage(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Text("cut")).WithStop("max_tokens").WithUsage(1234, 56), Reply(Text("cut")).WithStop("length"))
	for i := range 2 {
		events := mustEvents(t, antPost(t, s, antReq(user("hi"))))
		delta := events[len(events)-2].json(t)
		if got := delta["delta"].(map[string]any)["stop_reason"]; got != "max_tokens" {
			t.Errorf("turn %d stop_reason %v", i, got)
		}
		if i == 0 {
			u := delta["usage"].(map[string]any)
			if u["input_tokens"] != 1234.0 || u["output_tokens"] != 56.0 || u["cache_read_input_tokens"] != 0.0 {
				t.Errorf("scripted usage %v", u)
			}
		}
	}
	if u := s.Requests()[0].Usage; u.InputTokens != 1234 || u.OutputTokens != 56 {
		t.Errorf("recorded usage %+v", u)
	}
}

func TestNonStreamingAnthropic(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply(Thinking("hm"), Text("hello"), ToolCall("", "read", `{"path":"a"}`)))
	body := antReq(user("hi"))
	delete(body, "stream")
	resp := antPost(t, s, body)
	raw, _ := io.ReadAll(resp.Body)
	var msg struct {
		Type       string `json:"type"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Input     json.RawMessage `json:"input"`
			Signature string          `json:"signature"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v %s", resp.StatusCode, err, raw)
	}
	if msg.Type != "message" || msg.Model != "claude-test-1" || msg.StopReason != "tool_use" || len(msg.Content) != 3 ||
		msg.Content[0].Signature != signThinking("hm") || msg.Content[1].Text != "hello" ||
		!strings.HasPrefix(msg.Content[2].ID, "toolu_") || string(msg.Content[2].Input) != `{"path":"a"}` {
		t.Errorf("message %s", raw)
	}
}

// m1 is a regexp match's first group, "" when there was no match.
func m1(m []string) string {
	if len(m) < 2 {
		return ""
	}
	return m[1]
}
