package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// maxErrorBody bounds how much of an error response is kept for the log.
const maxErrorBody = 64 << 10

// quotaCodes are the error types and codes of a 429 that waiting cannot fix.
var quotaCodes = map[string]bool{
	"insufficient_quota":                true,
	"credit_balance_exhausted":          true,
	"organization_spend_limit_exceeded": true,
	"project_spend_limit_exceeded":      true,
	"organization_usage_limit_exceeded": true,
	"billing_hard_limit_reached":        true,
}

// apiError is the error object of an error body, in the OpenAI shape
// {"error":{"message","type","param","code"}} or one of the looser shapes
// compatible servers use.
type apiError struct {
	Message string
	Type    string
	Code    string
	// Status is a numeric code some proxies (OpenRouter) put in "code";
	// 0 when there is none.
	Status int
}

// parseAPIError reads the error object from body. It falls back to
// {"message"}, {"detail"} (FastAPI servers) and finally the body text.
func parseAPIError(body []byte) apiError {
	var envelope struct {
		Error   json.RawMessage `json:"error"`
		Message lenientString   `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	var e apiError
	if json.Unmarshal(body, &envelope) == nil {
		var obj struct {
			Message lenientString   `json:"message"`
			Type    lenientString   `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var text string
		switch {
		case bytes.HasPrefix(bytes.TrimSpace(envelope.Error), []byte("{")) && json.Unmarshal(envelope.Error, &obj) == nil:
			e.Message, e.Type = string(obj.Message), string(obj.Type)
			var n lenientInt
			if json.Unmarshal(obj.Code, &e.Code) != nil && json.Unmarshal(obj.Code, &n) == nil && n.Set {
				e.Status, e.Code = n.Value, strconv.Itoa(n.Value)
			}
		case json.Unmarshal(envelope.Error, &text) == nil:
			e.Message = text
		case envelope.Message != "":
			e.Message = string(envelope.Message)
		case json.Unmarshal(envelope.Detail, &text) == nil:
			e.Message = text
		case !isNull(envelope.Detail):
			e.Message = string(envelope.Detail)
		}
	}
	if e.Message == "" {
		e.Message = truncate(strings.TrimSpace(string(body)), 500)
	}
	return e
}

// httpError classifies an HTTP error response.
func httpError(status int, header http.Header, body []byte) *llm.Error {
	e := parseAPIError(body)
	return &llm.Error{
		Kind:       kindFor(status, e),
		Status:     status,
		Message:    e.Message,
		RetryAfter: retryAfter(header, time.Now()),
		Body:       truncate(string(body), maxErrorBody),
	}
}

// streamError classifies an error object that arrived as a data event in
// the middle of a stream: it has no HTTP status of its own, so its type and
// code stand in for one.
func streamError(data []byte) *llm.Error {
	e := parseAPIError(data)
	status := e.Status
	if status == 0 {
		status = statusForType(e)
	}
	return &llm.Error{
		Kind:    kindFor(status, e),
		Status:  e.Status,
		Message: e.Message,
		Body:    truncate(string(data), maxErrorBody),
	}
}

// statusForType guesses the HTTP status an error type stands for.
func statusForType(e apiError) int {
	switch {
	case quotaCodes[e.Type] || quotaCodes[e.Code]:
		return http.StatusTooManyRequests
	case strings.Contains(e.Type, "rate_limit") || strings.Contains(e.Code, "rate_limit"):
		return http.StatusTooManyRequests
	case e.Code == "context_length_exceeded" || strings.Contains(e.Type, "invalid_request"):
		return http.StatusBadRequest
	case strings.Contains(e.Type, "authentication") || e.Code == "invalid_api_key":
		return http.StatusUnauthorized
	case strings.Contains(e.Type, "not_found"):
		return http.StatusNotFound
	case strings.Contains(e.Type, "overloaded") || strings.Contains(e.Code, "overloaded"):
		return 529
	}
	return http.StatusInternalServerError
}

func kindFor(status int, e apiError) llm.ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusPaymentRequired:
		return llm.ErrQuota
	case status == http.StatusTooManyRequests:
		if quotaCodes[e.Type] || quotaCodes[e.Code] {
			return llm.ErrQuota
		}
		return llm.ErrRateLimit
	case status == http.StatusRequestEntityTooLarge:
		return llm.ErrPromptTooLong
	case status == http.StatusNotFound:
		return llm.ErrNotFound
	case status == http.StatusRequestTimeout || status == http.StatusConflict:
		return llm.ErrServer
	case status >= 400 && status < 500:
		if promptTooLong(e) {
			return llm.ErrPromptTooLong
		}
		return llm.ErrInvalidRequest
	case status == 529 || status == http.StatusServiceUnavailable && overloaded(e):
		return llm.ErrOverloaded
	case status >= 500:
		return llm.ErrServer
	}
	return llm.ErrUnknown
}

// promptTooLong recognises the context-window errors of OpenAI and the
// compatible servers, which differ only in wording.
func promptTooLong(e apiError) bool {
	if e.Code == "context_length_exceeded" || e.Type == "context_length_exceeded" {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, s := range []string{"maximum context length", "context length", "context window", "prompt is too long", "too many tokens", "exceeds the context"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func overloaded(e apiError) bool {
	return strings.Contains(strings.ToLower(e.Message+" "+e.Type+" "+e.Code), "overloaded")
}

// retryAfter reads retry-after-ms (milliseconds) or retry-after (seconds or
// an HTTP date). It returns 0 when neither is usable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// connectionError wraps a network failure.
func connectionError(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
