package navigate

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// position is a place in a file a call asks about, checked against the
// file as it is now, with the identifier there.
type position struct {
	file         *repo.File
	line, column int
	// name is the identifier the column is in (or just after), "" when
	// there is none; nameColumn is where it starts.
	name       string
	nameColumn int
}

// position checks a position of a call: a file the tools read, a line it
// has and a column on that line (the one just past its end included).
func (l *lens) position(p string, line, column int) (position, error) {
	f := l.file(p)
	if f == nil {
		return position{}, notReadable(l.view, p)
	}
	content := l.lines(f)
	start, end, ok := content.bounds(line)
	if !ok {
		return position{}, toolerr.Field("line", "%s has %d lines; line %d is past its end", p, f.Lines(), line).With("path", p)
	}
	text := content.data[start:end]
	if column > len(text)+1 {
		return position{}, toolerr.Field("column", "line %d of %s has %d bytes; column %d is past its end (columns count bytes from 1)",
			line, p, len(text), column).With("path", p)
	}
	pos := position{file: f, line: line, column: column}
	if from, to := identifierAround(text, column-1); from < to {
		pos.name, pos.nameColumn = string(text[from:to]), from+1
	}
	return pos, nil
}

// notReadable says why p is not a file the tools read: refused by the
// policy, missing, a folder, or left out of search (binary, ignored).
func notReadable(view repo.View, p string) error {
	info, err := statFile(view, p)
	switch {
	case err != nil:
		return err
	case info.IsDir():
		return toolerr.Field("path", "%s is a folder; give the path of a file", p).With("path", p)
	}
	return toolerr.Field("path", "%s is not a file the navigation tools read (binary, ignored, or too large); grep_codebase searches the same files", p).With("path", p)
}

// lines is a file's content with where each of its lines starts, so
// that an answer finds many lines of one file without reading it from its
// start for each.
type lines struct {
	data   []byte
	starts []int
}

