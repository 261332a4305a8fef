package precise

import (
	"errors"
	"strconv"
	"strings"
)

var (
	// ErrCorrupt is a store that is not one, or is damaged: every offset,
	// length and count read from a store is checked, and one that does
	// not hold is this error, never a panic.
	ErrCorrupt = errors.New("corrupt precise index")
	// ErrTenant is an index given to a Set of another tenant.
	ErrTenant = errors.New("precise index of another tenant")
)

// Range is a span of a document: 1-based lines, 1-based byte columns,
// the end exclusive (EndColumn is the column just after the last byte).
type Range struct {
	Line, Column, EndLine, EndColumn int
}

func (r Range) valid() bool {
	return r.Line >= 1 && r.Column >= 1 && r.EndLine >= r.Line && r.EndColumn >= 1 &&
		(r.EndLine > r.Line || r.EndColumn >= r.Column) &&
		r.EndLine <= maxPos && r.EndColumn <= maxPos && r.Column <= maxPos
}

// compareRanges orders ranges by start, then end.
func compareRanges(a, b Range) int {
	for _, d := range [4]int{a.Line - b.Line, a.Column - b.Column, a.EndLine - b.EndLine, a.EndColumn - b.EndColumn} {
		if d != 0 {
			return d
		}
	}
	return 0
}

// covers reports whether the position (line, col) is inside r; an empty
// range covers its own position.
func (r Range) covers(line, col int) bool {
	afterStart := line > r.Line || line == r.Line && col >= r.Column
	beforeEnd := line < r.EndLine || line == r.EndLine && col < r.EndColumn
	return afterStart && (beforeEnd || line == r.Line && col == r.Column)
}

// Roles says what an occurrence does with its symbol: the bits of SCIP's
// SymbolRole, with the same values. An occurrence with none of
// Definition, Import and WriteAccess is a reference.
type Roles uint32

const (
	Definition        Roles = 1
	Import            Roles = 2
	WriteAccess       Roles = 4
	ReadAccess        Roles = 8
	Generated         Roles = 16
	Test              Roles = 32
	ForwardDefinition Roles = 64
)

var roleNames = []string{"definition", "import", "write", "read", "generated", "test", "forward-definition"}

// String names the roles, joined by "|" ("definition", "read|test"; a
// plain reference is "reference").
func (r Roles) String() string {
	var names []string
	for i, name := range roleNames {
		if r&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "reference"
	}
	return strings.Join(names, "|")
}

// Occurrence is a symbol at a range of a document.
type Occurrence struct {
	// Repo is the repository's name in a Set's answers ("" from an Index).
	Repo string
	Path string
	Range
	// Symbol is the SCIP symbol; a local one is given with its document
	// (LocalSymbol), which is how the queries take it back.
	Symbol string
	Roles  Roles
	// Enclosing is the range of the whole definition or expression the
	// occurrence is part of (a function's body for its name), when the
	// indexer gave it; the zero Range otherwise.
	Enclosing Range
}

// Location is where a page of references ends (the last one's path and
// position), for the next page to start after it; the zero Location
// starts at the beginning. Repo is for a Set's pages ("" is the Set's
// home repository).
type Location struct {
	Repo, Path   string
	Line, Column int
}

func (o Occurrence) Location() Location {
	return Location{Repo: o.Repo, Path: o.Path, Line: o.Line, Column: o.Column}
}

// precedes reports whether l comes before an occurrence at (path, r) in
// one repository's (path, line, column) order.
func (l Location) precedes(path string, r Range) bool {
	if path != l.Path {
		return path > l.Path
	}
	return r.Line > l.Line || r.Line == l.Line && r.Column > l.Column
}

// Relationship links a symbol to another, as SCIP's Relationship does:
// for a type, IsImplementation names an interface it implements; for a
// method, one it implements or overrides.
type Relationship struct {
	Symbol           string
	IsImplementation bool
	IsReference      bool
	IsTypeDefinition bool
	IsDefinition     bool
}

func (r Relationship) flags() uint64 {
	var f uint64
	for i, b := range []bool{r.IsImplementation, r.IsReference, r.IsTypeDefinition, r.IsDefinition} {
		if b {
			f |= 1 << i
		}
	}
	return f
}

func relationship(symbol string, flags uint64) Relationship {
	return Relationship{Symbol: symbol, IsImplementation: flags&1 != 0, IsReference: flags&2 != 0,
		IsTypeDefinition: flags&4 != 0, IsDefinition: flags&8 != 0}
}

// SymbolInfo is what the index knows of a symbol: what hover shows (the
// signature, the documentation) and where it is defined.
type SymbolInfo struct {
	Symbol string
	// DisplayName is the symbol's name as written (the indexer's, or the
	// last descriptor of the symbol's).
	DisplayName string
	// Kind is SCIP's kind name ("Method", "Interface", …) or, when the
	// indexer gave none, the kind of the symbol's last descriptor
	// ("Type", "Method", "Term", "Namespace", …).
	Kind string
	// Signature is the declaration as code (without markdown fences);
	// Doc the documentation after it, markdown.
	Signature, Doc string
	// External is information from the index's external symbols: the
	// symbol is defined in another package or repository, and used here.
	External      bool
	Definitions   []Occurrence
	Relationships []Relationship
}

// DocInfo describes an indexed document.
type DocInfo struct {
	Path     string
	Language string
	// Hash is the SHA-256 of the content the index was built for (the
	// snapshot's); zero when the builder was not told. A document whose
	// current content hashes otherwise has changed since: answer it by
	// search.
	Hash [32]byte
	// Stale says the indexer read other content than the snapshot's
	// (the builder compared both).
	Stale bool
	// Commit is the commit of the index the document is in.
	Commit string
}

// Changed reports whether a document whose content now hashes to current
// must be answered by search: it was stale when indexed, or it changed
// since.
func (d DocInfo) Changed(current [32]byte) bool {
	return d.Stale || d.Hash != [32]byte{} && d.Hash != current
}

// LocalSymbol is how answers give a SCIP local symbol ("local 12"), which
// is only meaningful in its document: "local 12 " followed by the path.
func LocalSymbol(local, path string) string { return local + " " + path }

// isLocal reports whether a SCIP symbol is a local one.
func isLocal(symbol string) bool { return strings.HasPrefix(symbol, "local ") }

// splitLocal reads a symbol LocalSymbol made: the SCIP local symbol and
// its document's path.
func splitLocal(symbol string) (local, path string, ok bool) {
	id, path, ok := strings.Cut(strings.TrimPrefix(symbol, "local "), " ")
	if !ok || !isLocal(symbol) || id == "" || path == "" {
		return "", "", false
	}
	return "local " + id, path, true
}

// String writes a range as "line:column-endLine:endColumn".
func (r Range) String() string {
	return strconv.Itoa(r.Line) + ":" + strconv.Itoa(r.Column) + "-" + strconv.Itoa(r.EndLine) + ":" + strconv.Itoa(r.EndColumn)
}
