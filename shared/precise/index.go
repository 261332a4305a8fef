package precise

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"unsafe"
)

// ReaderAtContext is a store's reader whose reads can follow a context
// (objects.RangeReader: each read is an S3 request). An Index reads
// through it with the query's context when its reader has it, and
// through io.ReaderAt otherwise (a local file).
type ReaderAtContext interface {
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
}

// Index is an open store. It holds the document table and the sparse
// symbol index in memory, reads the rest by range as queries need it,
// and is safe for concurrent use.
type Index struct {
	r      io.ReaderAt
	end    int64 // where the data ends (the trailer starts)
	meta   meta
	langs  []string
	docs   []docEntry // sorted by path
	sparse []sparseEntry
	memory int64 // Memory
}

// Open opens the store of size bytes r reads: it reads the header, the
// trailer and the tables (metadata, documents, sparse symbol index), and
// checks them. A store that is not one, or is damaged, is ErrCorrupt.
func Open(ctx context.Context, r io.ReaderAt, size int64) (*Index, error) {
	ix := &Index{r: r, end: size - trailerLen}
	t, err := readEnds(func(off int64, n int) ([]byte, error) { return ix.read(ctx, off, n) }, size)
	if err != nil {
		return nil, err
	}
	raw, err := ix.readBlock(ctx, t.meta)
	if err == nil {
		ix.meta, err = decodeMeta(raw)
	}
	if err == nil {
		raw, err = ix.readBlock(ctx, t.docs)
	}
	if err == nil {
		ix.langs, ix.docs, err = decodeDocs(raw, ix.end)
	}
	if err == nil {
		raw, err = ix.readBlock(ctx, t.sparse)
	}
	if err == nil {
		ix.sparse, err = decodeSparse(raw, ix.end)
	}
	if err != nil {
		return nil, err
	}
	ix.memory = ix.tablesMemory()
	return ix, nil
}

// Memory is about what the open index holds in memory, its tables as
// decoded: what a process that keeps it counts against its budget,
// besides what its reader caches.
func (ix *Index) Memory() int64 { return ix.memory }

// tablesMemory adds up the tables' strings, structs and slices.
func (ix *Index) tablesMemory() int64 {
	const (
		docSize    = int64(unsafe.Sizeof(docEntry{}))
		blockSize  = int64(unsafe.Sizeof(blockRef{}))
		sparseSize = int64(unsafe.Sizeof(sparseEntry{}))
	)
	n := int64(len(ix.meta.commit) + len(ix.meta.tenant) + len(ix.meta.indexer))
	for _, l := range ix.langs {
		n += int64(len(l)) + 16
	}
	for _, d := range ix.docs {
		n += docSize + int64(len(d.path)) + blockSize*int64(len(d.blocks))
	}
	for _, e := range ix.sparse {
		n += sparseSize + int64(len(e.first))
	}
	return n
}

// Commit is the commit the index was made of.
func (ix *Index) Commit() string { return ix.meta.commit }

// Tenant is the tenant whose repository the index is of ("" for one
// every tenant reads; see WriterOptions.Tenant).
func (ix *Index) Tenant() string { return ix.meta.tenant }

// Indexer names what made the index.
func (ix *Index) Indexer() string { return ix.meta.indexer }

// Stats is what the Writer counted (its Spills and Bytes aside).
func (ix *Index) Stats() Stats { return ix.meta.stats }

// read reads n bytes at off (n is bounded by the caller).
func (ix *Index) read(ctx context.Context, off int64, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := make([]byte, n)
	var err error
	if rc, ok := ix.r.(ReaderAtContext); ok {
		var got int
		got, err = rc.ReadAtContext(ctx, p, off)
		if got == n {
			err = nil
		} else if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	} else {
		err = readFull(ix.r, p, off)
	}
	if err != nil {
		return nil, fmt.Errorf("precise: reading the index at %d: %w", off, err)
	}
	return p, nil
}

// readBlock reads a block and unpacks it.
func (ix *Index) readBlock(ctx context.Context, b blockRef) ([]byte, error) {
	stored, err := ix.read(ctx, b.off, b.stored)
	if err != nil {
		return nil, err
	}
	return unpack(stored, b.raw)
}

// doc finds a document by path.
func (ix *Index) doc(path string) (int, bool) {
	i := sort.Search(len(ix.docs), func(i int) bool { return ix.docs[i].path >= path })
	return i, i < len(ix.docs) && ix.docs[i].path == path
}

// has reports whether the index has a document.
func (ix *Index) has(path string) bool {
	_, ok := ix.doc(path)
	return ok
}

// Document describes the document at path, if the index has it.
func (ix *Index) Document(path string) (DocInfo, bool) {
	i, ok := ix.doc(path)
	if !ok {
		return DocInfo{}, false
	}
	d := &ix.docs[i]
	return DocInfo{Path: d.path, Language: ix.langs[d.lang], Hash: d.hash, Stale: d.stale, Commit: ix.meta.commit}, true
}

