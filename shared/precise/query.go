package precise

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
)

// MaxPage bounds a page of references: a limit of 0, or over MaxPage, is
// MaxPage.
const MaxPage = 1000

// readChunk bounds one read of a symbol's reference groups.
const readChunk = 256 << 10

func pageLimit(limit int) int {
	if limit <= 0 || limit > MaxPage {
		return MaxPage
	}
	return limit
}

// Symbol returns what the index knows of symbol (a SCIP symbol, or a
// local one as LocalSymbol gives it): its information, from the first
// document (by path) that gives it, else from the external symbols, and
// its definitions (at most maxDefinitions, 64; References has them all).
func (ix *Index) Symbol(ctx context.Context, symbol string) (SymbolInfo, bool, error) {
	if isLocal(symbol) {
		return ix.localSymbol(ctx, symbol)
	}
	e, ok, err := ix.lookup(ctx, symbol)
	if !ok || err != nil {
		return SymbolInfo{}, false, err
	}
	info, _ := ix.symbolInfo(e, nil)
	return info, true, nil
}

// symbolInfo is an entry as Symbol answers it, without what h hides; the
// bool says whether its information was kept.
func (ix *Index) symbolInfo(e *entry, h hiddenIn) (SymbolInfo, bool) {
	info := e.info
	kept := e.hasInfo && ix.shown(h, e.infoDoc)
	if !kept {
		info = SymbolInfo{Symbol: e.info.Symbol}
	}
	info.Definitions = nil
	for _, d := range e.defs {
		if ix.shown(h, d.doc) {
			info.Definitions = append(info.Definitions, ix.refOccurrence(e.info.Symbol, d))
		}
	}
	info.Relationships = nil
	for _, r := range e.rels {
		if ix.shown(h, r.doc) && !slices.Contains(info.Relationships, r.Relationship) {
			info.Relationships = append(info.Relationships, r.Relationship)
		}
	}
	return info, kept
}

func (ix *Index) refOccurrence(sym string, r ref) Occurrence {
	return Occurrence{Path: ix.path(r.doc), Range: r.r, Symbol: sym, Roles: r.roles, Enclosing: r.encl}
}

// localDoc reads the document a local symbol belongs to.
func (ix *Index) localDoc(ctx context.Context, symbol string, withLocals bool) (*docData, string, string, error) {
	local, path, ok := splitLocal(symbol)
	if !ok {
		return nil, "", "", nil
	}
	i, ok := ix.doc(path)
	if !ok {
		return nil, "", "", nil
	}
	d, err := ix.loadDoc(ctx, i, withLocals)
	return d, local, path, err
}

func (ix *Index) localSymbol(ctx context.Context, symbol string) (SymbolInfo, bool, error) {
	d, local, path, err := ix.localDoc(ctx, symbol, true)
	if d == nil || err != nil {
		return SymbolInfo{}, false, err
	}
	info := SymbolInfo{Symbol: symbol}
	found := false
	if i, ok := slices.BinarySearchFunc(d.locals, local, func(s SymbolInfo, l string) int { return strings.Compare(s.Symbol, l) }); ok {
		info, found = d.locals[i], true
		info.Symbol = symbol
	}
	for _, o := range d.occs {
		if d.syms[o.sym] == local {
			found = true
			if o.roles&Definition != 0 {
				info.Definitions = append(info.Definitions, d.occurrence(o, path))
			}
		}
	}
	return info, found, nil
}

// References returns a page of symbol's occurrences (definitions
// included; Roles tells them apart) in (path, line, column) order, the
// first limit of those after after (at most MaxPage), and whether more
// follow.
func (ix *Index) References(ctx context.Context, symbol string, after Location, limit int) ([]Occurrence, bool, error) {
	limit = pageLimit(limit)
	if isLocal(symbol) {
		return ix.localRefs(ctx, symbol, after, limit)
	}
	e, ok, err := ix.lookup(ctx, symbol)
	if !ok || err != nil {
		return nil, false, err
	}
	return ix.refs(ctx, e, after, limit, nil)
}

func (ix *Index) localRefs(ctx context.Context, symbol string, after Location, limit int) ([]Occurrence, bool, error) {
	d, local, path, err := ix.localDoc(ctx, symbol, false)
	if d == nil || err != nil {
		return nil, false, err
	}
	var out []Occurrence
	for _, o := range d.occs {
		if d.syms[o.sym] != local || !after.precedes(path, o.r) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, d.occurrence(o, path))
	}
	return out, false, nil
}

// group is a document's occurrences of a symbol, in its side data.
type group struct {
	doc       int   // rank
	off       int64 // from the start of the groups
	len       int
	count     int
	hiddenDoc bool
}

