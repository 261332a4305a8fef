// Package memorydoc maps the memory files' entries to documents of
// context_search's index: which files are searched, and the document each
// entry becomes. It sits between the memory files' vocabulary
// (shared/memoryfile, a leaf every tool may import) and the ranking core
// (shared/contextindex), for the two that index memory: context_search and
// the indexer.
package memorydoc

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/store"
)

// Searched are the memory files context_search indexes, discoveries and
// session notes, in the order it reads them.
var Searched = []string{memoryfile.Decisions, memoryfile.BestPractices, memoryfile.ProgressLog}

// textFields are the fields of a JSON memory entry that hold its text,
// first present wins.
var textFields = []string{"content", "summary", "decision", "event"}

// Of maps one memory entry to its document in context_search's
// index; ok is false for files that are not indexed. The mapping (documented in the README and the
// context_search contract):
//
//   - decisions.jsonl: a discovery. Its type is the entry's "type" when
//     that is pattern, rule, decision or issue, else decision; "module" and
//     "session" come from the fields of those names; its text is
//     "content", else "summary", else "decision", else "event" (else the
//     whole entry); its date is "timestamp".
//   - best_practices.md: a discovery of type pattern, the entry's markdown
//     its text, dated when it was written.
//   - progress_log.jsonl: a session note (source "session", type
//     "session"), its fields read as for decisions.jsonl.
//
// The id is "<file>#<entry id>".
func Of(e store.MemoryEntry) (contextindex.Doc, bool) {
	d := contextindex.Doc{ID: e.File + "#" + e.ID, Date: e.CreatedAt.UTC()}
	switch e.File {
	case memoryfile.BestPractices:
		d.Source, d.Type = contextindex.SourceDiscovery, contextindex.TypePattern
		d.Content = strings.TrimSpace(e.Content)
		return d, true
	case memoryfile.Decisions:
		d.Source, d.Type = contextindex.SourceDiscovery, contextindex.TypeDecision
	case memoryfile.ProgressLog:
		d.Source, d.Type = contextindex.SourceSession, contextindex.TypeSession
	default:
		return contextindex.Doc{}, false
	}
	var fields map[string]any
	if json.Unmarshal([]byte(e.Content), &fields) != nil {
		d.Content = e.Content
		return d, true
	}
	str := func(k string) string {
		s, _ := fields[k].(string)
		return strings.TrimSpace(s)
	}
	if d.Source == contextindex.SourceDiscovery {
		switch t := strings.ToLower(str("type")); t {
		case contextindex.TypePattern, contextindex.TypeRule, contextindex.TypeDecision, contextindex.TypeIssue:
			d.Type = t
		}
	}
	d.Module = str("module")
	d.Session = str("session")
	if ts, err := time.Parse(time.RFC3339, str("timestamp")); err == nil {
		d.Date = ts.UTC()
	}
	for _, k := range textFields {
		if d.Content = str(k); d.Content != "" {
			break
		}
	}
	if d.Content == "" {
		d.Content = e.Content
	}
	return d, true
}
