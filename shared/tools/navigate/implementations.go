package navigate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type implsInput struct {
	positionInput
	Limit  schema.Int `json:"limit"`
	Cursor string     `json:"cursor"`
}

type implsOutput struct {
	Name   string `json:"name"`
	Symbol string `json:"symbol,omitempty"`
	precisionJSON
	// ImplementedBy are the types that implement an interface, or the
	// methods that implement (or override) a method; Implements the
	// interfaces a type implements, or the methods a method implements
	// (or overrides).
	ImplementedBy []locationJSON `json:"implementedBy"`
	Implements    []locationJSON `json:"implements"`
	Total         int            `json:"total"`
	NextCursor    *string        `json:"next_cursor"`
	Message       string         `json:"message,omitempty"`
}

// findImplementations serves find_implementations: what implements the
// symbol at a position (or a symbol) and what it implements, from the
// precise indexes' relationships, a page at a time (both lists together:
// implementedBy first).
func (s service) findImplementations(ctx context.Context, call toolkit.Call, in implsInput) (toolkit.Result, error) {
	l, err := s.lens(ctx, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := l.resolve(ctx, in.positionInput)
	if err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(FindImplementationsTool, call.Tenant, l.ref.Name, in)
	var start int
	if err := pages.Decode(in.Cursor, &start); err != nil {
		return toolkit.Result{}, err
	}
	if start > maxCount {
		return toolkit.Result{}, cursor.Refused()
	}
	out := implsOutput{Name: t.name, Symbol: t.symbol, precisionJSON: precisionOf(t), ImplementedBy: []locationJSON{}, Implements: []locationJSON{}}
	if t.symbol != "" {
		if err := out.page(ctx, l, t.symbol, start, int(in.Limit)); err != nil {
			return toolkit.Result{}, err
		}
		if end := start + int(in.Limit); end < out.Total {
			next := pages.Encode(end)
			out.NextCursor = &next
		}
	}
	out.Message = implsMessage(out)
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// page puts into o the symbols related to symbol from the start-th, up to
// limit of them, each at its (first) definition.
func (o *implsOutput) page(ctx context.Context, l *lens, symbol string, start, limit int) error {
	by, of, err := l.set.Implementations(ctx, symbol)
	if err != nil {
		return fmt.Errorf("precise implementations of %q: %w", symbol, err)
	}
	related := slices.Concat(by, of)
	o.Total = len(related)
	for i := start; i < min(start+limit, len(related)); i++ {
		places, _, err := l.describe(ctx, related[i], false, 1)
		if err != nil {
			return err
		}
		if i < len(by) {
			o.ImplementedBy = append(o.ImplementedBy, places[0])
		} else {
			o.Implements = append(o.Implements, places[0])
		}
	}
	return nil
}

// implsMessage says what the answer holds.
func implsMessage(o implsOutput) string {
	if o.Precision == searchPrecision {
		return fmt.Sprintf("No precise answer (%s): implementations are known only from a precise index; find_references by name finds the lines that mention %s", o.Reason, o.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s in all (implementedBy: what implements it; implements: what it implements)", o.Name, plural(o.Total, "related symbol"))
	if o.Total == 0 {
		fmt.Fprintf(&b, "; the index relates %s to no interface, type or method", o.Name)
	}
	if o.NextCursor != nil {
		fmt.Fprintf(&b, "; showing %d, pass next_cursor as cursor for the next page", len(o.ImplementedBy)+len(o.Implements))
	}
	return b.String()
}
