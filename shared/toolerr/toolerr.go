// Package toolerr is Toolshed's error vocabulary: one Error type carrying a
// code from contracts/errors.json, a message safe to show callers, optional
// details and, for RATE_LIMITED, a retry delay. From maps any Go error onto
// the vocabulary exactly once, at the edge of the pipeline.
package toolerr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/store"
)

// Code is a canonical error code (contracts/errors.json).
type Code string

// The codes of contracts/errors.json.
const (
	InvalidInput      Code = "INVALID_INPUT"
	ResourceNotFound  Code = "RESOURCE_NOT_FOUND"
	ToolNotFound      Code = "TOOL_NOT_FOUND"
	AccessDenied      Code = "ACCESS_DENIED"
	PathNotAllowed    Code = "PATH_NOT_ALLOWED"
	SizeLimitExceeded Code = "SIZE_LIMIT_EXCEEDED"
	RateLimited       Code = "RATE_LIMITED"
	Timeout           Code = "TIMEOUT"
	UpstreamError     Code = "UPSTREAM_ERROR"
	StorageError      Code = "STORAGE_ERROR"
	Unauthorized      Code = "UNAUTHORIZED"
	Internal          Code = "INTERNAL_ERROR"
)

// Error is a failure expressed in the vocabulary. Message and Details are
// shown to callers; Cause is only logged.
type Error struct {
	Code       Code
	Message    string
	Details    map[string]any
	RetryAfter int // seconds; set for RATE_LIMITED and some STORAGE_ERRORs
	Cause      error
}

// New returns an error with a code and a caller-facing message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// With returns a copy of e with one more detail.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// From maps any error onto the vocabulary. Errors that are already *Error
// pass through; known sentinels get their code (a storage failure wins
// over the deadline that cut it short: the dependency did not answer);
// anything else becomes INTERNAL_ERROR with a message that reveals
// nothing of the cause.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	var inProgress *store.InProgressError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &inProgress):
		// This call changed nothing, but the request holding the key may
		// yet make (or have made) the write: retrying with the key is safe.
		secs := max(1, int((inProgress.RetryAfter+time.Second-1)/time.Second))
		return (&Error{Code: StorageError, RetryAfter: secs, Cause: err,
			Message: fmt.Sprintf("another request with this idempotency key is in progress or stopped without an answer; this call changed nothing: retry with the same idempotencyKey in %d s", secs)}).
			With("outcome", "unknown")
	case errors.Is(err, store.ErrMaybeDone):
		return (&Error{Code: StorageError, Cause: err,
			Message: "storage did not answer: the change may or may not have been made; see the tool's description for whether retrying is safe"}).
			With("outcome", "unknown")
	case errors.Is(err, store.ErrThrottled):
		return &Error{Code: StorageError, RetryAfter: 1, Cause: err,
			Message: "storage is busy (throttling requests); nothing was changed, try again in a moment"}
	case errors.Is(err, store.ErrStorage):
		return &Error{Code: StorageError, Message: "storage is unavailable; nothing was changed, try again", Cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: Timeout, Message: "the operation timed out", Cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: Timeout, Message: "the request was cancelled", Cause: err}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: ResourceNotFound, Message: "not found", Cause: err}
	default:
		return &Error{Code: Internal, Message: "internal error", Cause: err}
	}
}

// FieldError is one problem with one field of a tool's input. Nested
// fields are dotted ("entry.timestamp").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// MaxFieldErrors bounds details.errors: an input with thousands of bad
// fields gets the first MaxFieldErrors and a count, not an answer larger
// than its question.
const MaxFieldErrors = 20

// maxFieldName bounds how much of a caller's field name is echoed back.
const maxFieldName = 100

// Field returns INVALID_INPUT about one field: the message reads
// "<field>: <problem>" and details.errors lists the field and problem, as
// for a failure of the input schema.
func Field(field, format string, args ...any) *Error {
	return Fields([]FieldError{{Field: field, Message: fmt.Sprintf(format, args...)}})
}

// Fields returns INVALID_INPUT for problems (at least one): the message
// names the first, details.errors lists at most MaxFieldErrors of them and
// details.errorCount counts them all. Over-long field names are shortened.
func Fields(problems []FieldError) *Error {
	shown := problems[:min(len(problems), MaxFieldErrors)]
	list := make([]FieldError, len(shown))
	for i, p := range shown {
		list[i] = FieldError{Field: shorten(p.Field), Message: p.Message}
	}
	e := New(InvalidInput, "%s: %s", list[0].Field, list[0].Message)
	if len(problems) > 1 {
		e.Message += fmt.Sprintf(" (and %d more problem(s), see details.errors)", len(problems)-1)
	}
	e = e.With("errors", list)
	if len(problems) > len(list) {
		e = e.With("errorCount", len(problems))
	}
	return e
}

// shorten cuts a field name to maxFieldName bytes (at a rune boundary).
func shorten(s string) string {
	if len(s) <= maxFieldName {
		return s
	}
	cut := maxFieldName
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Info is one row of contracts/errors.json.
type Info struct {
	Code        Code   `json:"code"`
	HTTPStatus  int    `json:"httpStatus"`
	TaskAPICode string `json:"taskApiCode"`
	JSONRPCCode int    `json:"jsonrpcCode,omitempty"`
	Description string `json:"description"`
}

var vocabulary = sync.OnceValues(func() (map[Code]Info, error) {
	raw, err := contracts.FS.ReadFile(contracts.ErrorsFile)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Errors []Info `json:"errors"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", contracts.ErrorsFile, err)
	}
	m := make(map[Code]Info, len(doc.Errors))
	for _, i := range doc.Errors {
		m[i.Code] = i
	}
	return m, nil
})

// Vocabulary returns every row of contracts/errors.json by code.
func Vocabulary() (map[Code]Info, error) { return vocabulary() }

// Lookup returns the row for code; unknown codes get INTERNAL_ERROR's row.
func Lookup(code Code) Info {
	m, err := vocabulary()
	if err != nil {
		// errors.json is embedded and checked by tests; this cannot happen
		// in a built binary, but never fail an error path because of it.
		return Info{Code: Internal, HTTPStatus: 500, TaskAPICode: "INTERNAL_ERROR", JSONRPCCode: -32603}
	}
	if i, ok := m[code]; ok {
		return i
	}
	return m[Internal]
}
