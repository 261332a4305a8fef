package precise

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// The symbol table is blocks of entries sorted by symbol, each block
// found through the sparse index by its first symbol. An entry:
//
//	symbol:        front-coded against the entry before it in the block
//	length:        of the rest, so a lookup skips entries it does not want
//	flags:         1 information follows, 2 it is the external symbols'
//	information:   its document (rank+1; 0 external), kind, display name,
//	               signature, doc
//	relationships: count; each: symbol, flags, document (rank+1; 0 external)
//	definitions:   count (at most maxDefinitions); each: document rank, enc.occ
//	side data:     offset (0: none), then the lengths of its three parts
//
// A symbol's side data, written just before the block of its entry:
//
//	implementations: each: a symbol with a relationship to this one, its
//	                 flags, document (rank+1; 0 external)
//	groups:          each document's occurrences, enc.occ after the one before
//	directory:       count; each: document rank (as a difference from the
//	                 one before), the group's length in bytes, its count

// maxDefinitions bounds the definitions an entry holds (a symbol defined
// in several copies of a package); References has them all.
const maxDefinitions = 64

// ref is an occurrence of a global symbol in the symbol table.
type ref struct {
	doc   int // rank
	r     Range
	roles Roles
	encl  Range
}

// sourcedRel is a relationship and the document that says it (-1: the
// external symbols).
type sourcedRel struct {
	Relationship
	doc int
}

// entry is a decoded symbol entry.
type entry struct {
	info    SymbolInfo // Symbol always; the rest when hasInfo
	hasInfo bool
	infoDoc int
	rels    []sourcedRel
	defs    []ref
	side    int64
	implLen int
	groups  int64
	dirLen  int
}

// tableWriter writes the symbol table from the merged records.
type tableWriter struct {
	out     *output
	rank    func(uint32) uint32
	block   enc
	prev    string // the symbol before, in the block
	first   string
	sparse  []sparseEntry
	cur     *symbolBuild
	scratch enc
	symbols int
	refs    int
}

// symbolBuild is the symbol being written.
type symbolBuild struct {
	sym     string
	info    *SymbolInfo
	infoDoc int
	rels    []sourcedRel
	side    int64 // 0 until side data is written
	implLen int64
	groups  int64 // where its groups start; 0 until one is
	dir     enc
	ndir    int
	dirRank int   // the rank of the last group in dir
	group   int   // the current group's document rank
	start   int64 // where the current group starts
	count   int   // its occurrences
	last    Range // its last range
	defs    []ref
	refs    int
}

// writeAll writes every symbol of m.
func (t *tableWriter) writeAll(ctx context.Context, m *merger) error {
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		it, ok, err := m.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if t.cur == nil || t.cur.sym != it.sym {
			t.finishSymbol()
			t.cur = &symbolBuild{sym: it.sym, group: -1}
		}
		t.add(it)
	}
	t.finishSymbol()
	t.flushBlock()
	return nil
}

// docRank is a record's document as an entry gives it: its rank, or -1
// for the external symbols.
func (t *tableWriter) docRank(doc uint32) int {
	if doc == external {
		return -1
	}
	return int(t.rank(doc))
}

func (t *tableWriter) add(it *item) {
	s, r := t.cur, &it.rec
	doc := t.docRank(r.doc)
	switch r.kind {
	case recInfo:
		d := newDec([]byte(r.data))
		var info SymbolInfo
		d.info(&info)
		for _, rel := range d.rels() {
			s.rels = append(s.rels, sourcedRel{rel, doc})
		}
		empty := func(i *SymbolInfo) bool { return i.Signature == "" && i.Doc == "" }
		if s.info == nil || empty(s.info) && !empty(&info) {
			info.External = doc < 0
			s.info, s.infoDoc = &info, doc
		}
	case recImpl:
		t.startSide()
		e := &t.scratch
		e.b = append(e.b[:0], r.data...)
		e.int(doc + 1)
		if s.implLen+int64(len(e.b)) <= maxBlock {
			t.out.write(e.b)
			s.implLen += int64(len(e.b))
		}
	case recRef:
		t.addRef(ref{doc: doc, r: r.r.rng(), roles: r.roles, encl: r.encl.rng()})
	}
}

func (t *tableWriter) startSide() {
	if t.cur.side == 0 {
		t.cur.side = t.out.n
	}
}

// addRef writes an occurrence in its document's group.
func (t *tableWriter) addRef(x ref) {
	s := t.cur
	t.startSide()
	if s.groups == 0 {
		s.groups = t.out.n
	}
	if x.doc != s.group {
		t.closeGroup()
		s.group, s.start, s.count, s.last = x.doc, t.out.n, 0, Range{}
	}
	e := &t.scratch
	e.b = e.b[:0]
	e.occ(x.r, x.roles, x.encl, s.last)
	t.out.write(e.b)
	s.last = x.r
	s.count++
	s.refs++
	if x.roles&Definition != 0 && len(s.defs) < maxDefinitions {
		s.defs = append(s.defs, x)
	}
}

