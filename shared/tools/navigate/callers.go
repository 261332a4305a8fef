package navigate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// Directions of find_callers.
const (
	incoming = "incoming"
	outgoing = "outgoing"
)

// topLevel names the code outside any function a reference can be in (a
// package-level variable's initializer, a module's statements).
const topLevel = "(top level)"

type callersInput struct {
	positionInput
	Direction string     `json:"direction"`
	Limit     schema.Int `json:"limit"`
	Cursor    string     `json:"cursor"`
}

// callJSON is a line with calls: the columns of each.
type callJSON struct {
	Line    int    `json:"line"`
	Columns []int  `json:"columns"`
	Text    string `json:"text"`
}

// callerJSON is a function that calls (incoming) or is called (outgoing),
// with the lines of the calls.
type callerJSON struct {
	locationJSON
	Calls []callJSON `json:"calls"`
}

type callersOutput struct {
	Name   string `json:"name"`
	Symbol string `json:"symbol,omitempty"`
	precisionJSON
	Direction  string       `json:"direction"`
	Callers    []callerJSON `json:"callers,omitempty"`
	Callees    []callerJSON `json:"callees,omitempty"`
	Total      int          `json:"total"`
	NextCursor *string      `json:"next_cursor"`
	Incomplete bool         `json:"incomplete,omitempty"`
	Message    string       `json:"message,omitempty"`
	note       string       // what the message adds
}

