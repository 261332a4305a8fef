package navigate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// preciseRefsKind is the kind of the cursors of precise references: a
// textual answer's cursor is not one of theirs.
const preciseRefsKind = FindReferencesTool + " precise"

// maxCounted bounds the occurrences a precise answer reads past its page
// to count them all: past it, the total is a lower bound.
const maxCounted = 100000

// preciseAt is where a precise page resumes: after the line (repo, path,
// line) that ended the page before ("" for the repository read), the
// pages before having shown before lines (or callers).
type preciseAt struct {
	repo, path   string
	line, before int
}

// readPreciseAt reads the position of a cursor made in pages.
func readPreciseAt(pages cursor.Scope, c string) (preciseAt, error) {
	var at preciseAt
	if err := pages.Decode(c, &at.repo, &at.path, &at.line, &at.before); err != nil {
		return preciseAt{}, err
	}
	if at.line > maxCount || at.before > maxCount {
		return preciseAt{}, cursor.Refused()
	}
	return at, nil
}

// encode makes the cursor of the page after the line l, past before
// lines.
func (at preciseAt) encode(pages cursor.Scope) string {
	return pages.Encode(at.repo, at.path, at.line, at.before)
}

// location is where the precise index resumes after at: past its line.
func (at preciseAt) location() precise.Location {
	return precise.Location{Repo: at.repo, Path: at.path, Line: at.line, Column: maxCount}
}

// refStream reads a symbol's reference lines in order, the repository
// read first: its occurrences from the precise indexes (those keep
// accepts), merged with the lines found by search in the files that fall
// back (fallback).
type refStream struct {
	l        *lens
	symbol   string
	after    precise.Location
	keep     func(precise.Occurrence) bool
	buf      []precise.Occurrence
	more     bool
	scanned  int
	fallback []refLine
}

// peek returns the next occurrence kept, or nil at the end.
func (s *refStream) peek(ctx context.Context) (*precise.Occurrence, error) {
	for len(s.buf) == 0 && s.more {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		page, more, err := s.l.set.References(ctx, s.symbol, s.after, precise.MaxPage)
		if err != nil {
			return nil, fmt.Errorf("precise references of %q: %w", s.symbol, err)
		}
		s.more = more && len(page) > 0
		s.scanned += len(page)
		if len(page) > 0 {
			s.after = page[len(page)-1].Location()
		}
		s.buf = slices.DeleteFunc(page, func(o precise.Occurrence) bool { return !s.keep(o) })
	}
	if len(s.buf) == 0 {
		return nil, nil
	}
	return &s.buf[0], nil
}

// next returns the next line, or false at the end.
func (s *refStream) next(ctx context.Context) (refLine, bool, error) {
	o, err := s.peek(ctx)
	if err != nil {
		return refLine{}, false, err
	}
	if len(s.fallback) > 0 && (o == nil || s.before(s.fallback[0], *o)) {
		line := s.fallback[0]
		s.fallback = s.fallback[1:]
		return line, true, nil
	}
	if o == nil {
		return refLine{}, false, nil
	}
	line := refLine{repo: s.l.repoOf(o.Repo), path: o.Path, line: o.Line}
	for o != nil && s.l.repoOf(o.Repo) == line.repo && o.Path == line.path && o.Line == line.line {
		line.columns, line.roles = append(line.columns, o.Column), append(line.roles, o.Roles)
		s.buf = s.buf[1:]
		if o, err = s.peek(ctx); err != nil {
			return refLine{}, false, err
		}
	}
	return line, true, nil
}

// before reports whether a line found by search (in the repository read)
// comes before the occurrence o.
func (s *refStream) before(l refLine, o precise.Occurrence) bool {
	if !s.l.home(o.Repo) {
		return true
	}
	return cmp.Or(strings.Compare(l.path, o.Path), l.line-o.Line) < 0
}

// take reads up to limit lines and counts the rest (until maxCounted
// occurrences are read, or ctx ends): the lines, how many there are from
// the stream's start, and whether every one was counted.
func (s *refStream) take(ctx context.Context, limit int) (lines []refLine, counted int, complete bool, err error) {
	for {
		line, ok, err := s.next(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return lines, counted, false, nil
		case err != nil:
			return nil, 0, false, err
		case !ok:
			return lines, counted, true, nil
		}
		counted++
		if len(lines) < limit {
			lines = append(lines, line)
		} else if s.scanned >= maxCounted {
			return lines, counted, false, nil
		}
	}
}

// references opens the stream of t's reference lines after at, in the
// files kept (paths from the repository's root), without the occurrences
// of the roles drop (and, when drop has Definition, the lines found by
// search that define the name).
func (l *lens) references(ctx context.Context, t target, at preciseAt, kept func(string) bool, drop precise.Roles) (*refStream, error) {
	changed, err := l.changedFiles(ctx, t, kept)
	if err != nil {
		return nil, err
	}
	fallback, err := l.searchChanged(ctx, t, changed, at, drop&precise.Definition == 0)
	if err != nil {
		return nil, err
	}
	searched := map[string]bool{}
	for _, f := range changed {
		searched[f.Path] = true
	}
	keep := func(o precise.Occurrence) bool {
		if o.Roles&drop != 0 || !kept(o.Path) {
			return false
		}
		if l.home(o.Repo) {
			return l.file(o.Path) != nil && !searched[o.Path]
		}
		f, _ := l.source(ctx, o.Repo, o.Path)
		return f != nil
	}
	return &refStream{l: l, symbol: t.symbol, after: at.location(), keep: keep, more: true, fallback: fallback}, nil
}

