package precise

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultMemoryBytes is a Writer's budget for gathering symbols when its
// options give none.
const DefaultMemoryBytes = 64 << 20

// WriterOptions says what a store is of, and how a Writer may work.
type WriterOptions struct {
	// Commit is the commit the index was made of.
	Commit string
	// Tenant is the tenant whose repository it indexes, or "" for a
	// repository every tenant of the deployment reads (the local server's,
	// the deployment's default one). A Set refuses an index of another
	// tenant.
	Tenant string
	// Indexer names what made the index ("scip-go 0.1.26").
	Indexer string
	// TempDir is where the symbols gathered beyond MemoryBytes are spilled
	// ("" is the system's temporary directory).
	TempDir string
	// MemoryBytes bounds what the Writer gathers in memory before it
	// spills (0 is DefaultMemoryBytes). A document's own occurrences are
	// held while it is added.
	MemoryBytes int64
}

// Document is a document given to a Writer.
type Document struct {
	Path     string // relative, slash-separated, clean
	Language string
	Hash     [32]byte // see DocInfo.Hash
	Stale    bool     // see DocInfo.Stale
	// Occurrences have 1-based lines and byte columns; a local symbol is
	// SCIP's "local N", as the indexer wrote it. Those without a symbol or
	// with a range that is not one are dropped (Stats.Dropped).
	Occurrences []Occurrence
	// Symbols is what the document says of the symbols it defines (their
	// Definitions are not read: they come from Occurrences).
	Symbols []SymbolInfo
}

// Stats counts what a Writer wrote.
type Stats struct {
	Documents   int
	Occurrences int // kept in documents
	References  int // occurrences of global symbols, in the symbol table
	Symbols     int // global symbols in the symbol table
	External    int // symbols from the external symbols
	Dropped     int // occurrences without a symbol or a valid range
	Spills      int // runs spilled to TempDir
	Bytes       int64
}

// counts are the counts the store keeps (Spills and Bytes are the
// Writer's: a store is the same whatever its budget).
func (s *Stats) counts() []*int {
	return []*int{&s.Documents, &s.Occurrences, &s.References, &s.Symbols, &s.External, &s.Dropped}
}

// Writer writes a store: documents as they are added, then, on Close,
// the symbol table, the document table and the trailer. It holds in
// memory the document table and at most MemoryBytes of symbols (the
// process, with the garbage collector's slack and the document being
// added, about three times that: 256 MB for five copies of the standard
// library's scip-go index, 457 MB of SCIP). A Writer is used by one
// goroutine; the first failure to write or spill ends it.
type Writer struct {
	o      WriterOptions
	out    *output
	docs   []*docEntry // in the order they came
	byPath map[string]uint32
	langs  map[string]int
	sorter *sorter
	stats  Stats
	done   bool
	err    error // the first failure to write or spill: the store is lost
}

// NewWriter starts a store on w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	x := &Writer{o: o, out: &output{w: bufio.NewWriterSize(w, 256<<10)}, byPath: map[string]uint32{}, langs: map[string]int{}}
	x.sorter = newSorter(o.TempDir, o.MemoryBytes, func(doc uint32) string { return x.docs[doc].path })
	x.out.write(header())
	return x
}

// ValidPath reports whether p may name a document: relative,
// slash-separated, clean, valid UTF-8, without control characters or
// backslashes.
func ValidPath(p string) bool {
	return p != "" && len(p) <= 4096 && utf8.ValidString(p) && path.Clean(p) == p && !path.IsAbs(p) &&
		p != ".." && !strings.HasPrefix(p, "../") && !strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == '\\' || r == 0x7f })
}

