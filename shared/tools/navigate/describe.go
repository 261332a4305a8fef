package navigate

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/symbols"
)

// Bounds of what answers say of a symbol.
const (
	maxSignatureBytes = 1000
	maxDocBytes       = 4000
)

// locationJSON is a symbol as answers place it: what it is (its SCIP
// symbol, name, kind, signature and doc) and where it is defined.
type locationJSON struct {
	Symbol    string `json:"symbol,omitempty"`
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"`
	Repo      string `json:"repo,omitempty"`
	Path      string `json:"path,omitempty"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Container string `json:"container,omitempty"`
	Signature string `json:"signature,omitempty"`
	Doc       string `json:"doc,omitempty"`
	External  bool   `json:"external,omitempty"`
	// Precision and Reason are set on a definition found by search in a
	// precise answer: its file changed since it was indexed.
	Precision string `json:"precision,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// describe places symbol at its definitions (the first limit of them;
// all counts them): its signature (and doc, with withDoc) at each. A symbol
// defined nowhere the indexes cover (the standard library when it is not
// indexed, a dependency) is one entry, external, without a place.
func (l *lens) describe(ctx context.Context, symbol string, withDoc bool, limit int) (out []locationJSON, all int, err error) {
	info, _, err := l.set.Symbol(ctx, symbol)
	if err != nil {
		return nil, 0, fmt.Errorf("precise index, symbol %q: %w", symbol, err)
	}
	base := locationJSON{Symbol: symbol, Name: describeName(info, symbol), Kind: kindName(info.Kind),
		Signature: cutText(info.Signature, maxSignatureBytes)}
	if withDoc {
		base.Doc = cutText(info.Doc, maxDocBytes)
	}
	if limit <= 0 {
		return nil, max(1, len(info.Definitions)), nil
	}
	for _, d := range info.Definitions {
		if len(out) >= limit {
			break
		}
		out = append(out, l.place(ctx, base, d)...)
	}
	if len(out) == 0 {
		base.External = len(info.Definitions) == 0
		return []locationJSON{base}, 1, nil
	}
	return out, max(len(info.Definitions), len(out)), nil
}

// place puts e at the definition d: its place, line range and container
// from the symbol table. A definition in a file that changed since it was
// indexed is found by name in the file as it is now (search); one in a
// file the repository does not show is left out.
func (l *lens) place(ctx context.Context, e locationJSON, d precise.Occurrence) []locationJSON {
	f, parsed := l.source(ctx, d.Repo, d.Path)
	if f == nil {
		return nil
	}
	e.Repo, e.Path = l.repoOf(d.Repo), d.Path
	if l.home(d.Repo) && l.fallsBack(f) {
		return []locationJSON{searchedDefinition(e, parsed, d.Line, l.why(f))}
	}
	e.Line, e.Column, e.StartLine, e.EndLine = d.Line, d.Column, d.Line, d.EndLine
	if d.Enclosing != (precise.Range{}) {
		e.StartLine, e.EndLine = d.Enclosing.Line, d.Enclosing.EndLine
	}
	if parsed == nil {
		return []locationJSON{e}
	}
	if sym, ok := symbolNamedAt(parsed, l.lines(f), d.Line, d.Column); ok {
		e.StartLine, e.EndLine, e.Container = sym.Start, sym.End, sym.Container
	} else if fn, ok := enclosingFunction(parsed, d.Line); ok {
		e.Container = fn.Name
	}
	return []locationJSON{e}
}

// searchedDefinition places e, whose file changed since it was indexed
// (when its definition was at line), at the definition of its name the
// symbol table finds in the file as it is now: of those named so, the
// one in the symbol's owner (a method's type), then the nearest to where
// it was.
func searchedDefinition(e locationJSON, parsed *symbols.File, line int, why string) locationJSON {
	e.Precision, e.Reason = searchPrecision, why
	if parsed == nil {
		return e
	}
	owner := ownerName(e.Symbol)
	best, found := symbols.Symbol{}, false
	for _, s := range parsed.Symbols {
		if s.Name == e.Name && (!found || closer(s, best, owner, line)) {
			best, found = s, true
		}
	}
	if !found {
		e.Reason += "; the symbol table finds no definition of " + e.Name + " in it now"
		return e
	}
	parsed = parsed.WithText()
	e.Line, e.Column = nameLineColumn(parsed.Text(), best)
	e.StartLine, e.EndLine, e.Container = best.Start, best.End, best.Container
	e.Signature = parsed.Signature(best)
	return e
}

// closer reports whether a is a better guess than b of where a symbol
// owned by owner, defined at line when indexed, is now.
func closer(a, b symbols.Symbol, owner string, line int) bool {
	if ao, bo := a.Container == owner, b.Container == owner; ao != bo {
		return ao
	}
	return abs(a.Start-line) < abs(b.Start-line)
}

// abs is |n|.
func abs(n int) int { return max(n, -n) }

// symbolNamedAt returns the symbol of the table whose name is at (line,
// col) of the file whose lines are text.
func symbolNamedAt(parsed *symbols.File, text *lines, line, col int) (symbols.Symbol, bool) {
	start, _, ok := text.bounds(line)
	if !ok {
		return symbols.Symbol{}, false
	}
	at := start + col - 1
	for _, s := range parsed.Symbols {
		if s.NameAt == at {
			return s, true
		}
	}
	return symbols.Symbol{}, false
}

// nameLineColumn is where a symbol's name is in text: its line and byte
// column, from 1.
func nameLineColumn(text string, s symbols.Symbol) (line, col int) {
	if s.NameAt < s.From || s.NameAt > len(text) {
		return s.Start, 1
	}
	line = s.Start + strings.Count(text[s.From:s.NameAt], "\n")
	return line, s.NameAt - (strings.LastIndexByte(text[:s.NameAt], '\n') + 1) + 1
}

// enclosingFunction returns the innermost function or method of the table
// whose lines hold line.
func enclosingFunction(parsed *symbols.File, line int) (symbols.Symbol, bool) {
	var found symbols.Symbol
	ok := false
	for _, s := range parsed.Symbols {
		if s.Start > line {
			break // symbols are in order of their start
		}
		if (s.Kind == symbols.Function || s.Kind == symbols.Method) && s.End >= line {
			found, ok = s, true
		}
	}
	return found, ok
}

// enclosingJSON is the function or method a line is in.
type enclosingJSON struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Container string `json:"container,omitempty"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
}

// enclosingOf describes the function or method line is in (nil when it is
// in none, or the table does not hold the file as it is).
func enclosingOf(parsed *symbols.File, line int) *enclosingJSON {
	if parsed == nil {
		return nil
	}
	s, ok := enclosingFunction(parsed, line)
	if !ok {
		return nil
	}
	return &enclosingJSON{Name: s.Name, Kind: string(s.Kind), Container: s.Container, StartLine: s.Start, EndLine: s.End}
}

// cutText cuts s to at most max bytes, on a character boundary, marking
// the cut with "…".
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}
