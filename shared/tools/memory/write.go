package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type writeInput struct {
	File           string          `json:"file"`
	Entry          json.RawMessage `json:"entry"` // nil when left out
	Content        *string         `json:"content"`
	IdempotencyKey string          `json:"idempotencyKey"` // "" when left out; the schema checks its form
}

type writeOutput struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	File    string `json:"file"`
	ID      string `json:"id"`
	Bytes   int    `json:"bytes"`
	// Replayed is there only when an earlier call with the same
	// idempotency key appended the entry.
	Replayed bool `json:"replayed,omitempty"`
}

// write appends one entry to a memory file, once per idempotency key when
// one is given. Nothing is stored unless every check passes.
func (s service) write(ctx context.Context, call toolkit.Call, in writeInput) (toolkit.Result, error) {
	text, err := entryText(in)
	if err != nil {
		return toolkit.Result{}, err
	}
	// The limit is on what the caller wrote: the newline that ends a
	// markdown entry in the file is ours, not theirs.
	if n := len(strings.TrimSuffix(text, "\n")); n > MaxEntryBytes {
		return toolkit.Result{}, toolerr.New(toolerr.SizeLimitExceeded,
			"the entry is %d bytes; at most %d bytes are allowed", n, MaxEntryBytes).
			With("limitBytes", MaxEntryBytes).With("bytes", n)
	}
	e, err := s.memory.Append(ctx, call.Tenant, in.File, store.NewEntry{Content: text, IdempotencyKey: in.IdempotencyKey}, s.now())
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("append to %s: %w", in.File, err)
	}
	msg := fmt.Sprintf("Appended %d bytes to %s", len(e.Content), in.File)
	if e.Replayed {
		// What the first call appended, which this call's entry may not be.
		msg = fmt.Sprintf("Entry already appended to %s with this idempotency key (%d bytes)", in.File, len(e.Content))
	}
	out := writeOutput{Success: true, Message: msg, File: in.File, ID: e.ID, Bytes: len(e.Content), Replayed: e.Replayed}
	return toolkit.Result{Data: out, Message: msg}, nil
}

// entryText returns the text to store for the input's file, checking that
// the file gets the kind of entry it takes.
func entryText(in writeInput) (string, error) {
	f, err := fileFormat(in.File)
	if err != nil {
		return "", err
	}
	if f == memoryfile.JSONLines {
		if in.Content != nil {
			return "", toolerr.Field("content", "is not accepted for %s; give the entry object in entry", in.File)
		}
		return jsonLine(in.Entry)
	}
	if in.Entry != nil {
		return "", toolerr.Field("entry", "is not accepted for %s; give markdown in content", in.File)
	}
	if in.Content == nil {
		return "", toolerr.Field("content", "is required for %s", in.File)
	}
	return markdownText(*in.Content)
}

// jsonLine checks a JSONL entry and returns it as one compact line (no
// newline). Compacting keeps the fields in the caller's order and numbers
// exactly as written; JSON strings cannot hold a raw newline, so the result
// is always a single line.
func jsonLine(entry json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if len(entry) == 0 || json.Unmarshal(entry, &fields) != nil || fields == nil {
		return "", toolerr.Field("entry", "must be a JSON object")
	}
	if err := checkTimestamp(fields["timestamp"]); err != nil {
		return "", err
	}
	var line bytes.Buffer
	if err := json.Compact(&line, entry); err != nil {
		return "", toolerr.Field("entry", "must be a JSON object")
	}
	if !utf8.Valid(line.Bytes()) {
		return "", toolerr.Field("entry", "must be valid UTF-8")
	}
	return line.String(), nil
}

// checkTimestamp requires an RFC 3339 timestamp string.
func checkTimestamp(raw json.RawMessage) error {
	const field = "entry.timestamp"
	if raw == nil {
		return toolerr.Field(field, "is required")
	}
	var ts string
	if err := json.Unmarshal(raw, &ts); err != nil {
		return toolerr.Field(field, "must be a string")
	}
	if !schema.IsDateTime(ts) {
		return toolerr.Field(field, "must be an RFC 3339 date-time such as \"2025-01-15T10:00:00Z\", got %q", ts)
	}
	return nil
}

// markdownText returns content without trailing whitespace and ending in
// one newline.
func markdownText(content string) (string, error) {
	text := strings.TrimRightFunc(content, unicode.IsSpace)
	if text == "" {
		return "", toolerr.Field("content", "must not be empty or only whitespace")
	}
	return text + "\n", nil
}
