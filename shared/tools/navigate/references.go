package navigate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/toolshed/toolshed/shared/codespans"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type refsInput struct {
	Name               string     `json:"name"`
	Path               string     `json:"path"`
	Line               schema.Int `json:"line"`
	Column             schema.Int `json:"column"`
	Symbol             string     `json:"symbol"`
	IncludeDeclaration bool       `json:"includeDeclaration"`
	Patterns           []string   `json:"patterns"`
	Exclude            []string   `json:"exclude"`
	ExcludeComments    bool       `json:"excludeComments"`
	ExcludeStrings     bool       `json:"excludeStrings"`
	Limit              schema.Int `json:"limit"`
	Cursor             string     `json:"cursor"`
	Repo               string     `json:"repo"`
}

type refLineJSON struct {
	Line       int            `json:"line"`
	Columns    []int          `json:"columns"`
	Roles      []string       `json:"roles,omitempty"` // precise: what each occurrence does
	Text       string         `json:"text"`
	Definition string         `json:"definition,omitempty"` // the kind of symbol the line defines by that name
	Enclosing  *enclosingJSON `json:"enclosing,omitempty"`
}

type refFileJSON struct {
	Repo     string `json:"repo,omitempty"` // another repository of the tenant's
	Path     string `json:"path"`
	Language string `json:"language"`
	// Precision and Reason are set on a file of a precise answer that
	// was searched by name instead: it changed since it was indexed.
	Precision string        `json:"precision,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	Lines     []refLineJSON `json:"lines"`
}

type refsOutput struct {
	Name   string `json:"name"`
	Symbol string `json:"symbol,omitempty"`
	precisionJSON
	Files      []refFileJSON `json:"files"`
	TotalLines int           `json:"totalLines"`
	NextCursor *string       `json:"next_cursor"`
	Incomplete bool          `json:"incomplete,omitempty"`
	Message    string        `json:"message,omitempty"`
}

// maxFilteredLines bounds the lines a search that leaves comments or
// strings out looks at in one call: each is classified before it is
// counted. Past this many, the answer is incomplete, and its cursor goes
// on from the last line looked at.
const maxFilteredLines = 20000

// definitionsWork bounds how long a call builds the symbol table before
// it marks definitions from what is parsed.
const definitionsWork = 300 * time.Millisecond

// identifier is what find_references looks for.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// byName is why an answer by name is made by search.
const byName = "a name is found as a whole word, whatever symbol it names: give a position (path, line, column) or a symbol for the references of one symbol"

// findReferences serves find_references: by name, the lines where an
// identifier occurs as a whole word; by position or symbol, the
// occurrences of one symbol in the precise indexes, or, without a
// precise answer, the lines of the identifier there.
func (s service) findReferences(ctx context.Context, call toolkit.Call, in refsInput) (toolkit.Result, error) {
	if in.Symbol == "" && in.Line == 0 && in.Column == 0 {
		if in.Name == "" {
			return toolkit.Result{}, toolerr.Field("name", "give name, a position (path, line and column) or a symbol")
		}
		return s.textReferences(ctx, call, in, byName)
	}
	if in.Name != "" {
		return toolkit.Result{}, toolerr.Field("name", "give name, or a position (path, line and column), or a symbol: one of them")
	}
	l, err := s.lens(ctx, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := l.resolve(ctx, positionInput{Path: in.Path, Line: in.Line, Column: in.Column, Symbol: in.Symbol})
	if err != nil {
		return toolkit.Result{}, err
	}
	if t.symbol == "" {
		// The textual answer for the name, over the whole repository, in
		// code (comments and strings left out), as near the precise one
		// as it goes.
		in.Name, in.Path, in.ExcludeComments, in.ExcludeStrings = t.name, "", true, true
		return s.textReferences(ctx, call, in, t.reason)
	}
	return s.preciseReferences(ctx, call, l, t, in)
}

// textReferences answers find_references by name: the lines where the
// identifier occurs as a whole word, case-sensitively (as `rg -w -s`),
// grouped by file, each with the columns of every occurrence; reason says
// why the answer is made by search.
func (s service) textReferences(ctx context.Context, call toolkit.Call, in refsInput, reason string) (toolkit.Result, error) {
	if !identifier.MatchString(in.Name) {
		return toolkit.Result{}, toolerr.Field("name", "%q is not an identifier: letters, digits and '_', not starting with a digit", in.Name)
	}
	q, err := wordQuery(in.Name)
	if err != nil {
		return toolkit.Result{}, err
	}
	sel, err := newSelector(in.Patterns, in.Exclude)
	if err != nil {
		return toolkit.Result{}, err
	}
	snap, files, r, err := s.searchable(ctx, call, in.Repo, "")
	if err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(FindReferencesTool, call.Tenant, r.Name, in)
	at, err := readPosition(pages, in.Cursor)
	if err != nil {
		return toolkit.Result{}, err
	}
	// Definitions are marked from what the view's symbol table holds,
	// built on briefly while it is not whole.
	st := s.tables.For(snap).Build(ctx, definitionsWork)
	f := newRefFinder(in, files, st)
	gctx, cancel := toolkit.Gathering(ctx)
	lines, counted, stop := f.search(gctx, files, q, at, under(folderOf(in.Path), sel))
	cancel()
	out := refsOutput{Name: in.Name, precisionJSON: precisionJSON{Precision: searchPrecision, Reason: reason},
		Files: []refFileJSON{}, Incomplete: stop != (textsearch.Position{})}
	shown := out.page(lines, counted, stop, at, pages, int(in.Limit))
	out.Message = refsMessage(out, at.before, shown)
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// wordQuery is the search for name as a whole word, case-sensitively.
func wordQuery(name string) (*textsearch.Query, error) {
	word := `\b` + name + `\b`
	q, err := textsearch.Compile(word, true)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", word, err)
	}
	return q, nil
}

// newRefFinder makes the finder of in.Name's lines in files, marking
// definitions and enclosing functions from st.
func newRefFinder(in refsInput, files []*repo.File, st *symbols.State) *refFinder {
	f := &refFinder{word: regexp.MustCompile(`\b` + in.Name + `\b`), files: map[string]*repo.File{}, in: in, symbols: st}
	for _, file := range files {
		f.files[file.Path] = file
	}
	return f
}

// search finds the lines referring to the name from at on, in the files
// include keeps: the lines, their total (a lower bound when comments or
// strings are left out) and, when it stopped before the end (the lines it
// may look at, or its time, ran out), the last line it looked at, where
// the next page goes on from (zero when it looked at every line). Without
// filters it makes one line more than a page, to tell whether there is
// another page; with filters, maxFilteredLines.
func (f *refFinder) search(ctx context.Context, files []*repo.File, q *textsearch.Query, at refsPosition, include func(string) bool) ([]refLine, int, textsearch.Position) {
	limit := int(f.in.Limit) + 1
	if f.filtering() {
		limit = maxFilteredLines
	}
	res := textsearch.Search(ctx, files, q, textsearch.Options{Limit: limit, Include: include, Context: -1,
		After: textsearch.Position{Path: at.path, Line: at.line}})
	looked := res.Matches[:res.InOrder] // the lines up to where the search stopped, if it did
	stop := res.Reached
	if f.filtering() && len(looked) == limit && res.Total > limit {
		// The lines past the last one made were not looked at.
		last := looked[len(looked)-1]
		stop = textsearch.Position{Path: last.File, Line: last.Line}
	}
	lines, classified := f.lines(ctx, looked)
	if classified < len(looked) {
		last := looked[classified-1]
		stop = textsearch.Position{Path: last.File, Line: last.Line}
	}
	if f.filtering() {
		return lines, len(lines), stop
	}
	return lines, res.Total, stop
}

// refsPosition is where a page of find_references resumes: after the
// line (path, line) that ended the page before, the pages before having
// shown before lines. The zero position is the first page's.
type refsPosition struct {
	path         string
	line, before int
}

// maxCount bounds a position's line and count (no repository has more
// lines), so that no sum of them overflows.
const maxCount = math.MaxInt32

// readPosition reads the position of a cursor made in pages.
func readPosition(pages cursor.Scope, c string) (refsPosition, error) {
	var at refsPosition
	if err := pages.Decode(c, &at.path, &at.line, &at.before); err != nil {
		return refsPosition{}, err
	}
	if at.line > maxCount || at.before > maxCount {
		return refsPosition{}, cursor.Refused()
	}
	return at, nil
}

// page puts into o the first limit lines of those found from at on, the
// total (the lines the pages before showed and those counted from at on)
// and the cursor of the next page: after its last line when more lines
// were found than it shows; else, when the search stopped before the end
// (stop), after the last line the search looked at, so that the pages
// after it go on to the end, even from a page that found nothing to show.
// It returns how many lines it shows.
func (o *refsOutput) page(lines []refLine, counted int, stop textsearch.Position, at refsPosition, pages cursor.Scope, limit int) int {
	shown := lines[:min(limit, len(lines))]
	for _, l := range shown {
		o.add(l)
	}
	o.TotalLines = at.before + counted
	next := refsPosition{path: stop.Path, line: stop.Line, before: at.before + len(shown)}
	if len(lines) > len(shown) {
		last := shown[len(shown)-1]
		next.path, next.line = last.path, last.line
	} else if stop == (textsearch.Position{}) {
		return len(shown)
	}
	c := pages.Encode(next.path, next.line, next.before)
	o.NextCursor = &c
	return len(shown)
}

// under is the filter of the files below dir ("" for the root) that sel
// keeps.
func under(dir string, sel selector) func(string) bool {
	return func(p string) bool {
		rel, ok := relative(dir, p)
		return ok && sel.keeps(rel)
	}
}

// refLine is one line of a file with its occurrences.
type refLine struct {
	repo       string // another repository's ("" for the one read)
	path       string
	line       int
	columns    []int
	roles      []precise.Roles // precise lines: each occurrence's
	text       string
	definition symbols.Kind // "" when no occurrence is a definition
	enclosing  *enclosingJSON
	// reason is set on the lines of a precise answer found by search: why
	// their file is (it changed since it was indexed).
	reason string
}

// refFinder turns matching lines into references.
type refFinder struct {
	word    *regexp.Regexp
	files   map[string]*repo.File
	in      refsInput
	symbols *symbols.State // what the view's symbol table has parsed so far
	// The file being read: its content, its line starts so far, its
	// spans, the kinds of the symbols it defines by the name, by the
	// name's offset, and its symbols (nil when the table lacks it).
	path        string
	data        []byte
	buf         []byte // what a compressed file's data is read into, file after file
	starts      []int
	spans       []codespans.Span
	definitions map[int]symbols.Kind
	parsed      *symbols.File
}

// filtering reports whether occurrences are left out: in comments or
// strings, or, answering for a position or symbol without its
// declaration, the lines that define the name.
func (f *refFinder) filtering() bool {
	return f.in.ExcludeComments || f.in.ExcludeStrings || f.withoutDeclarations()
}

// withoutDeclarations reports whether lines that define the name are left
// out: a search answering for a position or a symbol, without
// includeDeclaration.
func (f *refFinder) withoutDeclarations() bool {
	return (f.in.Symbol != "" || f.in.Line != 0) && !f.in.IncludeDeclaration
}

// lines returns the matching lines with the columns of every occurrence,
// less the occurrences in comments or strings when those are left out
// (and the lines left with none), and how many of matches it looked at:
// it stops when ctx ends (past the first textsearch.MadeInFull, as Search
// does: a search whose time ran out answers with some).
func (f *refFinder) lines(ctx context.Context, matches []textsearch.Match) ([]refLine, int) {
	out := make([]refLine, 0, len(matches))
	for i, m := range matches {
		if i > 0 && i%textsearch.MadeInFull == 0 && ctx.Err() != nil {
			return out, i
		}
		if cols, def := f.columns(m.File, m.Line); len(cols) > 0 && (def == "" || !f.withoutDeclarations()) {
			out = append(out, refLine{path: m.File, line: m.Line, columns: cols, text: m.Text, definition: def,
				enclosing: enclosingOf(f.parsed, m.Line)})
		}
	}
	return out, len(matches)
}

// columns returns the 1-based byte columns of the occurrences on a line of
// a file that are kept, and the kind of symbol one of them defines, if the
// symbol table knows one.
func (f *refFinder) columns(path string, line int) ([]int, symbols.Kind) {
	file := f.files[path]
	if path != f.path {
		f.path, f.data, f.starts, f.spans = path, file.ContentInto(&f.buf), append(f.starts[:0], 0), nil
		if f.filtering() {
			f.spans = codespans.Of(language.Of(path), f.data)
		}
		f.parsed = parsedAsIs(f.symbols, file)
		f.definitions = definitions(f.parsed, f.in.Name)
	}
	for len(f.starts) <= line { // the line starts up to the one after line
		at := f.starts[len(f.starts)-1]
		next := bytes.IndexByte(f.data[at:], '\n')
		if next < 0 {
			f.starts = append(f.starts, len(f.data)+1)
			continue
		}
		f.starts = append(f.starts, at+next+1)
	}
	start, end := f.starts[line-1], min(f.starts[line]-1, len(f.data))
	var cols []int
	var def symbols.Kind
	for _, loc := range f.word.FindAllIndex(f.data[start:end], -1) {
		switch codespans.At(f.spans, start+loc[0]) {
		case codespans.Comment:
			if f.in.ExcludeComments {
				continue
			}
		case codespans.String:
			if f.in.ExcludeStrings {
				continue
			}
		}
		cols = append(cols, loc[0]+1)
		if k, ok := f.definitions[start+loc[0]]; ok {
			def = k
		}
	}
	return cols, def
}

// parsedAsIs returns the symbols the table's state found in file, when
// the state holds the file as it is now (else nil).
func parsedAsIs(st *symbols.State, file *repo.File) *symbols.File {
	parsed := st.File(file.Path)
	if parsed == nil || !parsed.Of(file) {
		return nil
	}
	return parsed
}

// definitions returns, by the byte offset of its name, the kind of each
// symbol named name in parsed (nil: none).
func definitions(parsed *symbols.File, name string) map[int]symbols.Kind {
	if parsed == nil {
		return nil
	}
	out := map[int]symbols.Kind{}
	for _, sym := range parsed.Symbols {
		if sym.Name == name {
			out[sym.NameAt] = sym.Kind
		}
	}
	return out
}

// add puts a line into the output, under its file.
func (o *refsOutput) add(l refLine) {
	if n := len(o.Files); n == 0 || o.Files[n-1].Path != l.path || o.Files[n-1].Repo != l.repo {
		file := refFileJSON{Repo: l.repo, Path: l.path, Language: language.Of(l.path), Lines: []refLineJSON{}}
		if l.reason != "" {
			file.Precision, file.Reason = searchPrecision, l.reason
		}
		o.Files = append(o.Files, file)
	}
	last := &o.Files[len(o.Files)-1]
	var roles []string
	for _, r := range l.roles {
		roles = append(roles, roleName(r))
	}
	last.Lines = append(last.Lines, refLineJSON{Line: l.line, Columns: l.columns, Roles: roles, Text: l.text,
		Definition: string(l.definition), Enclosing: l.enclosing})
}

// roleName says what an occurrence does with its symbol: defines it,
// imports it, writes it, or refers to it.
func roleName(r precise.Roles) string {
	switch {
	case r&precise.Definition != 0:
		return "definition"
	case r&precise.Import != 0:
		return "import"
	case r&precise.WriteAccess != 0:
		return "write"
	}
	return "reference"
}

// refsMessage says what the page, after before lines, holds and how to
// get the rest.
func refsMessage(out refsOutput, before, shown int) string {
	var msg string
	switch {
	case shown == 0 && out.Incomplete:
		msg = fmt.Sprintf("No lines referring to %s in the part this page searched", out.Name)
	case out.TotalLines == 0:
		msg = fmt.Sprintf("No references to %s found", out.Name)
	case before == 0 && out.NextCursor == nil:
		msg = fmt.Sprintf("%d lines referring to %s", shown, out.Name)
	case shown == 0:
		msg = fmt.Sprintf("No more lines referring to %s after the %d shown", out.Name, before)
	default:
		msg = fmt.Sprintf("Showing lines %d to %d of %d referring to %s", before+1, before+shown, out.TotalLines, out.Name)
	}
	if out.Incomplete {
		msg += "; this search stopped before the end, at its limit of lines looked at or of time: totalLines is a lower bound"
	}
	if out.NextCursor != nil {
		msg += "; pass next_cursor as cursor for the next page"
	}
	return msg
}