// closeGroup adds the current group, if any, to the directory.
func (t *tableWriter) closeGroup() {
	s := t.cur
	if s.count == 0 {
		return
	}
	s.dir.int(s.group - s.dirRank)
	s.dirRank = s.group
	s.dir.uint(uint64(t.out.n - s.start))
	s.dir.int(s.count)
	s.ndir++
	s.count = 0
}

// finishSymbol writes the current symbol's directory and its entry.
func (t *tableWriter) finishSymbol() {
	s := t.cur
	if s == nil {
		return
	}
	t.closeGroup()
	var groupsLen, dirLen int64
	if s.ndir > 0 {
		groupsLen = t.out.n - s.groups
		var e enc
		e.int(s.ndir)
		e.b = append(e.b, s.dir.b...)
		t.out.write(e.b)
		dirLen = int64(len(e.b))
	}
	body := &t.scratch
	body.b = body.b[:0]
	s.encode(body, groupsLen, dirLen)
	if len(t.block.b) == 0 {
		t.first, t.prev = s.sym, ""
	}
	t.block.prefixed(t.prev, s.sym)
	t.block.int(len(body.b))
	t.block.b = append(t.block.b, body.b...)
	t.prev = s.sym
	t.symbols++
	t.refs += s.refs
	t.cur = nil
	if len(t.block.b) >= symbolBlock {
		t.flushBlock()
	}
}

// encode writes the entry's body (see the layout above).
func (s *symbolBuild) encode(e *enc, groupsLen, dirLen int64) {
	if s.info == nil {
		e.int(0)
	} else {
		e.int(1 | 2*boolInt(s.info.External))
		e.int(s.infoDoc + 1)
		e.info(s.info)
	}
	slices.SortFunc(s.rels, func(a, b sourcedRel) int {
		return cmp.Or(strings.Compare(a.Symbol, b.Symbol), cmp.Compare(a.flags(), b.flags()), cmp.Compare(a.doc, b.doc))
	})
	s.rels = slices.Compact(s.rels)
	e.int(len(s.rels))
	for _, r := range s.rels {
		e.str(r.Symbol)
		e.uint(r.flags())
		e.int(r.doc + 1)
	}
	e.int(len(s.defs))
	for _, d := range s.defs {
		e.int(d.doc)
		e.occ(d.r, d.roles, d.encl, Range{})
	}
	e.uint(uint64(s.side))
	if s.side != 0 {
		e.uint(uint64(s.implLen))
		e.uint(uint64(groupsLen))
		e.uint(uint64(dirLen))
	}
}

// flushBlock stores the block of entries and indexes it.
func (t *tableWriter) flushBlock() {
	if len(t.block.b) == 0 {
		return
	}
	t.sparse = append(t.sparse, sparseEntry{first: t.first, block: t.out.writeBlock(t.block.b)})
	t.block.b = t.block.b[:0]
}

// decodeEntry reads an entry's body, for a store of ndocs documents whose
// data ends at end.
func decodeEntry(sym string, body []byte, ndocs int, end int64) (*entry, error) {
	d := newDec(body)
	x := &entry{info: SymbolInfo{Symbol: sym}, infoDoc: -1}
	docRef := func() int { return d.int(ndocs) - 1 } // rank+1, 0 for external
	flags := d.int(3)
	if flags&1 != 0 {
		x.hasInfo, x.info.External = true, flags&2 != 0
		x.infoDoc = docRef()
		d.info(&x.info)
	}
	x.rels = make([]sourcedRel, d.count(3))
	for i := range x.rels {
		sym := d.str()
		x.rels[i] = sourcedRel{relationship(sym, d.uint()), docRef()}
	}
	x.defs = make([]ref, d.count(6))
	for i := range x.defs {
		x.defs[i].doc = d.int(max(ndocs-1, 0))
		x.defs[i].r, x.defs[i].roles, x.defs[i].encl = d.occ(Range{})
	}
	x.side = int64(d.int(int(end)))
	if x.side != 0 {
		x.implLen = d.int(maxBlock)
		x.groups = int64(d.int(int(end)))
		x.dirLen = d.int(maxBlock)
		if x.side < headerLen || x.side+int64(x.implLen)+x.groups+int64(x.dirLen) > end {
			d.fail("the side data of %s is outside the data", sym)
		}
	}
	if d.err == nil && len(x.defs) > 0 && ndocs == 0 {
		d.fail("definitions without documents")
	}
	return x, d.err
}
