package anthropic

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/coda-cli/coda/internal/llm"
)

// maxRetryAfter caps a server's retry-after so a silly value cannot
// overflow a time.Duration.
const maxRetryAfter = 24 * time.Hour

// streamErrorPrefix is how the SDK reports an SSE error event it could not
// attach to the response.
const streamErrorPrefix = "received error while streaming: "

// convertError turns an error from starting a request into *llm.Error.
func convertError(err error) *llm.Error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return httpError(apiErr)
	}
	if isNetworkError(err) {
		return &llm.Error{Kind: llm.ErrConnection, Message: err.Error(), Err: err}
	}
	return &llm.Error{Kind: llm.ErrUnknown, Message: err.Error(), Err: err}
}

// convertStreamError turns an error met while reading a started stream into
// *llm.Error: an error event becomes its kind, anything else is a broken
// connection.
func convertStreamError(err error) *llm.Error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return eventError(apiErr.RawJSON(), err)
	}
	if raw, ok := strings.CutPrefix(err.Error(), streamErrorPrefix); ok {
		return eventError(raw, err)
	}
	return &llm.Error{Kind: llm.ErrConnection, Message: "stream interrupted: " + err.Error(), Err: err}
}

// httpError classifies an error status.
func httpError(apiErr *sdk.Error) *llm.Error {
	body := apiErr.RawJSON()
	typ, msg := parseErrorBody(body)
	e := &llm.Error{
		Kind:    statusKind(apiErr.StatusCode),
		Status:  apiErr.StatusCode,
		Message: msg,
		Body:    body,
		Err:     apiErr,
	}
	if apiErr.Response != nil {
		e.RetryAfter = retryAfter(apiErr.Response.Header)
	}
	if e.Message == "" {
		e.Message = http.StatusText(apiErr.StatusCode)
	}
	switch {
	case e.Kind == llm.ErrInvalidRequest && isPromptTooLong(msg):
		e.Kind = llm.ErrPromptTooLong
	case typ == string(sdk.ErrorTypeBillingError):
		e.Kind = llm.ErrQuota
	case apiErr.ErrorCode() == sdk.ErrorCodeContractSpendLimitReached,
		apiErr.ErrorCode() == sdk.ErrorCodeEnforcedSpendLimitReached:
		// A 429 that waiting cannot fix.
		e.Kind = llm.ErrQuota
	}
	return e
}

func statusKind(status int) llm.ErrorKind {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return llm.ErrAuth
	case status == http.StatusPaymentRequired:
		return llm.ErrQuota
	case status == http.StatusNotFound:
		return llm.ErrNotFound
	case status == http.StatusTooManyRequests:
		return llm.ErrRateLimit
	case status == 529:
		return llm.ErrOverloaded
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		return llm.ErrServer
	case status >= 400:
		return llm.ErrInvalidRequest
	}
	return llm.ErrUnknown
}

// eventError classifies an SSE error event, which arrives after HTTP 200
// and so carries its kind only in error.type.
func eventError(raw string, cause error) *llm.Error {
	typ, msg := parseErrorBody(raw)
	e := &llm.Error{Kind: typeKind(typ), Message: msg, Body: raw, Err: cause}
	if e.Kind == llm.ErrInvalidRequest && isPromptTooLong(msg) {
		e.Kind = llm.ErrPromptTooLong
	}
	if e.Message == "" {
		e.Message = "error event in stream"
		if typ != "" {
			e.Message = typ
		}
	}
	return e
}

func typeKind(typ string) llm.ErrorKind {
	switch sdk.ErrorType(typ) {
	case sdk.ErrorTypeOverloadedError:
		return llm.ErrOverloaded
	case sdk.ErrorTypeRateLimitError:
		return llm.ErrRateLimit
	case sdk.ErrorTypeAuthenticationError, sdk.ErrorTypePermissionError:
		return llm.ErrAuth
	case sdk.ErrorTypeBillingError:
		return llm.ErrQuota
	case sdk.ErrorTypeNotFoundError:
		return llm.ErrNotFound
	case sdk.ErrorTypeInvalidRequestError, "request_too_large":
		return llm.ErrInvalidRequest
	}
	// api_error, timeout_error, conflict_error and types not yet known: the
	// server failed this answer; another attempt may not.
	return llm.ErrServer
}

// parseErrorBody reads error.type and error.message from an API error
// body, tolerating bodies that are not JSON (a proxy's HTML page).
func parseErrorBody(body string) (typ, msg string) {
	var v struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return "", ""
	}
	return v.Error.Type, v.Error.Message
}

func isPromptTooLong(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "prompt is too long")
}

// retryAfter reads retry-after-ms, then retry-after in seconds or as an
// HTTP date. It returns 0 when neither says anything usable.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return clampDuration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return clampDuration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return clampDuration(float64(time.Until(t)))
	}
	return 0
}

func clampDuration(ns float64) time.Duration {
	switch {
	case math.IsNaN(ns) || ns <= 0:
		return 0
	case ns >= float64(maxRetryAfter):
		return maxRetryAfter
	}
	return time.Duration(ns)
}

// isNetworkError reports whether err is a failure to reach the server or
// to read its answer, which a later attempt may not meet.
func isNetworkError(err error) bool {
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}
