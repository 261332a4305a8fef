// Package memoryfile is the vocabulary of the memory files every part of
// Toolshed shares — the memory tools that write and page through them,
// read_repo_file that shows them under .claude/memory/, and context_search
// that indexes their entries: their names, the format of each and how a
// file's entries render as one text. (How an entry maps to a document of
// context_search's index is shared/contextindex/memorydoc.)
//
// There are three memory files. progress_log.jsonl and decisions.jsonl
// hold JSON Lines: one compact JSON object per entry, with an RFC 3339
// "timestamp". best_practices.md holds markdown: one block per entry,
// blocks separated by a blank line.
package memoryfile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/store"
)

// The memory files.
const (
	ProgressLog   = "progress_log.jsonl"
	Decisions     = "decisions.jsonl"
	BestPractices = "best_practices.md"
)

// Format is how a memory file's entries are written.
type Format int

// The formats.
const (
	JSONLines Format = iota + 1 // one JSON object per line
	Markdown                    // markdown blocks separated by a blank line
)

// formats are the memory files and their formats.
var formats = map[string]Format{ProgressLog: JSONLines, Decisions: JSONLines, BestPractices: Markdown}

// Names returns the names of the memory files, sorted.
func Names() []string {
	names := make([]string, 0, len(formats))
	for name := range formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// FormatOf returns the format of the memory file name, and whether name
// is one.
func FormatOf(name string) (Format, bool) {
	f, ok := formats[name]
	return f, ok
}

// Lister pages through a tenant's entries of one file (store.Memory does).
type Lister interface {
	List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error)
}

// Render returns the entries of a tenant's memory file as one text, oldest
// first, paging through the store: for a JSON Lines file each entry is one
// line ending in "\n"; for markdown the entries are separated by a blank
// line and the text ends in "\n". A file without entries renders as "".
// It stops paging once the text is over max bytes, so a caller that cannot
// take more than max never loads more than a page past it: a text over
// max is incomplete.
func Render(ctx context.Context, mem Lister, tenant, file string, max int) (string, error) {
	f, ok := FormatOf(file)
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
			if f == Markdown && b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(e.Content)
			if !strings.HasSuffix(e.Content, "\n") {
				b.WriteString("\n")
			}
		}
		if page.Next == "" || b.Len() > max {
			return b.String(), nil
		}
		q.After = page.Next
	}
}
