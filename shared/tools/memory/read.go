package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type readInput struct {
	File   string     `json:"file"`
	Limit  schema.Int `json:"limit"` // the contract's default is filled in
	Cursor string     `json:"cursor"`
}

type entryJSON struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	Content   string `json:"content"`
}

type readOutput struct {
	File       string      `json:"file"`
	Entries    []entryJSON `json:"entries"`
	NextCursor *string     `json:"next_cursor"`
}

// read returns one page of a memory file's entries, oldest first. Its
// cursor's position is the last entry id shown.
func (s service) read(ctx context.Context, call toolkit.Call, in readInput) (toolkit.Result, error) {
	if _, err := fileFormat(in.File); err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(ReadTool, call.Tenant, "", in)
	var after string
	if err := pages.Decode(in.Cursor, &after); err != nil {
		return toolkit.Result{}, err
	}
	page, err := s.memory.List(ctx, call.Tenant, in.File, store.MemoryQuery{Limit: int(in.Limit), After: after})
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list %s: %w", in.File, err)
	}
	out := readOutput{File: in.File, Entries: make([]entryJSON, 0, len(page.Entries))}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, entryJSON{
			ID:        e.ID,
			CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano),
			Content:   e.Content,
		})
	}
	if page.Next != "" {
		next := pages.Encode(page.Next)
		out.NextCursor = &next
	}
	msg := fmt.Sprintf("Found %d %s in %s", len(out.Entries), plural(len(out.Entries), "entry", "entries"), in.File)
	return toolkit.Result{Data: out, Message: msg}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
