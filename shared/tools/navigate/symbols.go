package navigate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// FindSymbolsTool is find_symbols' name, as in contracts/, and the kind of
// its lookups' cursors; outlineKind is the kind of its outlines'.
const (
	FindSymbolsTool = "find_symbols"
	outlineKind     = FindSymbolsTool + " outline"
)

// Bounds of find_symbols.
const (
	// tableWork is how long a call builds the symbol table (the calls
	// that read a table build it: symbols.Table.Build) before it answers
	// from what is parsed.
	tableWork = 2 * time.Second
	// maxOutlineBytes is the largest file outlined that the table lacks
	// (parsed on the spot).
	maxOutlineBytes = 4 << 20
)

type symbolsInput struct {
	Name          string     `json:"name"`
	Match         string     `json:"match"`
	CaseSensitive bool       `json:"caseSensitive"`
	Kinds         []string   `json:"kinds"`
	Language      string     `json:"language"`
	Path          string     `json:"path"`
	Patterns      []string   `json:"patterns"`
	File          string     `json:"file"`
	Limit         schema.Int `json:"limit"`
	Cursor        string     `json:"cursor"`
	Repo          string     `json:"repo"`
}

type symbolJSON struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Path      string `json:"path,omitempty"`     // lookups
	Language  string `json:"language,omitempty"` // lookups
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Container string `json:"container,omitempty"`
	Depth     *int   `json:"depth,omitempty"` // outlines
	Signature string `json:"signature"`
	Doc       string `json:"doc,omitempty"`
	// Symbol is the SCIP symbol the precise index has defined there.
	Symbol string `json:"symbol,omitempty"`
	// Where the name is: the position of the precise index's definition.
	nameLine, nameColumn int
}

type outlinedFile struct {
	Path     string `json:"path"`
	Language string `json:"language"`
	Lines    int    `json:"lines"`
}

type tableJSON struct {
	State       string `json:"state"`
	FilesParsed int    `json:"filesParsed"`
	FilesTotal  int    `json:"filesTotal"`
	Symbols     int    `json:"symbols"`
}

// unsupportedJSON is how many files of code of one language a lookup
// looked in without symbols, and why.
type unsupportedJSON struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Reason   string `json:"reason"`
}

type symbolsOutput struct {
	File        *outlinedFile     `json:"file,omitempty"`
	Symbols     []symbolJSON      `json:"symbols"`
	Total       int               `json:"total"`
	NextCursor  *string           `json:"next_cursor"`
	Index       tableJSON         `json:"index"`
	Unsupported []unsupportedJSON `json:"unsupported,omitempty"`
	Message     string            `json:"message,omitempty"`
}

// Table states, as find_symbols reports them.
const (
	stateBuilding = "building"
	stateReady    = "ready"
)

