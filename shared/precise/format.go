package precise

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// The store's layout (see the package doc) and its bounds.
const (
	magic      = "TSPRECIS"
	version    = 1
	headerLen  = 16 // magic, version, zero
	trailerLen = 64 // three section pointers, version, checksum, magic
	// maxTable bounds a table's raw length (the documents, the sparse
	// symbol index, the metadata): 57k documents take about 4 MB.
	maxTable = 256 << 20
	// maxBlock bounds a block's raw length and any one read of a
	// symbol's references or implementations.
	maxBlock = 64 << 20
	// symbolBlock is the raw length a block of symbols is cut at.
	symbolBlock = 32 << 10
)

// blockRef locates a stored block: where, how long stored, how long raw.
type blockRef struct {
	off         int64
	stored, raw int
}

func (e *enc) block(b blockRef) {
	e.uint(uint64(b.off))
	e.int(b.stored)
	e.int(b.raw)
}

// block reads a blockRef and checks it lies in the data (before end)
// and within the bound of its kind.
func (d *dec) block(end int64, bound int) blockRef {
	b := blockRef{off: int64(d.int(int(end))), stored: d.int(bound), raw: d.int(bound)}
	if d.err == nil && (b.off < headerLen || b.off+int64(b.stored) > end) {
		d.fail("a block at %d+%d is outside the data", b.off, b.stored)
	}
	return b
}

// output writes the store sequentially, counting where it is.
type output struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (o *output) write(b []byte) {
	if o.err != nil {
		return
	}
	_, o.err = o.w.Write(b)
	o.n += int64(len(b))
}

// writeBlock stores raw (packed) and says where.
func (o *output) writeBlock(raw []byte) blockRef {
	stored := pack(raw)
	b := blockRef{off: o.n, stored: len(stored), raw: len(raw)}
	o.write(stored)
	return b
}

func header() []byte {
	h := make([]byte, headerLen)
	copy(h, magic)
	binary.LittleEndian.PutUint32(h[8:], version)
	return h
}

// trailer is the end of the store: where its three tables are.
type trailer struct {
	meta, docs, sparse blockRef
}

func (t trailer) encode() []byte {
	b := make([]byte, 0, trailerLen)
	for _, s := range []blockRef{t.meta, t.docs, t.sparse} {
		b = binary.LittleEndian.AppendUint64(b, uint64(s.off))
		b = binary.LittleEndian.AppendUint32(b, uint32(s.stored))
		b = binary.LittleEndian.AppendUint32(b, uint32(s.raw))
	}
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	return append(b, magic...)
}

// readEnds reads and checks the header and the trailer of a store of
// size bytes.
func readEnds(r func(off int64, n int) ([]byte, error), size int64) (trailer, error) {
	if size < headerLen+trailerLen {
		return trailer{}, corrupt("%d bytes is too short", size)
	}
	h, err := r(0, headerLen)
	if err != nil {
		return trailer{}, err
	}
	if string(h[:8]) != magic || binary.LittleEndian.Uint32(h[8:]) != version {
		return trailer{}, corrupt("not a precise index of version %d", version)
	}
	b, err := r(size-trailerLen, trailerLen)
	if err != nil {
		return trailer{}, err
	}
	if string(b[56:]) != magic || binary.LittleEndian.Uint32(b[48:]) != version ||
		binary.LittleEndian.Uint32(b[52:]) != crc32.ChecksumIEEE(b[:52]) {
		return trailer{}, corrupt("the trailer does not check")
	}
	var t trailer
	end := size - trailerLen
	for i, s := range []*blockRef{&t.meta, &t.docs, &t.sparse} {
		p := b[16*i:]
		*s = blockRef{off: int64(binary.LittleEndian.Uint64(p)), stored: int(binary.LittleEndian.Uint32(p[8:])), raw: int(binary.LittleEndian.Uint32(p[12:]))}
		if s.off < headerLen || s.off > end || int64(s.stored) > end-s.off || s.raw > maxTable {
			return trailer{}, corrupt("a table is outside the data")
		}
	}
	return t, nil
}

// meta is what the store says of itself.
type meta struct {
	commit, tenant, indexer string
	stats                   Stats
}

func (m *meta) encode() []byte {
	var e enc
	e.str(m.commit)
	e.str(m.tenant)
	e.str(m.indexer)
	for _, v := range m.stats.counts() {
		e.int(*v)
	}
	return e.b
}

func decodeMeta(raw []byte) (meta, error) {
	d := newDec(raw)
	m := meta{commit: d.str(), tenant: d.str(), indexer: d.str()}
	for _, v := range m.stats.counts() {
		*v = d.int(maxPos)
	}
	return m, d.err
}

// readFull reads n bytes at off from r, as io.ReaderAt allows (a short
// read at the end comes with io.EOF).
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// docEntry is a document of the table: its blocks are its occurrences
// (more than one when an index gives the same document twice).
type docEntry struct {
	path   string
	lang   int // in the table's languages
	hash   [32]byte
	stale  bool
	blocks []blockRef
}

// encodeDocs writes the document table: the languages, then each
// document (sorted by path).
func encodeDocs(langs []string, docs []*docEntry) []byte {
	var e enc
	e.int(len(langs))
	for _, l := range langs {
		e.str(l)
	}
	e.int(len(docs))
	prev := ""
	for _, d := range docs {
		e.prefixed(prev, d.path)
		prev = d.path
		e.b = append(e.b, d.hash[:]...)
		e.int(d.lang)
		e.int(boolInt(d.stale))
		e.int(len(d.blocks))
		for _, b := range d.blocks {
			e.block(b)
		}
	}
	return e.b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decodeDocs reads the document table of a store whose data ends at end.
func decodeDocs(raw []byte, end int64) ([]string, []docEntry, error) {
	d := newDec(raw)
	langs := make([]string, d.count(1))
	for i := range langs {
		langs[i] = d.str()
	}
	docs := make([]docEntry, d.count(40))
	prev := ""
	for i := range docs {
		doc := &docs[i]
		doc.path = d.prefixed(prev)
		if d.err == nil && i > 0 && doc.path <= prev {
			d.fail("the documents are out of order at %q", doc.path)
		}
		prev = doc.path
		copy(doc.hash[:], d.bytes(32))
		doc.lang = d.int(max(len(langs)-1, 0))
		doc.stale = d.int(1) == 1
		doc.blocks = make([]blockRef, d.count(3))
		for j := range doc.blocks {
			doc.blocks[j] = d.block(end, maxBlock)
		}
	}
	if d.err == nil && len(docs) > 0 && len(langs) == 0 {
		d.fail("documents without languages")
	}
	return langs, docs, d.err
}

// sparseEntry is a block of the symbol table and its first symbol.
type sparseEntry struct {
	first string
	block blockRef
}

func encodeSparse(s []sparseEntry) []byte {
	var e enc
	e.int(len(s))
	prev := ""
	for _, b := range s {
		e.prefixed(prev, b.first)
		prev = b.first
		e.block(b.block)
	}
	return e.b
}

func decodeSparse(raw []byte, end int64) ([]sparseEntry, error) {
	d := newDec(raw)
	s := make([]sparseEntry, d.count(5))
	prev := ""
	for i := range s {
		s[i].first = d.prefixed(prev)
		if d.err == nil && i > 0 && s[i].first <= prev {
			d.fail("the symbol blocks are out of order")
		}
		prev = s[i].first
		s[i].block = d.block(end, maxBlock)
	}
	return s, d.err
}