// changedFiles lists the files kept, in t's language, that a precise
// answer about t searches by name instead (see fallsBack): none for a
// local symbol, which is only in its own file (unchanged, or the answer
// would not be precise), nor where the indexes are of the view's own
// files (State.Unchanged), which are then not all read.
func (l *lens) changedFiles(ctx context.Context, t target, kept func(string) bool) ([]*repo.File, error) {
	if _, local := localFile(t.symbol); local || l.state.Unchanged {
		return nil, nil
	}
	files, err := l.files.list(ctx)
	if err != nil {
		return nil, err
	}
	lang := ""
	if t.file != nil {
		lang = language.Of(t.file.Path)
	}
	var out []*repo.File
	for _, f := range files {
		if kept(f.Path) && (lang == "" || language.Of(f.Path) == lang) && l.fallsBack(f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// searchChanged finds the lines of t's name in the files changed (as a
// whole word, outside comments and strings) after at, in path order;
// lines that define the name only withDeclarations.
func (l *lens) searchChanged(ctx context.Context, t target, changed []*repo.File, at preciseAt, withDeclarations bool) ([]refLine, error) {
	if len(changed) == 0 || at.repo != "" || !identifier.MatchString(t.name) {
		return nil, nil
	}
	q, err := wordQuery(t.name)
	if err != nil {
		return nil, err
	}
	f := newRefFinder(refsInput{Name: t.name, ExcludeComments: true, ExcludeStrings: true}, changed, l.table)
	res := textsearch.Search(ctx, changed, q, textsearch.Options{Limit: maxFilteredLines, Context: -1})
	lines, _ := f.lines(ctx, res.Matches[:res.InOrder])
	lines = slices.DeleteFunc(lines, func(r refLine) bool {
		past := cmp.Or(strings.Compare(r.path, at.path), r.line-at.line) > 0
		return !past || !withDeclarations && r.definition != ""
	})
	for i := range lines {
		lines[i].reason = l.why(f.files[lines[i].path])
	}
	slices.SortFunc(lines, func(a, b refLine) int { return cmp.Or(strings.Compare(a.path, b.path), a.line-b.line) })
	return lines, nil
}

// preciseReferences answers find_references for a symbol of the precise
// indexes: its occurrences, a page of lines at a time.
func (s service) preciseReferences(ctx context.Context, call toolkit.Call, l *lens, t target, in refsInput) (toolkit.Result, error) {
	sel, err := newSelector(in.Patterns, in.Exclude)
	if err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(preciseRefsKind, call.Tenant, l.ref.Name, in)
	at, err := readPreciseAt(pages, in.Cursor)
	if err != nil {
		return toolkit.Result{}, err
	}
	drop := precise.Definition
	if in.IncludeDeclaration {
		drop = 0
	}
	stream, err := l.references(ctx, t, at, sel.keeps, drop)
	if err != nil {
		return toolkit.Result{}, err
	}
	gctx, cancel := toolkit.Gathering(ctx)
	lines, counted, complete, err := stream.take(gctx, int(in.Limit))
	cancel()
	if err != nil && at.repo != "" {
		return toolkit.Result{}, cursor.Refused() // a repository the caller no longer reads
	} else if err != nil {
		return toolkit.Result{}, err
	}
	out := refsOutput{Name: t.name, Symbol: t.symbol, precisionJSON: precisionOf(t), Files: []refFileJSON{},
		TotalLines: at.before + counted, Incomplete: !complete}
	for _, line := range lines {
		out.add(l.shown(ctx, line))
	}
	if next, ok := nextAt(at, lines, counted, complete); ok {
		c := next.encode(pages)
		out.NextCursor = &c
	}
	out.Message = refsMessage(out, at.before, len(lines)) + changedMessage(out.Files)
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// nextAt is where the page after one showing lines (of counted from at,
// all of them when complete) resumes, if there is one.
func nextAt(at preciseAt, lines []refLine, counted int, complete bool) (preciseAt, bool) {
	if complete && counted == len(lines) {
		return preciseAt{}, false
	}
	next := at
	if len(lines) > 0 {
		last := lines[len(lines)-1]
		next = preciseAt{repo: last.repo, path: last.path, line: last.line, before: at.before + len(lines)}
	}
	return next, true
}

// shown completes a line for the answer: a precise line's text and the
// function it is in.
func (l *lens) shown(ctx context.Context, line refLine) refLine {
	if line.roles == nil {
		return line // found by search: complete
	}
	f, parsed := l.source(ctx, line.repo, line.path)
	if f != nil {
		line.text = l.lines(f).show(line.line, line.columns[0])
	}
	line.enclosing = enclosingOf(parsed, line.line)
	return line
}

// changedMessage names the files of a precise answer searched by name.
func changedMessage(files []refFileJSON) string {
	var searched []string
	for _, f := range files {
		if f.Precision == searchPrecision {
			searched = append(searched, f.Path)
		}
	}
	if len(searched) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s changed since indexing and %s searched by name (lines found so may name other symbols of that name); every other file is precise",
		strings.Join(searched, ", "), map[bool]string{true: "was", false: "were"}[len(searched) == 1])
}
