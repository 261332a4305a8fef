// Package memory implements the memory tools over store.Memory:
// write_memory_entry appends one entry to a memory file, and
// read_memory pages through a file's entries. The files, their formats
// and how a file renders as one text are shared/memoryfile's.
//
// progress_log.jsonl and decisions.jsonl take a JSON object with an RFC
// 3339 "timestamp", stored as one compact JSON line; best_practices.md
// takes markdown, stored ending in exactly one newline. An entry is at most
// MaxEntryBytes as the caller wrote it (JSON compacted; markdown without
// trailing whitespace and without the newline that ends it in the file).
//
// Memory is append-only: this package only ever appends and lists (the
// store has no way to update or delete an entry). write_memory_entry takes
// an optional idempotencyKey: a call with a key the tenant used before on
// the same file appends nothing and answers the entry the first call
// appended (replayed: true), so a retry is safe.
package memory

import (
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool names, as in contracts/.
const (
	WriteTool = "write_memory_entry"
	ReadTool  = "read_memory"
)

// MaxEntryBytes is the largest entry (5 KB).
const MaxEntryBytes = 5120

// fileFormat returns the format of a memory file, or INVALID_INPUT naming
// "file" (the schema's enum already refuses other names).
func fileFormat(name string) (memoryfile.Format, error) {
	f, ok := memoryfile.FormatOf(name)
	if !ok {
		return 0, toolerr.Field("file", "must be one of %q", memoryfile.Names())
	}
	return f, nil
}

// Family registers the memory tools over the Memory table: entries are
// only ever put (conditionally) and queried, never updated or deleted.
// write_memory_entry with an idempotency key also reads, puts and updates
// the key's claim item, reads the entry a replay returns and queries for
// the entry of a claim left pending.
var Family = family.Family{
	Name:  "memory",
	Tools: []string{WriteTool, ReadTool},
	Grants: []family.Grant{
		family.Table(config.MemoryTable, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem").For(WriteTool),
		family.Table(config.MemoryTable, "dynamodb:Query").For(ReadTool),
	},
	// read_memory's cursors need the deployment's key; write_memory_entry
	// does not read it.
	Settings: []family.Setting{family.Only(wiring.CursorKey, ReadTool)},
	New: family.OverStores(ReadTool, func(st store.Stores, now func() time.Time, cursors cursor.Key) []toolkit.Tool {
		return Tools(st.Memory, now, cursors)
	}),
}

// service holds what both memory tools need.
type service struct {
	memory  store.Memory
	now     func() time.Time
	cursors cursor.Key // read_memory's
}

// Tools returns write_memory_entry and read_memory over mem. now stamps the
// entries; nil means time.Now. cursors authenticates read_memory's
// cursors.
func Tools(mem store.Memory, now func() time.Time, cursors cursor.Key) []toolkit.Tool {
	if now == nil {
		now = time.Now
	}
	s := service{memory: mem, now: now, cursors: cursors}
	return []toolkit.Tool{
		{Name: WriteTool, Handler: toolkit.Typed(s.write)},
		{Name: ReadTool, Handler: toolkit.Typed(s.read)},
	}
}
