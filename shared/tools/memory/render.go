package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/store"
)

// Render returns the entries of a tenant's memory file as one text, oldest
// first, paging through the store: for a .jsonl file each entry is one line
// ending in "\n"; for best_practices.md the entries are separated by a blank
// line and the text ends in "\n". A file without entries renders as "".
// file must be one of Files(). It stops paging once the text is over max
// bytes, so a caller that cannot take more than max never loads more than a
// page past it: a text over max is incomplete.
func Render(ctx context.Context, mem store.Memory, tenant, file string, max int) (string, error) {
	f, ok := files[file]
	if !ok {
		return "", fmt.Errorf("render memory: %q is not a memory file", file)
	}
	var b strings.Builder
	q := store.MemoryQuery{Limit: store.MaxLimit}
	for {
		page, err := mem.List(ctx, tenant, file, q)
		if err != nil {
			return "", fmt.Errorf("render memory %s: %w", file, err)
		}
		for _, e := range page.Entries {
			writeEntry(&b, f, e.Content)
		}
		if page.Next == "" || b.Len() > max {
			return b.String(), nil
		}
		q.After = page.Next
	}
}

// writeEntry adds one stored entry to a rendering.
func writeEntry(b *strings.Builder, f format, content string) {
	if f == markdown && b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteString("\n")
	}
}
