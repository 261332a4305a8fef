package navigate

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type definitionInput struct {
	positionInput
	Limit schema.Int `json:"limit"`
}

type definitionOutput struct {
	Name   string `json:"name"`
	Symbol string `json:"symbol,omitempty"`
	precisionJSON
	Definitions []locationJSON `json:"definitions"`
	Total       int            `json:"total"`
	Message     string         `json:"message,omitempty"`
}

// findDefinition serves find_definition: where what is at a position (or
// a symbol) is defined, with its signature and doc; by search, the
// definitions of its name the symbol table finds.
func (s service) findDefinition(ctx context.Context, call toolkit.Call, in definitionInput) (toolkit.Result, error) {
	l, err := s.lens(ctx, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := l.resolve(ctx, in.positionInput)
	if err != nil {
		return toolkit.Result{}, err
	}
	out := definitionOutput{Name: t.name, Symbol: t.symbol, precisionJSON: precisionOf(t), Definitions: []locationJSON{}}
	if t.symbol == "" {
		err = out.searchDefinitions(ctx, l.table, int(in.Limit))
	} else {
		err = out.preciseDefinitions(ctx, l, t, int(in.Limit))
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	out.Message = definitionMessage(out)
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// preciseDefinitions puts into o the definitions of t's symbols (an
// embedded field is its own symbol and its type's), up to limit.
func (o *definitionOutput) preciseDefinitions(ctx context.Context, l *lens, t target, limit int) error {
	for _, sym := range append([]string{t.symbol}, t.also...) {
		defs, all, err := l.describe(ctx, sym, true, limit-len(o.Definitions))
		if err != nil {
			return err
		}
		o.Total += all
		if room := limit - len(o.Definitions); len(defs) > room {
			defs = defs[:room]
		}
		o.Definitions = append(o.Definitions, defs...)
	}
	return nil
}

// searchDefinitions puts into o the symbols named o.Name (exactly) the
// symbol table finds, up to limit.
func (o *definitionOutput) searchDefinitions(ctx context.Context, st *symbols.State, limit int) error {
	hits, err := st.Find(ctx, symbols.Query{Name: o.Name, Match: symbols.Exact, CaseSensitive: true})
	if err != nil {
		return fmt.Errorf("look up %q: %w", o.Name, err)
	}
	o.Total = len(hits)
	held := map[*symbols.File]*symbols.File{}
	for _, h := range hits[:min(limit, len(hits))] {
		f, ok := held[h.File]
		if !ok {
			f = h.File.WithText()
			held[h.File] = f
		}
		line, col := nameLineColumn(f.Text(), h.Symbol)
		o.Definitions = append(o.Definitions, locationJSON{Name: h.Symbol.Name, Kind: string(h.Symbol.Kind), Path: f.Path,
			Line: line, Column: col, StartLine: h.Symbol.Start, EndLine: h.Symbol.End, Container: h.Symbol.Container,
			Signature: f.Signature(h.Symbol), Doc: f.Doc(h.Symbol)})
	}
	return nil
}

// plural counts n things: "1 function", "2 functions".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// definitionMessage says what the answer holds.
func definitionMessage(o definitionOutput) string {
	var b strings.Builder
	switch {
	case o.Precision == searchPrecision && o.Total == 0:
		fmt.Fprintf(&b, "No precise answer (%s), and the symbol table finds no definition named %s", o.Reason, o.Name)
	case o.Precision == searchPrecision:
		fmt.Fprintf(&b, "No precise answer (%s): %s named %s, found by name (any may be another symbol of that name)", o.Reason, plural(o.Total, "definition"), o.Name)
	case len(o.Definitions) == 1 && o.Definitions[0].Path == "":
		fmt.Fprintf(&b, "%s is defined outside the indexed repositories: its signature and doc, without a place", o.Name)
	case len(o.Definitions) == 1:
		d := o.Definitions[0]
		fmt.Fprintf(&b, "%s is defined at %s:%d", o.Name, d.Path, d.Line)
	default:
		fmt.Fprintf(&b, "%s of %s", plural(o.Total, "definition"), o.Name)
	}
	if len(o.Definitions) < o.Total {
		fmt.Fprintf(&b, "; showing %d: raise limit, or narrow with find_symbols (path, kinds)", len(o.Definitions))
	}
	for _, d := range o.Definitions {
		if d.Precision == searchPrecision {
			fmt.Fprintf(&b, "; %s changed since it was indexed: found there by name", d.Path)
			break
		}
	}
	return b.String()
}