// AddDocument writes d's occurrences and gathers what it says of global
// symbols. A document added twice is merged (SCIP allows it).
func (x *Writer) AddDocument(ctx context.Context, d Document) error {
	if err := x.usable(ctx); err != nil {
		return err
	}
	if !ValidPath(d.Path) {
		return fmt.Errorf("precise: document path %q is not a clean relative path", d.Path)
	}
	data, globals := x.collect(d)
	raw := encodeDoc(data)
	if len(raw) > maxBlock {
		return fmt.Errorf("precise: document %s has too many occurrences (%d bytes stored, over %d)", d.Path, len(raw), maxBlock)
	}
	num, entry := x.entry(d)
	entry.blocks = append(entry.blocks, x.out.writeBlock(raw))
	x.stats.Occurrences += len(data.occs)
	for _, o := range globals {
		x.fail(x.sorter.add(o.Symbol, record{kind: recRef, doc: num, roles: o.Roles, r: toSpan(o.Range), encl: toSpan(o.Enclosing)}))
	}
	for i := range d.Symbols {
		if s := &d.Symbols[i]; !isLocal(s.Symbol) && s.Symbol != "" {
			x.addInfo(s, num)
		}
	}
	x.fail(x.written())
	return x.err
}

// AddExternalSymbol gathers what the index says of a symbol defined
// elsewhere (hover for a symbol of another package or repository).
func (x *Writer) AddExternalSymbol(ctx context.Context, s SymbolInfo) error {
	if err := x.usable(ctx); err != nil {
		return err
	}
	if s.Symbol == "" || isLocal(s.Symbol) {
		return nil
	}
	x.stats.External++
	x.addInfo(&s, external)
	return x.err
}

func (x *Writer) usable(ctx context.Context) error {
	if x.done {
		return errors.New("precise: the writer is closed")
	}
	if x.err != nil {
		return x.err
	}
	return ctx.Err()
}

// fail keeps the first failure to write or spill: nothing can be added
// after it.
func (x *Writer) fail(err error) {
	if x.err == nil && err != nil {
		x.err = err
	}
}

// written is the failure to write the store, if any.
func (x *Writer) written() error {
	if x.out.err != nil {
		return fmt.Errorf("precise: writing the store: %w", x.out.err)
	}
	return nil
}

// entry returns the number and entry of d's path, new or (for a document
// given again) the one it had.
func (x *Writer) entry(d Document) (uint32, *docEntry) {
	if num, ok := x.byPath[d.Path]; ok {
		e := x.docs[num]
		e.stale = e.stale || d.Stale
		return num, e
	}
	lang, ok := x.langs[d.Language]
	if !ok {
		lang = len(x.langs)
		x.langs[d.Language] = lang
	}
	num := uint32(len(x.docs))
	x.byPath[d.Path] = num
	e := &docEntry{path: d.Path, lang: lang, hash: d.Hash, stale: d.Stale}
	x.docs = append(x.docs, e)
	x.stats.Documents++
	return num, e
}

// collect makes d's block (its valid occurrences sorted, once each; its
// symbols; its locals) and returns the occurrences of global symbols.
func (x *Writer) collect(d Document) (*docData, []Occurrence) {
	data := &docData{}
	syms := map[string]int{}
	var globals []Occurrence
	for _, o := range d.Occurrences {
		if o.Symbol == "" || !o.Range.valid() || o.Enclosing != (Range{}) && !o.Enclosing.valid() {
			x.stats.Dropped++
			continue
		}
		if _, ok := syms[o.Symbol]; !ok {
			syms[o.Symbol] = len(data.syms)
			data.syms = append(data.syms, o.Symbol)
		}
		data.occs = append(data.occs, docOcc{r: o.Range, sym: syms[o.Symbol], roles: o.Roles, encl: o.Enclosing})
		if !isLocal(o.Symbol) {
			globals = append(globals, o)
		}
	}
	for _, s := range d.Symbols {
		if isLocal(s.Symbol) {
			if _, ok := syms[s.Symbol]; !ok {
				syms[s.Symbol] = len(data.syms)
				data.syms = append(data.syms, s.Symbol)
			}
			data.locals = append(data.locals, s)
		}
	}
	sortDoc(data)
	return data, globals
}