// directory reads an entry's groups.
func (ix *Index) directory(ctx context.Context, e *entry) ([]group, error) {
	raw, err := ix.read(ctx, e.side+int64(e.implLen)+e.groups, e.dirLen)
	if err != nil {
		return nil, err
	}
	d := newDec(raw)
	dir := make([]group, d.count(3))
	var off int64
	doc := 0
	for i := range dir {
		delta := d.int(len(ix.docs))
		if i > 0 && delta == 0 {
			d.fail("a symbol's documents are out of order")
		}
		doc += delta
		dir[i] = group{doc: doc, off: off, len: d.int(maxBlock), count: d.int(maxPos)}
		off += int64(dir[i].len)
		if d.err == nil && (doc >= len(ix.docs) || off > e.groups) {
			d.fail("a symbol's references are outside its data")
		}
	}
	return dir, d.err
}

// refs pages through an entry's occurrences, skipping documents h hides.
func (ix *Index) refs(ctx context.Context, e *entry, after Location, limit int, h hiddenIn) ([]Occurrence, bool, error) {
	if e.groups == 0 {
		return nil, false, nil
	}
	dir, err := ix.directory(ctx, e)
	if err != nil {
		return nil, false, err
	}
	first := sort.Search(len(dir), func(i int) bool { return ix.path(dir[i].doc) >= after.Path })
	var out []Occurrence
	for i := first; i < len(dir); {
		j, size, wanted := i, 0, 0
		for j < len(dir) && (j == i || size+dir[j].len <= readChunk) && wanted <= limit-len(out) {
			dir[j].hiddenDoc = h.hides(ix.path(dir[j].doc))
			if !dir[j].hiddenDoc {
				wanted += dir[j].count
			}
			size += dir[j].len
			j++
		}
		raw, err := ix.read(ctx, e.side+int64(e.implLen)+dir[i].off, size)
		if err != nil {
			return nil, false, err
		}
		var more bool
		out, more, err = ix.decodeGroups(raw, dir[i:j], e.info.Symbol, after, limit, out)
		if more || err != nil {
			return out, more, err
		}
		i = j
	}
	return out, false, nil
}

// decodeGroups adds to out the occurrences of groups (read together in
// raw) after after, up to limit; more says one was left.
func (ix *Index) decodeGroups(raw []byte, groups []group, sym string, after Location, limit int, out []Occurrence) ([]Occurrence, bool, error) {
	d := newDec(raw)
	for _, g := range groups {
		gd := newDec(d.bytes(g.len))
		path := ix.path(g.doc)
		var last Range
		for range g.count {
			var x ref
			x.r, x.roles, x.encl = gd.occ(last)
			last = x.r
			if gd.err != nil || g.hiddenDoc || !after.precedes(path, x.r) {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			x.doc = g.doc
			out = append(out, ix.refOccurrence(sym, x))
		}
		if err := cmp.Or(d.err, gd.err); err != nil {
			return out, false, err
		}
	}
	return out, false, nil
}

// Implementations returns, from the index's relationships, what
// implements symbol (the types that implement an interface, the methods
// that implement or override a method) and what symbol implements.
func (ix *Index) Implementations(ctx context.Context, symbol string) (implementedBy, implements []string, err error) {
	if isLocal(symbol) {
		info, _, err := ix.localSymbol(ctx, symbol)
		return nil, implemented(info.Relationships), err
	}
	e, ok, err := ix.lookup(ctx, symbol)
	if !ok || err != nil {
		return nil, nil, err
	}
	return ix.impls(ctx, e, nil)
}

// implemented is the symbols rels says are implemented, sorted, once.
func implemented(rels []Relationship) []string {
	var out []string
	for _, r := range rels {
		if r.IsImplementation {
			out = append(out, r.Symbol)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// impls answers Implementations for an entry, without what h hides.
func (ix *Index) impls(ctx context.Context, e *entry, h hiddenIn) (by, of []string, err error) {
	info, _ := ix.symbolInfo(e, h)
	of = implemented(info.Relationships)
	if e.implLen == 0 {
		return nil, of, nil
	}
	raw, err := ix.read(ctx, e.side, e.implLen)
	if err != nil {
		return nil, nil, err
	}
	d := newDec(raw)
	for len(d.b) > 0 && d.err == nil {
		sym := d.str()
		r := relationship(sym, d.uint())
		if doc := d.int(len(ix.docs)) - 1; r.IsImplementation && ix.shown(h, doc) {
			by = append(by, sym)
		}
	}
	slices.Sort(by)
	return slices.Compact(by), of, d.err
}
