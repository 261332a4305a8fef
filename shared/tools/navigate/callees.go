package navigate

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
)

// callee is a function a body calls, with the lines of the calls.
type callee struct {
	symbol string // "" when found by name
	name   string
	lines  []callJSON
}

// outgoing puts into o a page of the functions t's body calls, each with
// its call lines: from the precise index's occurrences in the body, or,
// when there is no precise answer about the body, the names called in it.
func (o *callersOutput) outgoing(ctx context.Context, l *lens, t target, pages cursor.Scope, in callersInput) error {
	var start int
	if err := pages.Decode(in.Cursor, &start); err != nil {
		return err
	}
	if start > maxCount {
		return cursor.Refused()
	}
	f, fn, reason, err := l.body(ctx, t)
	if err != nil {
		return err
	}
	if f == nil {
		o.note = "no function or method " + t.name + " with a body is defined in this repository (it is defined in another, or outside the indexed code, or is not a function)"
		return nil
	}
	var callees []callee
	if reason == "" {
		callees, err = l.preciseCallees(ctx, f, fn)
	} else {
		o.precisionJSON = precisionJSON{Precision: searchPrecision, Reason: reason}
		callees = searchedCallees(l.lines(f), fn)
	}
	if err != nil {
		return err
	}
	o.Total = len(callees)
	for _, c := range callees[min(start, len(callees)):min(start+int(in.Limit), len(callees))] {
		e := locationJSON{Name: c.name}
		if c.symbol != "" {
			places, _, err := l.describe(ctx, c.symbol, false, 1)
			if err != nil {
				return err
			}
			e = places[0]
		}
		o.Callees = append(o.Callees, callerJSON{locationJSON: e, Calls: c.lines})
	}
	if end := start + int(in.Limit); end < len(callees) {
		next := pages.Encode(end)
		o.NextCursor = &next
	}
	return nil
}

// body finds the function t names in the repository read: its file and
// symbol-table entry, and why its calls are found by name ("" when the
// precise index answers). A function defined elsewhere (another
// repository, outside the indexed code) or not a function answers no file.
func (l *lens) body(ctx context.Context, t target) (*repo.File, symbols.Symbol, string, error) {
	if t.symbol == "" {
		f, fn, ok := l.functionNamed(ctx, t.name)
		if !ok {
			return nil, symbols.Symbol{}, "", nil
		}
		return f, fn, t.reason, nil
	}
	info, _, err := l.set.Symbol(ctx, t.symbol)
	if err != nil {
		return nil, symbols.Symbol{}, "", fmt.Errorf("precise index, symbol %q: %w", t.symbol, err)
	}
	for _, d := range info.Definitions {
		if !l.home(d.Repo) {
			continue
		}
		f, parsed := l.source(ctx, "", d.Path)
		if f == nil || parsed == nil {
			continue
		}
		if l.fallsBack(f) {
			if fn, ok := functionIn(parsed, t.name); ok {
				return f, fn, l.why(f), nil
			}
			continue
		}
		if fn, ok := symbolNamedAt(parsed, l.lines(f), d.Line, d.Column); ok && isFunction(fn) {
			return f, fn, "", nil
		}
	}
	return nil, symbols.Symbol{}, "", nil
}

// functionNamed finds a function or method named name with the symbol
// table (the first in path order), for an answer made by search.
func (l *lens) functionNamed(ctx context.Context, name string) (*repo.File, symbols.Symbol, bool) {
	hits, err := l.table.Find(ctx, symbols.Query{Name: name, Match: symbols.Exact, CaseSensitive: true,
		Kinds: []symbols.Kind{symbols.Function, symbols.Method}})
	if err != nil || len(hits) == 0 {
		return nil, symbols.Symbol{}, false
	}
	f := l.file(hits[0].File.Path)
	return f, hits[0].Symbol, f != nil
}

// functionIn finds the first function or method named name in parsed.
func functionIn(parsed *symbols.File, name string) (symbols.Symbol, bool) {
	i := slices.IndexFunc(parsed.Symbols, func(s symbols.Symbol) bool { return s.Name == name && isFunction(s) })
	if i < 0 {
		return symbols.Symbol{}, false
	}
	return parsed.Symbols[i], true
}

// isFunction reports whether a symbol of the table has a body of code.
func isFunction(s symbols.Symbol) bool { return s.Kind == symbols.Function || s.Kind == symbols.Method }

// preciseCallees lists the functions and methods fn's lines refer to (but
// do not define), in the order of their first call, each with its lines.
func (l *lens) preciseCallees(ctx context.Context, f *repo.File, fn symbols.Symbol) ([]callee, error) {
	occs, err := l.set.Occurrences(ctx, f.Path, fn.Start, fn.End)
	if err != nil {
		return nil, fmt.Errorf("precise occurrences of %s:%d-%d: %w", f.Path, fn.Start, fn.End, err)
	}
	text := l.lines(f)
	var out []callee
	at := map[string]int{}
	for _, o := range occs {
		if definitionRole(o) || !isCallable(o.Symbol) {
			continue
		}
		i, ok := at[o.Symbol]
		if !ok {
			i, at[o.Symbol] = len(out), len(out)
			out = append(out, callee{symbol: o.Symbol, name: symbolName(o.Symbol)})
		}
		out[i].lines = addCall(out[i].lines, text, o.Line, o.Column)
	}
	return out, nil
}

// addCall adds a call at (line, col) of text to calls: a column of the
// last line when on it, else a new line.
func addCall(calls []callJSON, text *lines, line, col int) []callJSON {
	if n := len(calls); n > 0 && calls[n-1].Line == line {
		calls[n-1].Columns = append(calls[n-1].Columns, col)
		return calls
	}
	return append(calls, callJSON{Line: line, Columns: []int{col}, Text: text.show(line, col)})
}

// callName finds what looks like a call: a name followed by "(".
var callName = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// notCalls are the words before "(" that are not calls.
var notCalls = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "func": true, "function": true,
	"return": true, "catch": true, "typeof": true, "sizeof": true, "new": true, "def": true, "elif": true, "with": true,
	"select": true, "go": true, "defer": true, "and": true, "or": true, "not": true, "in": true, "await": true}

// searchedCallees lists the names fn's lines call (a name followed by
// "("), in the order of their first call, each with its lines: an answer
// made by search.
func searchedCallees(text *lines, fn symbols.Symbol) []callee {
	var out []callee
	at := map[string]int{}
	for line := fn.Start; line <= fn.End; line++ {
		start, end, ok := text.bounds(line)
		if !ok {
			break
		}
		for _, m := range callName.FindAllSubmatchIndex(text.data[start:end], -1) {
			name := string(text.data[start+m[2] : start+m[3]])
			if notCalls[name] || start+m[2] == fn.NameAt {
				continue
			}
			i, ok := at[name]
			if !ok {
				i, at[name] = len(out), len(out)
				out = append(out, callee{name: name})
			}
			out[i].lines = addCall(out[i].lines, text, line, m[2]+1)
		}
	}
	return out
}