// linesOf indexes the lines of data.
func linesOf(data []byte) *lines {
	l := &lines{data: data, starts: []int{0}}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// bounds returns the bytes of line n (1-based), without its "\n" (and
// "\r").
func (l *lines) bounds(n int) (start, end int, ok bool) {
	if n < 1 || n > len(l.starts) {
		return 0, 0, false
	}
	start, end = l.starts[n-1], len(l.data)
	if n < len(l.starts) {
		end = l.starts[n] - 1
	} else if i := bytes.IndexByte(l.data[start:], '\n'); i >= 0 {
		end = start + i
	}
	if end > start && l.data[end-1] == '\r' {
		end--
	}
	return start, end, true
}

// show returns line n without its ending, cut for display around the
// byte column col ("" past the end).
func (l *lines) show(n, col int) string {
	start, end, ok := l.bounds(n)
	if !ok {
		return ""
	}
	return cutLine(l.data[start:end], col-1)
}

// cutLine is a line as answers show it: cut around the byte at.
func cutLine(line []byte, at int) string {
	return textsearch.Cut(line, max(at, 0), textsearch.DefaultMaxLineBytes)
}

// identifierAround returns the bytes [from, to) of the identifier that
// byte i of text is in, or ends just before (a column just past a name
// names it); from == to when there is none.
func identifierAround(text []byte, i int) (from, to int) {
	if i >= len(text) || !isWordByte(text[i]) {
		if i == 0 || i > len(text) || !isWordByte(text[i-1]) {
			return 0, 0
		}
		i--
	}
	from, to = i, i
	for from > 0 && isWordByte(text[from-1]) {
		from--
	}
	for to < len(text) && isWordByte(text[to]) {
		to++
	}
	if !identifier.Match(text[from:to]) {
		return 0, 0 // a number
	}
	return from, to
}

// isWordByte reports whether b can be part of an identifier.
func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// target is what a call is about: a symbol of the precise index, or, when
// there is no precise answer, the name to search for and why.
type target struct {
	name   string
	symbol string   // "" when the answer is made by search
	also   []string // other symbols at the same place (an embedded field's type)
	commit string   // the commit of the index that answers
	reason string   // why the answer is made by search
	file   *repo.File
}

// at resolves a position: the symbols its precise index has there, or
// why there is no precise answer.
func (l *lens) at(ctx context.Context, p position) (target, error) {
	t := target{name: p.name, file: p.file}
	if t.reason = l.why(p.file); t.reason != "" {
		return t, nil
	}
	occs, err := l.set.At(ctx, p.file.Path, p.line, p.column)
	if err == nil && len(occs) == 0 && p.name != "" && p.nameColumn != p.column {
		occs, err = l.set.At(ctx, p.file.Path, p.line, p.nameColumn)
	}
	if err != nil {
		return t, fmt.Errorf("precise index at %s:%d:%d: %w", p.file.Path, p.line, p.column, err)
	}
	if len(occs) == 0 {
		t.reason = fmt.Sprintf("the precise index has no symbol at %s:%d:%d (a comment, a keyword, a literal, or code its indexer could not resolve)",
			p.file.Path, p.line, p.column)
		return t, nil
	}
	t.symbol, t.commit = occs[0].Symbol, l.docCommit(p.file.Path)
	for _, o := range occs[1:] {
		if o.Range == occs[0].Range && o.Symbol != t.symbol {
			t.also = append(t.also, o.Symbol)
		}
	}
	if t.name == "" {
		t.name = symbolName(t.symbol)
	}
	return t, nil
}

// named resolves a symbol another answer gave: the symbol itself when the
// precise indexes know it; else its name, to search for.
func (l *lens) named(ctx context.Context, symbol string) (target, error) {
	info, ok, err := l.set.Symbol(ctx, symbol)
	if err != nil {
		return target{}, fmt.Errorf("precise index, symbol %q: %w", symbol, err)
	}
	t := target{name: describeName(info, symbol)}
	if !ok {
		if !identifier.MatchString(t.name) {
			return target{}, toolerr.New(toolerr.ResourceNotFound,
				"No precise index of repository %s knows this symbol: symbols come from the answers of find_symbols, find_definition and find_references about the same repository; look the name up with find_symbols", l.ref.Name).
				With("symbol", symbol)
		}
		t.reason = "no precise index of this repository knows the symbol (one of an earlier index, or of a repository you cannot read): searched for its name, " + t.name
		return t, nil
	}
	if local, ok := localFile(symbol); ok {
		f := l.file(local)
		if f == nil {
			return target{}, toolerr.New(toolerr.ResourceNotFound, "No file %s in the repository", local).With("symbol", symbol)
		}
		if t.file, t.reason = f, l.why(f); t.reason != "" {
			return t, nil // its positions are the file's as it was
		}
	}
	t.symbol, t.commit = symbol, l.commit()
	for _, d := range info.Definitions {
		if l.home(d.Repo) {
			t.commit, t.file = l.docCommit(d.Path), l.file(d.Path)
			break
		}
	}
	return t, nil
}

// localFile returns the file of a local symbol as answers give it
// ("local 12 path/of/file.go").
func localFile(symbol string) (string, bool) {
	rest, ok := strings.CutPrefix(symbol, "local ")
	if !ok {
		return "", false
	}
	_, p, ok := strings.Cut(rest, " ")
	return p, ok && p != ""
}

// resolve resolves what a call names: a symbol, or a position.
func (l *lens) resolve(ctx context.Context, in positionInput) (target, error) {
	if in.Symbol != "" {
		if in.Path != "" || in.Line != 0 || in.Column != 0 {
			return target{}, toolerr.Field("symbol", "give either symbol or a position (path, line and column), not both")
		}
		return l.named(ctx, in.Symbol)
	}
	if in.Path == "" || in.Line == 0 || in.Column == 0 {
		return target{}, toolerr.Field("path", "give a position (path, line and column, from 1) or a symbol")
	}
	p, err := l.position(in.Path, int(in.Line), int(in.Column))
	if err != nil {
		return target{}, err
	}
	t, err := l.at(ctx, p)
	if err == nil && t.symbol == "" && t.name == "" {
		return target{}, toolerr.Field("column", "there is no identifier at line %d, column %d of %s: give the column of a name (columns count bytes from 1)",
			in.Line, in.Column, in.Path).With("path", in.Path)
	}
	return t, err
}

// positionInput is how the position tools name what they are about: a
// position in a file, or a SCIP symbol another answer gave.
type positionInput struct {
	Path   string     `json:"path"`
	Line   schema.Int `json:"line"`
	Column schema.Int `json:"column"`
	Symbol string     `json:"symbol"`
	Repo   string     `json:"repo"`
}

// definitionRole tells an occurrence that defines its symbol.
func definitionRole(o precise.Occurrence) bool { return o.Roles&precise.Definition != 0 }
