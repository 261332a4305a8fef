package precise

import (
	"cmp"
	"slices"
)

// A document block holds one document's occurrences, sorted by position,
// and what the index knows of its local symbols:
//
//	symbols:     count, then each symbol front-coded (sorted, unique)
//	occurrences: count, then each as enc.occ after the one before, and the
//	             index of its symbol
//	locals:      count, then each: its symbol's index, its information
//	             (symbolInfo) and relationships (symbol, flags)

// docOcc is an occurrence in a decoded document block.
type docOcc struct {
	r     Range
	sym   int // index in docData.syms
	roles Roles
	encl  Range
}

func compareDocOccs(syms []string) func(a, b docOcc) int {
	return func(a, b docOcc) int {
		return cmp.Or(compareRanges(a.r, b.r), cmp.Compare(syms[a.sym], syms[b.sym]),
			cmp.Compare(a.roles, b.roles), compareRanges(a.encl, b.encl))
	}
}

// docData is a decoded document: its symbols, occurrences and locals.
type docData struct {
	syms   []string
	occs   []docOcc
	locals []SymbolInfo // with Symbol set; read only when asked for
}

// encodeDoc writes d's block; d.occs must be sorted and d.syms too.
func encodeDoc(d *docData) []byte {
	var e enc
	e.int(len(d.syms))
	prev := ""
	for _, s := range d.syms {
		e.prefixed(prev, s)
		prev = s
	}
	e.int(len(d.occs))
	var last Range
	for _, o := range d.occs {
		e.occ(o.r, o.roles, o.encl, last)
		e.int(o.sym)
		last = o.r
	}
	e.int(len(d.locals))
	for i := range d.locals {
		l := &d.locals[i]
		j, _ := slices.BinarySearch(d.syms, l.Symbol)
		e.int(j)
		e.info(l)
		e.rels(l.Relationships)
	}
	return e.b
}

// decodeDoc reads a document block; its locals only if withLocals.
func decodeDoc(raw []byte, withLocals bool) (*docData, error) {
	d := newDec(raw)
	out := &docData{syms: make([]string, d.count(2))}
	prev := ""
	for i := range out.syms {
		out.syms[i] = d.prefixed(prev)
		if d.err == nil && i > 0 && out.syms[i] <= prev {
			d.fail("a document's symbols are out of order")
		}
		prev = out.syms[i]
	}
	out.occs = make([]docOcc, d.count(6))
	var last Range
	for i := range out.occs {
		o := &out.occs[i]
		o.r, o.roles, o.encl = d.occ(last)
		o.sym = d.int(max(len(out.syms)-1, 0))
		last = o.r
	}
	if len(out.occs) > 0 && len(out.syms) == 0 {
		d.fail("occurrences without symbols")
	}
	if withLocals {
		out.locals = make([]SymbolInfo, d.count(6))
		for i := range out.locals {
			l := &out.locals[i]
			if j := d.int(len(out.syms)); j < len(out.syms) {
				l.Symbol = out.syms[j]
			}
			d.info(l)
			l.Relationships = d.rels()
		}
	}
	return out, d.err
}

// info writes what hover shows of a symbol.
func (e *enc) info(s *SymbolInfo) {
	e.str(s.Kind)
	e.str(s.DisplayName)
	e.str(s.Signature)
	e.str(s.Doc)
}

func (d *dec) info(s *SymbolInfo) {
	s.Kind = d.str()
	s.DisplayName = d.str()
	s.Signature = d.str()
	s.Doc = d.str()
}

func (e *enc) rels(rels []Relationship) {
	e.int(len(rels))
	for _, r := range rels {
		e.str(r.Symbol)
		e.uint(r.flags())
	}
}

func (d *dec) rels() []Relationship {
	rels := make([]Relationship, d.count(2))
	for i := range rels {
		sym := d.str()
		rels[i] = relationship(sym, d.uint())
	}
	return rels
}
