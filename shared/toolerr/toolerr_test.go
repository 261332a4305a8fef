package toolerr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// TestVocabularyMatchesErrorsJSON: every Go code is in errors.json and
// every row of errors.json has a Go code.
func TestVocabularyMatchesErrorsJSON(t *testing.T) {
	codes := []toolerr.Code{toolerr.InvalidInput, toolerr.ResourceNotFound, toolerr.ToolNotFound, toolerr.AccessDenied,
		toolerr.PathNotAllowed, toolerr.SizeLimitExceeded, toolerr.RateLimited, toolerr.Timeout, toolerr.UpstreamError,
		toolerr.StorageError, toolerr.Unauthorized, toolerr.Internal}
	v, err := toolerr.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(codes) {
		t.Errorf("errors.json has %d codes, Go has %d", len(v), len(codes))
	}
	for _, c := range codes {
		info, ok := v[c]
		if !ok || info.HTTPStatus < 400 || info.TaskAPICode == "" {
			t.Errorf("%s: %+v", c, info)
		}
	}
	want := map[toolerr.Code]int{toolerr.InvalidInput: 400, toolerr.RateLimited: 429, toolerr.StorageError: 503, toolerr.Internal: 500}
	for c, status := range want {
		if got := toolerr.Lookup(c).HTTPStatus; got != status {
			t.Errorf("%s: HTTP %d, want %d", c, got, status)
		}
	}
	if toolerr.Lookup(toolerr.StorageError).TaskAPICode != "DATABASE_ERROR" || toolerr.Lookup(toolerr.InvalidInput).TaskAPICode != "VALIDATION_ERROR" {
		t.Error("the task-API envelope's names do not match")
	}
}

func TestFrom(t *testing.T) {
	tests := []struct {
		err  error
		want toolerr.Code
		msg  string
	}{
		{toolerr.New(toolerr.PathNotAllowed, "no"), toolerr.PathNotAllowed, "no"},
		{fmt.Errorf("wrapped: %w", toolerr.New(toolerr.RateLimited, "slow down")), toolerr.RateLimited, "slow down"},
		{fmt.Errorf("put: %w", context.DeadlineExceeded), toolerr.Timeout, "the operation timed out"},
		{fmt.Errorf("put: %w: boom", store.ErrStorage), toolerr.StorageError, "storage is unavailable; nothing was changed, try again"},
		{fmt.Errorf("get: %w", store.ErrNotFound), toolerr.ResourceNotFound, "not found"},
		{errors.New("secret=abc"), toolerr.Internal, "internal error"},
	}
	for _, tt := range tests {
		got := toolerr.From(tt.err)
		if got.Code != tt.want || got.Message != tt.msg {
			t.Errorf("From(%v) = %s %q, want %s %q", tt.err, got.Code, got.Message, tt.want, tt.msg)
		}
	}
	if toolerr.From(nil) != nil {
		t.Error("From(nil) is not nil")
	}
	// A write whose idempotency key another request holds: retry later.
	e := toolerr.From(fmt.Errorf("create: %w", &store.InProgressError{RetryAfter: 2500 * time.Millisecond}))
	if e.Code != toolerr.StorageError || e.RetryAfter != 3 || e.Details["outcome"] != "unknown" ||
		!strings.Contains(e.Message, "retry with the same idempotencyKey in 3 s") {
		t.Errorf("in progress: %+v", e)
	}
}

func TestFieldErrors(t *testing.T) {
	e := toolerr.Field("entry.timestamp", "must be %s", "RFC 3339")
	if e.Code != toolerr.InvalidInput || e.Message != "entry.timestamp: must be RFC 3339" {
		t.Errorf("got %+v", e)
	}
	if got := fmt.Sprint(e.Details["errors"]); got != "[{entry.timestamp must be RFC 3339}]" {
		t.Errorf("details.errors = %s", got)
	}
	if _, ok := e.Details["errorCount"]; ok {
		t.Errorf("errorCount set for a single problem: %v", e.Details)
	}

	// Thousands of problems: the first MaxFieldErrors, a count, short names.
	var many []toolerr.FieldError
	for i := range 5000 {
		many = append(many, toolerr.FieldError{Field: fmt.Sprintf("k%d%s", i, strings.Repeat("é", 200)), Message: "is not an accepted field"})
	}
	e = toolerr.Fields(many)
	list := e.Details["errors"].([]toolerr.FieldError)
	if len(list) != toolerr.MaxFieldErrors || e.Details["errorCount"] != 5000 {
		t.Errorf("errors %d, errorCount %v", len(list), e.Details["errorCount"])
	}
	for _, fe := range list {
		if len(fe.Field) > 110 || !utf8.ValidString(fe.Field) || !strings.HasSuffix(fe.Field, "…") {
			t.Errorf("field name not shortened cleanly: %q", fe.Field)
		}
	}
	if !strings.Contains(e.Message, "and 4999 more problem(s)") || len(e.Message) > 300 {
		t.Errorf("message %q", e.Message)
	}
}