// sortDoc sorts a document's symbols and occurrences and drops repeats.
func sortDoc(d *docData) {
	old := d.syms
	order := sortedBy(len(old), func(i int) string { return old[i] })
	d.syms = make([]string, len(old))
	renum := make([]int, len(old))
	for i, n := range order {
		d.syms[i], renum[n] = old[n], i
	}
	for i := range d.occs {
		d.occs[i].sym = renum[d.occs[i].sym]
	}
	slices.SortFunc(d.occs, compareDocOccs(d.syms))
	d.occs = slices.CompactFunc(d.occs, func(a, b docOcc) bool { return a == b })
	slices.SortFunc(d.locals, func(a, b SymbolInfo) int { return cmp.Compare(a.Symbol, b.Symbol) })
	d.locals = slices.CompactFunc(d.locals, func(a, b SymbolInfo) bool { return a.Symbol == b.Symbol })
}

// addInfo gathers what a document (or the external symbols) says of a
// global symbol, and each relationship as a fact of the symbol it points
// at (which is how a type's implementations are found).
func (x *Writer) addInfo(s *SymbolInfo, doc uint32) {
	var e enc
	e.info(s)
	e.rels(s.Relationships)
	x.fail(x.sorter.add(s.Symbol, record{kind: recInfo, doc: doc, data: string(e.b)}))
	for _, r := range s.Relationships {
		if r.Symbol == "" || isLocal(r.Symbol) {
			continue
		}
		var e enc
		e.str(s.Symbol)
		e.uint(r.flags())
		x.fail(x.sorter.add(r.Symbol, record{kind: recImpl, doc: doc, data: string(e.b)}))
	}
}

// Close writes the symbol table, the document table and the trailer,
// and returns what was written. The Writer cannot be used after; the
// io.Writer it was given is the caller's to close.
func (x *Writer) Close(ctx context.Context) (Stats, error) {
	if err := x.usable(ctx); err != nil {
		return x.stats, err
	}
	x.done = true
	defer x.sorter.close()
	sorted, rank := x.ranks()
	m, err := x.sorter.merge(rank)
	if err != nil {
		return x.stats, err
	}
	t := &tableWriter{out: x.out, rank: rank}
	if err := t.writeAll(ctx, m); err != nil {
		return x.stats, err
	}
	x.stats.Symbols, x.stats.References, x.stats.Spills = t.symbols, t.refs, x.sorter.spills
	langs := make([]string, len(x.langs))
	for l, i := range x.langs {
		langs[i] = l
	}
	var tr trailer
	tr.docs = x.out.writeBlock(encodeDocs(langs, sorted))
	tr.sparse = x.out.writeBlock(encodeSparse(t.sparse))
	m2 := meta{commit: x.o.Commit, tenant: x.o.Tenant, indexer: x.o.Indexer, stats: x.stats}
	tr.meta = x.out.writeBlock(m2.encode())
	x.out.write(tr.encode())
	if x.out.err == nil {
		x.out.err = x.out.w.Flush()
	}
	x.stats.Bytes = x.out.n
	return x.stats, x.written()
}

// ranks sorts the documents by path and gives each document number's
// place among them (the external symbols' last).
func (x *Writer) ranks() ([]*docEntry, func(uint32) uint32) {
	sorted := slices.Clone(x.docs)
	slices.SortFunc(sorted, func(a, b *docEntry) int { return strings.Compare(a.path, b.path) })
	place := make(map[*docEntry]uint32, len(sorted))
	for i, d := range sorted {
		place[d] = uint32(i)
	}
	byNum := make([]uint32, len(x.docs))
	for n, d := range x.docs {
		byNum[n] = place[d]
	}
	return sorted, func(doc uint32) uint32 {
		if doc == external {
			return external
		}
		return byNum[doc]
	}
}