// findSymbols serves find_symbols: an outline with file, a lookup with
// name.
func (s service) findSymbols(ctx context.Context, call toolkit.Call, in symbolsInput) (toolkit.Result, error) {
	if (in.Name == "") == (in.File == "") {
		return toolkit.Result{}, toolerr.Field("name", "give either name (look a symbol up) or file (outline a file), not both")
	}
	kinds := make([]symbols.Kind, len(in.Kinds))
	for i, k := range in.Kinds {
		kinds[i] = symbols.Kind(k)
	}
	view, r, err := repo.OpenFor(ctx, s.src, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	st := s.tables.For(view).Build(ctx, tableWork)
	var out symbolsOutput
	if in.File != "" {
		out, err = outline(view, st, in.File, kinds, s.cursors.Scope(outlineKind, call.Tenant, r.Name, in), in.Cursor, int(in.Limit))
	} else {
		out, err = lookup(ctx, st, in, kinds, s.cursors.Scope(FindSymbolsTool, call.Tenant, r.Name, in))
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	note := s.withSymbols(ctx, call, r, view, st, &out)
	out.Index = tableJSON{State: stateBuilding, FilesParsed: st.Progress.FilesParsed, FilesTotal: st.Progress.FilesTotal, Symbols: st.Progress.Symbols}
	if st.Progress.Ready {
		out.Index.State = stateReady
	}
	out.Message = symbolsMessage(out, in, st.Progress.Stopped) + note
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// lookup finds symbols by name, a page at a time: its cursors are made in
// pages.
func lookup(ctx context.Context, st *symbols.State, in symbolsInput, kinds []symbols.Kind, pages cursor.Scope) (symbolsOutput, error) {
	if slices.Contains(symbols.Missing(), in.Language) {
		return symbolsOutput{}, toolerr.Field("language", "this server was built without tree-sitter (cgo): it finds symbols in %s only",
			strings.Join(symbols.Languages(), ", "))
	}
	keep, err := fileFilter(in.Path, in.Patterns, in.Language)
	if err != nil {
		return symbolsOutput{}, err
	}
	after, err := decodeHit(pages, in.Cursor)
	if err != nil {
		return symbolsOutput{}, err
	}
	hits, err := st.Find(ctx, symbols.Query{Name: in.Name, Match: symbols.Match(in.Match), CaseSensitive: in.CaseSensitive, Kinds: kinds, Keep: keep})
	if err != nil {
		return symbolsOutput{}, fmt.Errorf("look up %q: %w", in.Name, err)
	}
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(hits, *after, symbols.CompareHits)
		if start < len(hits) && symbols.CompareHits(hits[start], *after) == 0 {
			start++
		}
	}
	end := min(start+int(in.Limit), len(hits))
	out := symbolsOutput{Symbols: []symbolJSON{}, Total: len(hits)}
	held := map[*symbols.File]*symbols.File{} // each file's text read once for the page
	for _, h := range hits[start:end] {
		f, ok := held[h.File]
		if !ok {
			f = h.File.WithText()
			held[h.File] = f
		}
		j := symbolOf(f, h.Symbol)
		j.Path, j.Language = h.File.Path, h.File.Language
		out.Symbols = append(out.Symbols, j)
	}
	if end < len(hits) {
		next := encodeHit(pages, hits[end-1])
		out.NextCursor = &next
	}
	out.Unsupported = unsupported(st.Unread(keep))
	return out, nil
}

// unsupported describes the files of code a lookup looked in that have no
// symbols.
func unsupported(unread []symbols.UnreadFiles) []unsupportedJSON {
	var out []unsupportedJSON
	for _, u := range unread {
		out = append(out, unsupportedJSON{Language: u.Language, Files: u.Files, Reason: string(u.Reason)})
	}
	return out
}

// because says why files of lang have no symbols, in words.
func because(lang string, why symbols.Reason) string {
	if why == symbols.NoTreeSitter {
		return "this server was built without cgo, and so without tree-sitter, which reads " + lang
	}
	return "find_symbols has no parser for " + lang
}

// fileFilter returns which files a lookup keeps: those under dir (a
// folder, or a file; "" for all), in lang ("" for any), that one of the
// globs matches (relative to dir; all without any).
func fileFilter(dir string, patterns []string, lang string) (func(string) bool, error) {
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	globs := make([]pathmatch.FileGlob, len(patterns))
	for i, p := range patterns {
		g, err := pathmatch.NewFileGlob(p)
		if err != nil {
			return nil, toolerr.Field(fmt.Sprintf("patterns/%d", i), "%v", err)
		}
		globs[i] = g
	}
	return func(p string) bool {
		rel := p
		if dir != "" {
			var under bool
			if rel, under = strings.CutPrefix(p, dir+"/"); !under && p != dir {
				return false
			}
		}
		if lang != "" && language.Of(p) != lang {
			return false
		}
		return len(globs) == 0 || slices.ContainsFunc(globs, func(g pathmatch.FileGlob) bool { return g.Match(rel) })
	}, nil
}

// outline lists the symbols of the file at p, in order, from the table
// or, when the table lacks it (not parsed yet, or not searchable),
// parsed on the spot, a page at a time: its cursors are made in pages,
// their position the index of the first symbol of the next page.
func outline(view repo.View, st *symbols.State, p string, kinds []symbols.Kind, pages cursor.Scope, cur string, limit int) (symbolsOutput, error) {
	var start int
	if err := pages.Decode(cur, &start); err != nil {
		return symbolsOutput{}, err
	}
	f := st.File(p)
	if f == nil {
		var err error
		if f, err = parseFile(view, p); err != nil {
			return symbolsOutput{}, err
		}
	}
	f = f.WithText() // read once for every symbol's signature and doc
	out := symbolsOutput{File: &outlinedFile{Path: p, Language: f.Language, Lines: repo.CountLines([]byte(f.Text()))}, Symbols: []symbolJSON{}}
	depth := make([]int, len(f.Symbols))
	var listed []symbolJSON
	for i, sym := range f.Symbols {
		if sym.Parent >= 0 {
			depth[i] = depth[sym.Parent] + 1
		}
		if len(kinds) > 0 && !slices.Contains(kinds, sym.Kind) {
			continue
		}
		j := symbolOf(f, sym)
		j.Depth = &depth[i]
		listed = append(listed, j)
	}
	out.Total = len(listed)
	start = min(start, len(listed)) // the file may have changed since
	end := start + min(limit, len(listed)-start)
	if start < end {
		out.Symbols = listed[start:end]
	}
	if end < len(listed) {
		next := pages.Encode(end)
		out.NextCursor = &next
	}
	return out, nil
}

// parseFile reads the file at p through the view (its policy applies)
// and parses it.
func parseFile(view repo.View, p string) (*symbols.File, error) {
	info, err := statFile(view, p)
	switch {
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, toolerr.Field("file", "%s is a folder; list it with list_files, or look symbols up in it with name and path", p)
	case !symbols.Supports(p):
		lang := language.Of(p)
		return nil, toolerr.Field("file", "%s is %s: %s (this server reads %s); read it with read_file", p, lang,
			because(lang, symbols.Unread(p)), strings.Join(symbols.Languages(), ", "))
	case info.Size() > maxOutlineBytes:
		return nil, toolerr.New(toolerr.SizeLimitExceeded, "%s is %d bytes; find_symbols outlines files up to %d bytes", p, info.Size(), maxOutlineBytes).With("path", p)
	}
	data, err := fs.ReadFile(view, p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return symbols.Parse(p, string(data)), nil
}

// statFile stats the file at p through the view: a file the policy
// denies is its refusal, a missing one RESOURCE_NOT_FOUND.
func statFile(view repo.View, p string) (fs.FileInfo, error) {
	info, err := fs.Stat(view, p)
	var refused *toolerr.Error
	switch {
	case errors.As(err, &refused):
		return nil, refused
	case err != nil:
		return nil, toolerr.New(toolerr.ResourceNotFound, "No file %s in the repository", p).With("path", p)
	}
	return info, nil
}

// symbolOf describes one symbol of f.
func symbolOf(f *symbols.File, s symbols.Symbol) symbolJSON {
	j := symbolJSON{Name: s.Name, Kind: string(s.Kind), StartLine: s.Start, EndLine: s.End,
		Container: s.Container, Signature: f.Signature(s), Doc: f.Doc(s)}
	j.nameLine, j.nameColumn = nameLineColumn(f.Text(), s)
	return j
}

// withSymbols gives each symbol of out the SCIP symbol the precise index
// has defined at its name, where a precise index holds its file as the
// table parsed it, until the call's time nears its end. A lookup answers
// without them, saying so, when the precise index cannot be read: the
// symbols are an addition, never a reason to fail.
func (s service) withSymbols(ctx context.Context, call toolkit.Call, r reposcope.Ref, view repo.View, st *symbols.State, out *symbolsOutput) string {
	if len(out.Symbols) == 0 {
		return ""
	}
	set, state, err := s.precise(ctx, r, view, call.Repos)
	if err == nil {
		l := &lens{ref: r, view: view, files: newShown(view), table: st, set: set, state: state}
		withSymbols(ctx, l, out)
		return ""
	}
	slog.Warn("find_symbols: no SCIP symbols", "repo", r.String(), "error", err)
	return " (without SCIP symbols: the precise index could not be read)"
}

// withSymbols gives each symbol of out, in l, its SCIP symbol.
func withSymbols(ctx context.Context, l *lens, out *symbolsOutput) {
	gctx, cancel := toolkit.Gathering(ctx)
	defer cancel()
	for i := range out.Symbols {
		j := &out.Symbols[i]
		p := j.Path
		if out.File != nil {
			p = out.File.Path
		}
		if gctx.Err() != nil {
			return
		}
		if f := l.file(p); f != nil && parsedAsIs(l.table, f) != nil && l.why(f) == "" {
			j.Symbol = l.definedAt(ctx, p, j.nameLine, j.nameColumn)
		}
	}
}

// A lookup's cursor is the last hit's place in the order
// (symbols.CompareHits): rank, path and the symbol's start, name and end.
func encodeHit(pages cursor.Scope, h symbols.Hit) string {
	return pages.Encode(h.Rank, h.File.Path, h.Symbol.From, h.Symbol.NameAt, h.Symbol.To)
}

// decodeHit returns the hit a lookup's cursor resumes after; nil for none.
func decodeHit(pages cursor.Scope, c string) (*symbols.Hit, error) {
	if c == "" {
		return nil, nil
	}
	h := symbols.Hit{File: &symbols.File{}}
	if err := pages.Decode(c, &h.Rank, &h.File.Path, &h.Symbol.From, &h.Symbol.NameAt, &h.Symbol.To); err != nil {
		return nil, err
	}
	return &h, nil
}

// symbolsMessage says what the page holds and how to get the rest, and
// when the table answered from nothing for it stopped (stopped).
func symbolsMessage(out symbolsOutput, in symbolsInput, stopped bool) string {
	var b strings.Builder
	switch {
	case out.File != nil:
		fmt.Fprintf(&b, "%d symbols in %s", out.Total, out.File.Path)
	case out.Total == 0:
		fmt.Fprintf(&b, "No symbol matches %q", in.Name)
		if len(out.Unsupported) > 0 {
			b.WriteString(" in the files find_symbols reads")
		}
		var tries []string
		if in.Match != string(symbols.Substring) {
			tries = append(tries, `"match": "substring"`)
		}
		if in.CaseSensitive {
			tries = append(tries, `"caseSensitive": false`)
		}
		if len(tries) > 0 {
			b.WriteString("; try " + strings.Join(tries, " or "))
		}
	default:
		fmt.Fprintf(&b, "%d symbols match %q", out.Total, in.Name)
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "; showing %d, pass next_cursor as cursor for the next page", len(out.Symbols))
	}
	if n := unsupportedFiles(out.Unsupported); n > 0 {
		var why []string
		for _, u := range out.Unsupported {
			why = append(why, fmt.Sprintf("%d %s (%s)", u.Files, u.Language, because(u.Language, symbols.Reason(u.Reason))))
		}
		fmt.Fprintf(&b, "; %d files of code here have no symbols: %s; grep_codebase searches them", n, strings.Join(why, ", "))
	}
	switch {
	case stopped:
		b.WriteString(" (the repository's snapshot this call read was replaced or let go meanwhile, and its symbol table with it: call again)")
	case out.Index.State == stateBuilding:
		fmt.Fprintf(&b, " (the symbol table is being built: %d of %d files parsed so far)", out.Index.FilesParsed, out.Index.FilesTotal)
	}
	return b.String()
}

// unsupportedFiles counts the files of us.
func unsupportedFiles(us []unsupportedJSON) int {
	n := 0
	for _, u := range us {
		n += u.Files
	}
	return n
}
