package llm

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a provider failure by what coda should do about it.
type ErrorKind int

const (
	ErrUnknown        ErrorKind = iota
	ErrRateLimit                // 429; retry after RetryAfter
	ErrOverloaded               // 529 or an overloaded_error event
	ErrServer                   // 5xx
	ErrConnection               // network failure, also mid-stream
	ErrPromptTooLong            // the request exceeds the context window
	ErrAuth                     // 401/403
	ErrInvalidRequest           // 400 and other requests that will never succeed
	ErrQuota                    // out of credit or spend limit; retrying cannot help
	ErrNotFound                 // 404, usually an unknown model
)

var kindNames = map[ErrorKind]string{
	ErrUnknown:        "unknown_error",
	ErrRateLimit:      "rate_limit",
	ErrOverloaded:     "overloaded",
	ErrServer:         "server_error",
	ErrConnection:     "connection_error",
	ErrPromptTooLong:  "prompt_too_long",
	ErrAuth:           "authentication_failed",
	ErrInvalidRequest: "invalid_request",
	ErrQuota:          "billing_error",
	ErrNotFound:       "not_found",
}

func (k ErrorKind) String() string { return kindNames[k] }

// Error is a typed provider failure.
type Error struct {
	Kind       ErrorKind
	Status     int           // HTTP status, 0 when there was none
	Message    string        // short, for the user
	RetryAfter time.Duration // from retry-after headers; 0 when absent
	Body       string        // raw response body, for the log
	Err        error         // underlying cause, if any
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Kind, e.Status, msg)
	}
	return fmt.Sprintf("%s: %s", e.Kind, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the same request may succeed later.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrConnection:
		return true
	}
	return false
}

// AsError returns err as *Error when it is one (possibly wrapped).
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// KindOf returns the kind of err, ErrUnknown for foreign errors.
func KindOf(err error) ErrorKind {
	if e, ok := AsError(err); ok {
		return e.Kind
	}
	return ErrUnknown
}