// findCallers serves find_callers: the functions that call the function
// at a position (or a symbol), one level, each with its call lines; or,
// outgoing, the functions it calls. Paged by function.
func (s service) findCallers(ctx context.Context, call toolkit.Call, in callersInput) (toolkit.Result, error) {
	l, err := s.lens(ctx, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := l.resolve(ctx, in.positionInput)
	if err != nil {
		return toolkit.Result{}, err
	}
	out := callersOutput{Name: t.name, Symbol: t.symbol, precisionJSON: precisionOf(t), Direction: in.Direction}
	kind := FindCallersTool + " " + out.Precision + " " + in.Direction
	pages := s.cursors.Scope(kind, call.Tenant, l.ref.Name, in)
	switch {
	case in.Direction == outgoing:
		out.Callees = []callerJSON{}
		err = out.outgoing(ctx, l, t, pages, in)
	case t.symbol != "":
		out.Callers = []callerJSON{}
		err = out.incomingPrecise(ctx, l, t, pages, in)
	default:
		out.Callers = []callerJSON{}
		err = out.incomingSearched(ctx, l, t, pages, in)
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	out.Message = callersMessage(out)
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// incomingPrecise puts into o a page of the functions whose code refers
// to t's symbol, each with its lines.
func (o *callersOutput) incomingPrecise(ctx context.Context, l *lens, t target, pages cursor.Scope, in callersInput) error {
	at, err := readPreciseAt(pages, in.Cursor)
	if err != nil {
		return err
	}
	stream, err := l.references(ctx, t, at, func(string) bool { return true }, precise.Definition|precise.Import)
	if err != nil {
		return err
	}
	gctx, cancel := toolkit.Gathering(ctx)
	defer cancel()
	groups, complete, err := gatherCallers(ctx, gctx, l, stream, int(in.Limit))
	if err != nil {
		return err
	}
	o.Total, o.Incomplete = at.before+groups.counted, !complete
	o.Callers = groups.described(ctx)
	if complete && groups.counted == len(groups.kept) {
		return nil
	}
	next := at
	if n := len(groups.kept); n > 0 {
		last := groups.kept[n-1].lines[len(groups.kept[n-1].lines)-1]
		next = preciseAt{repo: last.repo, path: last.path, line: last.line, before: at.before + n}
	}
	c := next.encode(pages)
	o.NextCursor = &c
	return nil
}

// gatherCallers reads the stream's lines into the functions they are in,
// until gctx ends or maxCounted occurrences are read past the first limit
// functions, and reports whether it read them all.
func gatherCallers(ctx, gctx context.Context, l *lens, stream *refStream, limit int) (*callerGroups, bool, error) {
	groups := &callerGroups{l: l}
	for {
		line, ok, err := stream.next(gctx)
		switch {
		case err != nil && gctx.Err() != nil:
			return groups, false, nil
		case err != nil:
			return nil, false, err
		case !ok:
			return groups, true, nil
		}
		if !groups.add(ctx, line, limit) && stream.scanned >= maxCounted {
			return groups, false, nil
		}
	}
}

// callerGroup is the lines of one function (or of a file's top level)
// that refer to a symbol.
type callerGroup struct {
	repo, path string
	fn         *symbols.Symbol // nil: the top level
	parsed     *symbols.File
	lines      []refLine
}

// callerGroups gathers lines, in order, into the functions they are in:
// the first of them (kept), and a count of all.
type callerGroups struct {
	l       *lens
	kept    []callerGroup
	counted int
	key     string
}

// add puts a line into its function's group, a new one when it is in
// another function than the line before, and reports whether it was
// kept (its group is one of the first limit).
func (g *callerGroups) add(ctx context.Context, line refLine, limit int) bool {
	_, parsed := g.l.source(ctx, line.repo, line.path)
	var fn *symbols.Symbol
	key := line.repo + "\x00" + line.path + "\x00"
	if parsed != nil {
		if s, ok := enclosingFunction(parsed, line.line); ok {
			fn, key = &s, key+strconv.Itoa(s.From)
		}
	}
	if key != g.key {
		g.key = key
		g.counted++
		if len(g.kept) < limit {
			g.kept = append(g.kept, callerGroup{repo: line.repo, path: line.path, fn: fn, parsed: parsed})
		}
	}
	if g.counted > len(g.kept) {
		return false
	}
	last := &g.kept[len(g.kept)-1]
	last.lines = append(last.lines, line)
	return true
}

// described is the kept groups as answers give them.
func (g *callerGroups) described(ctx context.Context) []callerJSON {
	out := []callerJSON{}
	for _, c := range g.kept {
		caller := callerJSON{locationJSON: g.l.caller(ctx, c), Calls: []callJSON{}}
		for _, line := range c.lines {
			line = g.l.shown(ctx, line)
			caller.Calls = append(caller.Calls, callJSON{Line: line.line, Columns: line.columns, Text: line.text})
		}
		out = append(out, caller)
	}
	return out
}

// caller describes the function of a group: its name, place and
// signature from the symbol table, and its symbol from the precise index
// (when its file is indexed as it is).
func (l *lens) caller(ctx context.Context, c callerGroup) locationJSON {
	e := locationJSON{Name: topLevel, Repo: c.repo, Path: c.path}
	if c.fn == nil {
		return e
	}
	parsed := c.parsed.WithText()
	e.Name, e.Kind, e.Container = c.fn.Name, string(c.fn.Kind), c.fn.Container
	e.StartLine, e.EndLine, e.Signature = c.fn.Start, c.fn.End, parsed.Signature(*c.fn)
	e.Line, e.Column = nameLineColumn(parsed.Text(), *c.fn)
	if f := l.file(c.path); c.repo == "" && f != nil && l.why(f) == "" {
		e.Symbol = l.definedAt(ctx, c.path, e.Line, e.Column)
	}
	return e
}

// definedAt returns the symbol the precise index has defined at a
// position of the repository read ("" for none).
func (l *lens) definedAt(ctx context.Context, path string, line, col int) string {
	occs, err := l.set.At(ctx, path, line, col)
	if err != nil {
		return ""
	}
	for _, o := range occs {
		if definitionRole(o) {
			return o.Symbol
		}
	}
	return ""
}

// incomingSearched puts into o a page of the functions whose code names
// t (as a whole word, outside comments and strings; lines that define the
// name left out), each with its lines: without a precise answer.
func (o *callersOutput) incomingSearched(ctx context.Context, l *lens, t target, pages cursor.Scope, in callersInput) error {
	at, err := readPosition(pages, in.Cursor)
	if err != nil {
		return err
	}
	q, err := wordQuery(t.name)
	if err != nil {
		return err
	}
	files, err := l.files.list(ctx)
	if err != nil {
		return err
	}
	f := newRefFinder(refsInput{Name: t.name, ExcludeComments: true, ExcludeStrings: true, Limit: in.Limit}, files, l.table)
	gctx, cancel := toolkit.Gathering(ctx)
	lines, _, stop := f.search(gctx, files, q, at, func(string) bool { return true })
	cancel()
	groups := callerGroups{l: l}
	for _, line := range lines {
		if line.definition == "" {
			groups.add(ctx, line, int(in.Limit))
		}
	}
	o.Total, o.Incomplete = at.before+groups.counted, stop != (textsearch.Position{})
	o.Callers = groups.described(ctx)
	next := refsPosition{path: stop.Path, line: stop.Line, before: at.before + len(groups.kept)}
	if groups.counted > len(groups.kept) {
		last := groups.kept[len(groups.kept)-1].lines
		next.path, next.line = last[len(last)-1].path, last[len(last)-1].line
	} else if stop == (textsearch.Position{}) {
		return nil
	}
	c := pages.Encode(next.path, next.line, next.before)
	o.NextCursor = &c
	return nil
}

// callersMessage says what the answer holds.
func callersMessage(o callersOutput) string {
	var b strings.Builder
	if o.Precision == searchPrecision {
		fmt.Fprintf(&b, "No precise answer (%s): found by name, so some lines may name another %s; ", o.Reason, o.Name)
	}
	list, what := o.Callers, map[bool]string{true: " refers to ", false: " refer to "}[o.Total == 1]+o.Name
	if o.Direction == outgoing {
		list, what = o.Callees, map[bool]string{true: " is", false: " are"}[o.Total == 1]+" called by "+o.Name
	}
	b.WriteString(plural(o.Total, "function") + what)
	if o.Incomplete {
		b.WriteString(" (counted until the answer's time or reading limit: a lower bound)")
	}
	if o.NextCursor != nil {
		fmt.Fprintf(&b, "; showing %d, pass next_cursor as cursor for the next page", len(list))
	}
	if o.note != "" {
		b.WriteString("; " + o.note)
	}
	return b.String()
}