// loadDoc reads document i's occurrences (and locals if withLocals).
func (ix *Index) loadDoc(ctx context.Context, i int, withLocals bool) (*docData, error) {
	var parts []*docData
	for _, b := range ix.docs[i].blocks {
		raw, err := ix.readBlock(ctx, b)
		if err != nil {
			return nil, err
		}
		d, err := decodeDoc(raw, withLocals)
		if err != nil {
			return nil, fmt.Errorf("%w (document %s)", err, ix.docs[i].path)
		}
		parts = append(parts, d)
	}
	switch len(parts) {
	case 0:
		return &docData{}, nil
	case 1:
		return parts[0], nil
	}
	return mergeDocs(parts), nil
}

// mergeDocs merges the blocks of a document given more than once.
func mergeDocs(parts []*docData) *docData {
	out := &docData{}
	syms := map[string]int{}
	for _, p := range parts {
		for _, o := range p.occs {
			s := p.syms[o.sym]
			if _, ok := syms[s]; !ok {
				syms[s] = len(out.syms)
				out.syms = append(out.syms, s)
			}
			o.sym = syms[s]
			out.occs = append(out.occs, o)
		}
		out.locals = append(out.locals, p.locals...)
	}
	sortDoc(out)
	return out
}

// occurrence is a document's occurrence as answers give it.
func (d *docData) occurrence(o docOcc, path string) Occurrence {
	sym := d.syms[o.sym]
	if isLocal(sym) {
		sym = LocalSymbol(sym, path)
	}
	return Occurrence{Path: path, Range: o.r, Symbol: sym, Roles: o.roles, Enclosing: o.encl}
}

// At returns the occurrences covering the position (line, col) of the
// document at path (1-based, col in bytes), innermost first: usually the
// one symbol there, sometimes two at one range (a Go embedded field is
// its type's reference and the field's definition). None when the index
// has no such document or nothing is there.
func (ix *Index) At(ctx context.Context, path string, line, col int) ([]Occurrence, error) {
	i, ok := ix.doc(path)
	if !ok {
		return nil, nil
	}
	d, err := ix.loadDoc(ctx, i, false)
	if err != nil {
		return nil, err
	}
	var out []Occurrence
	for _, o := range d.occs {
		if o.r.Line > line {
			break
		}
		if o.r.covers(line, col) {
			out = append(out, d.occurrence(o, path))
		}
	}
	slices.SortStableFunc(out, func(a, b Occurrence) int {
		return cmp.Or(compareRanges(Range{Line: b.Line, Column: b.Column}, Range{Line: a.Line, Column: a.Column}),
			compareRanges(Range{Line: a.EndLine, Column: a.EndColumn}, Range{Line: b.EndLine, Column: b.EndColumn}))
	})
	return out, nil
}

// Occurrences returns the occurrences of the document at path that start
// on lines fromLine to toLine, in position order (what a function's
// lines use and call, for outgoing calls).
func (ix *Index) Occurrences(ctx context.Context, path string, fromLine, toLine int) ([]Occurrence, error) {
	i, ok := ix.doc(path)
	if !ok {
		return nil, nil
	}
	d, err := ix.loadDoc(ctx, i, false)
	if err != nil {
		return nil, err
	}
	start := sort.Search(len(d.occs), func(i int) bool { return d.occs[i].r.Line >= fromLine })
	var out []Occurrence
	for _, o := range d.occs[start:] {
		if o.r.Line > toLine {
			break
		}
		out = append(out, d.occurrence(o, path))
	}
	return out, nil
}

// lookup finds a global symbol's entry.
func (ix *Index) lookup(ctx context.Context, sym string) (*entry, bool, error) {
	i := sort.Search(len(ix.sparse), func(i int) bool { return ix.sparse[i].first > sym }) - 1
	if i < 0 {
		return nil, false, nil
	}
	raw, err := ix.readBlock(ctx, ix.sparse[i].block)
	if err != nil {
		return nil, false, err
	}
	d := newDec(raw)
	prev := ""
	for n := 0; len(d.b) > 0 && d.err == nil; n++ {
		s := d.prefixed(prev)
		body := d.bytes(d.int(len(d.b)))
		switch {
		case d.err != nil:
		case n == 0 && s != ix.sparse[i].first || n > 0 && s <= prev:
			d.fail("the symbols of a block are out of order")
		case s == sym:
			e, err := decodeEntry(s, body, len(ix.docs), ix.end)
			return e, err == nil, err
		case s > sym:
			return nil, false, nil
		}
		prev = s
	}
	return nil, false, d.err
}

// path is the path of the document of rank r (-1: none).
func (ix *Index) path(r int) string {
	if r < 0 {
		return ""
	}
	return ix.docs[r].path
}

// hiddenIn is what a Set says of an index's documents: those a later
// index of the repository replaces. nil hides none.
type hiddenIn func(path string) bool

func (h hiddenIn) hides(path string) bool { return h != nil && path != "" && h(path) }

// shown reports whether h leaves the document of rank r (-1: the
// external symbols, never hidden) in the answers.
func (ix *Index) shown(h hiddenIn, r int) bool { return !h.hides(ix.path(r)) }
