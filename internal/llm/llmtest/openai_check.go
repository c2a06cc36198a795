package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Validation of OpenAI Chat Completions requests. Error texts follow the
// real API's (PROTOCOLS.md I).

type oaRequest struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Tools         json.RawMessage   `json:"tools"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

type oaMessageIn struct {
	Role       string `json:"role"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// oaInvalid is a 400 invalid_request_error with a param and a code.
func oaInvalid(param, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error",
		message: fmt.Sprintf(format, args...), param: param, code: code}
}

func (o openAIAPI) check(_ http.Header, body []byte) (*prompt, *apiError) {
	var req oaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, oaInvalid("", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.) %v", err)
	}
	switch {
	case req.Model == "":
		return nil, oaInvalid("", "", "you must provide a model parameter")
	case len(req.Messages) == 0:
		return nil, oaInvalid("messages", "empty_array", "[] is too short - 'messages'")
	case req.StreamOptions != nil && !req.Stream:
		return nil, oaInvalid("stream_options", "", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	for _, limit := range []struct {
		name  string
		value *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if limit.value != nil && *limit.value < 1 {
			return nil, oaInvalid(limit.name, "integer_below_min_value", "Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", limit.name, *limit.value)
		}
	}
	if e := checkOATools(req.Tools); e != nil {
		return nil, e
	}
	if e := checkOAMessages(req.Messages); e != nil {
		return nil, e
	}

	p := newPrompt("openai", req.Model)
	p.stream = req.Stream
	p.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	tools, _ := canonical(req.Tools)
	toolTokens := 0
	if len(bytes.TrimSpace(req.Tools)) > 0 && string(req.Tools) != "null" {
		toolTokens = estimateTokens(len(tools))
	}
	p.add(append([]byte("tools:"), tools...), toolTokens)
	for _, raw := range req.Messages {
		c, _ := canonical(raw)
		p.add(append([]byte("message:"), c...), estimateTokens(len(c)))
	}
	return p, nil
}

func checkOATools(raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		return oaInvalid("tools", "invalid_type", "Invalid type for 'tools': expected an array of objects.")
	}
	for i, t := range tools {
		at := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Type == "custom":
			continue
		case t.Type != "function":
			return oaInvalid(at+".type", "invalid_value", "Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
		case t.Function == nil:
			return oaInvalid(at+".function", "missing_required_parameter", "Missing required parameter: '%s.function'.", at)
		case t.Function.Name == "":
			return oaInvalid(at+".function.name", "missing_required_parameter", "Missing required parameter: '%s.function.name'.", at)
		case len(t.Function.Name) > 64:
			return oaInvalid(at+".function.name", "string_above_max_length", "Invalid '%s.function.name': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", at, len(t.Function.Name))
		case !validToolName(t.Function.Name, 64):
			return oaInvalid(at+".function.name", "invalid_value", "Invalid '%s.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", at)
		}
		params := bytes.TrimSpace(t.Function.Parameters)
		if len(params) == 0 || string(params) == "null" {
			continue // a function without parameters
		}
		var schema map[string]any
		if params[0] != '{' || json.Unmarshal(params, &schema) != nil {
			return oaInvalid(at+".function.parameters", "invalid_type", "Invalid type for '%s.function.parameters': expected an object, but got %s instead.", at, jsonKind(params))
		}
		if typ, ok := schema["type"]; ok && typ != "object" {
			return oaInvalid(at+".function.parameters", "invalid_function_parameters", "Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", t.Function.Name, typ)
		}
	}
	return nil
}

// jsonKind names the JSON type of raw as OpenAI's errors do.
func jsonKind(raw []byte) string {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "null"
	case raw[0] == '"':
		return "a string"
	case raw[0] == '[':
		return "an array"
	case raw[0] == 't' || raw[0] == 'f':
		return "a boolean"
	}
	return "a number"
}

// checkOAMessages checks roles and that every tool call of an assistant
// message is answered by a tool message before any other role speaks.
func checkOAMessages(raws []json.RawMessage) *apiError {
	var pending []string // call ids still owed a tool message, in order
	owedSince := 0
	for i, raw := range raws {
		var m oaMessageIn
		if err := json.Unmarshal(raw, &m); err != nil {
			return oaInvalid(fmt.Sprintf("messages.[%d]", i), "invalid_type", "Invalid type for 'messages[%d]': expected an object.", i)
		}
		roleParam := fmt.Sprintf("messages.[%d].role", i)
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return oaInvalid(roleParam, "invalid_value", "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
		if m.Role == "tool" {
			if m.ToolCallID == "" {
				return oaInvalid(fmt.Sprintf("messages.[%d].tool_call_id", i), "missing_required_parameter", "Missing required parameter: 'messages[%d].tool_call_id'.", i)
			}
			k := indexOf(pending, m.ToolCallID)
			if k < 0 {
				return oaInvalid(roleParam, "", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = append(pending[:k], pending[k+1:]...)
			continue
		}
		if len(pending) > 0 {
			return missingToolMessages(owedSince, pending)
		}
		if m.Role != "assistant" {
			continue
		}
		for k, tc := range m.ToolCalls {
			at := fmt.Sprintf("messages[%d].tool_calls[%d]", i, k)
			switch {
			case tc.ID == "":
				return oaInvalid(at+".id", "missing_required_parameter", "Missing required parameter: '%s.id'.", at)
			case tc.Type != "" && tc.Type != "function":
				return oaInvalid(at+".type", "invalid_value", "Invalid value: '%s'. Supported values are: 'function'.", tc.Type)
			case tc.Function.Name == "":
				return oaInvalid(at+".function.name", "missing_required_parameter", "Missing required parameter: '%s.function.name'.", at)
			}
			if args := bytes.TrimSpace(tc.Function.Arguments); len(args) == 0 || args[0] != '"' {
				kind := jsonKind(args)
				if len(args) > 0 && args[0] == '{' {
					kind = "an object"
				}
				return oaInvalid(at+".function.arguments", "invalid_type", "Invalid type for '%s.function.arguments': expected a string, but got %s instead.", at, kind)
			}
			pending = append(pending, tc.ID)
		}
		owedSince = i
	}
	if len(pending) > 0 {
		return missingToolMessages(owedSince, pending)
	}
	return nil
}

func missingToolMessages(i int, ids []string) *apiError {
	return oaInvalid(fmt.Sprintf("messages.[%d].role", i), "",
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
