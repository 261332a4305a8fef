package precise

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// seedStore is a store of a few documents that use every part of the
// format: globals and locals, relationships both ways, definitions,
// enclosing ranges, a document given twice, external symbols.
func seedStore(t testing.TB) []byte {
	const (
		iface = "scip-go gomod m v1 `m/p`/I#"
		typ   = "scip-go gomod m v1 `m/p`/T#"
		fn    = "scip-go gomod m v1 `m/p`/F()."
		ext   = "scip-go gomod std go1 io/Reader#"
	)
	r := func(l, c, el, ec int) Range { return Range{l, c, el, ec} }
	docs := []Document{
		{Path: "p/a.go", Language: "go", Hash: [32]byte{1}, Occurrences: []Occurrence{
			{Range: r(3, 6, 3, 7), Symbol: iface, Roles: Definition},
			{Range: r(5, 6, 5, 7), Symbol: typ, Roles: Definition, Enclosing: r(5, 1, 9, 2)},
			{Range: r(7, 2, 7, 3), Symbol: "local 0", Roles: Definition},
			{Range: r(8, 9, 8, 10), Symbol: "local 0"},
			{Range: r(11, 6, 11, 7), Symbol: fn, Roles: Definition},
		}, Symbols: []SymbolInfo{
			{Symbol: iface, Kind: "Interface", Signature: "type I interface", Doc: "I is."},
			{Symbol: typ, Signature: "type T struct", Relationships: []Relationship{{Symbol: iface, IsImplementation: true}, {Symbol: ext, IsImplementation: true}}},
			{Symbol: "local 0", DisplayName: "x", Signature: "var x int"},
		}},
		{Path: "p/b.go", Language: "go", Stale: true, Occurrences: []Occurrence{
			{Range: r(2, 1, 2, 2), Symbol: fn, Roles: ReadAccess},
			{Range: r(3, 1, 4, 9), Symbol: typ},
			{Range: r(3, 4, 3, 5), Symbol: ext},
		}},
		{Path: "p/b.go", Occurrences: []Occurrence{{Range: r(2, 1, 2, 2), Symbol: fn, Roles: ReadAccess}, {Range: r(9, 1, 9, 2), Symbol: fn}}},
		{Path: "q/c.ts", Language: "typescript"},
	}
	var out bytes.Buffer
	w := NewWriter(&out, WriterOptions{Commit: "c", Tenant: "t", Indexer: "test", TempDir: t.TempDir()})
	ctx := context.Background()
	for _, d := range docs {
		if err := w.AddDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddExternalSymbol(ctx, SymbolInfo{Symbol: ext, Signature: "type Reader interface"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// seeds adds a store and damaged copies of it.
func seeds(f *testing.F, add func(store []byte)) {
	store := seedStore(f)
	add(store)
	add(store[:len(store)-1])
	add(store[:headerLen+trailerLen])
	add(nil)
	for _, at := range []int{headerLen + 3, len(store) / 2, len(store) - trailerLen - 5, len(store) - 30} {
		flipped := bytes.Clone(store)
		flipped[at] ^= 0x41
		add(flipped)
	}
}

// FuzzOpen opens any bytes without panicking or allocating what they
// claim; what opens answers every document and symbol block it has, or
// says it is corrupt.
func FuzzOpen(f *testing.F) {
	seeds(f, func(store []byte) { f.Add(store) })
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		ix, err := Open(ctx, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for i := range ix.docs[:min(len(ix.docs), 20)] {
			d, err := ix.loadDoc(ctx, i, true)
			if err != nil {
				checkCorrupt(t, err)
				continue
			}
			for _, o := range d.occs[:min(len(d.occs), 20)] {
				query(t, ix, d.occurrence(o, ix.docs[i].path).Symbol)
				if _, err := ix.At(ctx, ix.docs[i].path, o.r.Line, o.r.Column); err != nil {
					checkCorrupt(t, err)
				}
			}
		}
		for _, s := range ix.sparse[:min(len(ix.sparse), 20)] {
			query(t, ix, s.first)
		}
	})
}

// query asks everything of a symbol; a failure must be ErrCorrupt.
func query(t *testing.T, ix *Index, symbol string) {
	ctx := context.Background()
	_, _, err := ix.Symbol(ctx, symbol)
	checkCorrupt(t, err)
	refs, more, err := ix.References(ctx, symbol, Location{}, 2)
	checkCorrupt(t, err)
	if more && len(refs) > 0 {
		_, _, err = ix.References(ctx, symbol, refs[len(refs)-1].Location(), 2)
		checkCorrupt(t, err)
	}
	for _, r := range refs {
		if !r.Range.valid() {
			t.Errorf("an answer's range is not one: %v", r.Range)
		}
	}
	_, _, err = ix.Implementations(ctx, symbol)
	checkCorrupt(t, err)
}

func checkCorrupt(t *testing.T, err error) {
	if err != nil && !errors.Is(err, ErrCorrupt) {
		t.Errorf("a damaged store fails with %v, not ErrCorrupt", err)
	}
}

// FuzzQueries asks any question of any store, alone and in a Set.
func FuzzQueries(f *testing.F) {
	seeds(f, func(store []byte) {
		f.Add(store, "p/a.go", 5, 7, "scip-go gomod m v1 `m/p`/T#", 1)
		f.Add(store, "p/b.go", 3, 4, "local 0 p/a.go", 0)
	})
	f.Fuzz(func(t *testing.T, data []byte, path string, line, col int, symbol string, limit int) {
		ctx := context.Background()
		ix, err := Open(ctx, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		set, err := NewSet("t", Repository{Name: "r", Indexes: []*Index{ix, ix}})
		if err != nil {
			return
		}
		ix.Document(path)
		for _, q := range []interface {
			At(context.Context, string, int, int) ([]Occurrence, error)
			Occurrences(context.Context, string, int, int) ([]Occurrence, error)
			Symbol(context.Context, string) (SymbolInfo, bool, error)
			References(context.Context, string, Location, int) ([]Occurrence, bool, error)
			Implementations(context.Context, string) ([]string, []string, error)
		}{ix, set} {
			occs, err := q.At(ctx, path, line, col)
			checkCorrupt(t, err)
			more, err := q.Occurrences(ctx, path, line, line+col)
			checkCorrupt(t, err)
			for _, o := range append(occs, more...) {
				query(t, ix, o.Symbol)
			}
			_, _, err = q.Symbol(ctx, symbol)
			checkCorrupt(t, err)
			refs, _, err := q.References(ctx, symbol, Location{Path: path, Line: line, Column: col}, limit)
			checkCorrupt(t, err)
			if limit > 0 && len(refs) > min(limit, MaxPage) {
				t.Errorf("%d references, over the limit %d", len(refs), limit)
			}
			_, _, err = q.Implementations(ctx, symbol)
			checkCorrupt(t, err)
		}
	})
}

// FuzzDecoders gives the decoders of each part of the format any bytes
// (the stored blocks are checksummed by S2 and the trailer by CRC, so
// FuzzOpen rarely reaches them with bytes that decode).
func FuzzDecoders(f *testing.F) {
	store := seedStore(f)
	ix, err := Open(context.Background(), bytes.NewReader(store), int64(len(store)))
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range ix.docs {
		for _, b := range d.blocks {
			raw, _ := ix.readBlock(context.Background(), b)
			f.Add(raw)
		}
	}
	for _, s := range ix.sparse {
		raw, _ := ix.readBlock(context.Background(), s.block)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		end := int64(len(store) - trailerLen)
		for _, err := range []error{
			second(decodeDoc(raw, true)),
			second(decodeEntry("s", raw, len(ix.docs), end)),
			third(decodeDocs(raw, end)),
			second(decodeSparse(raw, end)),
			second(decodeMeta(raw)),
		} {
			checkCorrupt(t, err)
		}
		if e, err := decodeEntry("s", raw, len(ix.docs), end); err == nil {
			ix.refs(context.Background(), e, Location{}, 3, nil)
			ix.impls(context.Background(), e, nil)
		}
	})
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// TestFrontCodingClaims: a block whose front-coded strings claim far more
// than it holds (each most of a long one before it) is corrupt, refused
// before they are made: here 20,000 strings of 64 KiB, 1.3 GB, from 150 KB.
func TestFrontCodingClaims(t *testing.T) {
	var e enc
	e.int(20001)
	e.prefixed("", string(bytes.Repeat([]byte("s"), 64<<10)))
	for i := range 20000 { // each the one before but its last two bytes, growing
		e.int(64<<10 - 2)
		e.str(string([]byte{'t', byte(i >> 8), byte(i)}))
	}
	e.int(0) // occurrences
	e.int(0) // locals
	if _, err := decodeDoc(e.b, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("got %v, want ErrCorrupt", err)
	}
}
