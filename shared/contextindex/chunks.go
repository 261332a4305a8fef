package contextindex

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/repo"
)

// chunks are the code chunks of a segment, held compactly: per file its
// path, content hash and modification time; per chunk a fixed-size head
// (its file, lines, place in the file, kind, name and where its text
// is); the names back to back in one string; and the text sources. A
// chunk's Doc is made when it is asked for (a search shows a few), and
// its text is read only then.
//
// A chunk's text lies in one of the texts: a file's content as the
// repository view or the snapshot holds it (so an index built from
// files adds no copy of them), or a block of chunks' text deflated, as a
// stored index holds it until the files it was cut from are at hand (a
// deployed function never has them: it keeps the blocks, a quarter of
// the text's size, and inflates one for each result it shows).
type chunks struct {
	files []chunkFile
	heads []chunkHead
	kinds []string
	names string
	texts []textSource
}

// chunkFile is a file of a code segment. A file may have no chunks (one
// that is blank): it is indexed all the same.
type chunkFile struct {
	path string
	hash [32]byte // SHA-256 of the content
	mod  int64    // modification time in Unix nanoseconds, 0 when unknown
	test bool     // isTest(path)
}

// chunkHead is a chunk without its text.
type chunkHead struct {
	file       uint32
	start, end uint32 // lines, from 1
	from, size uint32 // the text's byte offset in the file, and its length
	text, off  uint32 // the text is at off in texts[text]
	name       uint32 // the name is names[name : name+nameLen]
	nameLen    uint16
	kind       uint8 // in kinds
}

// textSource holds text of chunks: a file's content (plain), a repository
// view's file, which holds its content compressed and is decompressed
// when a chunk's text is asked for (file), or a block of chunks' text
// deflated (packed, size bytes once inflated).
type textSource struct {
	plain  string
	file   *repo.File
	packed []byte
	size   int
}

// whole returns all the text a source holds.
func (s *textSource) whole() string {
	switch {
	case s.file != nil:
		return s.file.Text()
	case s.packed != nil:
		return string(inflate(s.packed, s.size))
	}
	return s.plain
}

// Limits of the compact form.
const (
	maxKinds   = math.MaxUint8 + 1
	maxNameLen = math.MaxUint16
)

func (c *chunks) len() int { return len(c.heads) }

// text returns chunk i's text.
func (c *chunks) text(i int) string {
	h := &c.heads[i]
	src := &c.texts[h.text]
	switch {
	case src.file != nil:
		return string(src.file.Content()[h.off : h.off+h.size])
	case src.packed != nil:
		return string(inflate(src.packed, src.size)[h.off : h.off+h.size])
	}
	return src.plain[h.off : h.off+h.size]
}

// eachText calls fn with every chunk's text in order, inflating each
// block (and decompressing each file) once.
func (c *chunks) eachText(fn func(i int, text string)) {
	last, block := -1, ""
	for i := range c.heads {
		h := &c.heads[i]
		src := &c.texts[h.text]
		if src.packed == nil && src.file == nil {
			fn(i, src.plain[h.off:h.off+h.size])
			continue
		}
		if int(h.text) != last {
			last, block = int(h.text), src.whole()
		}
		fn(i, block[h.off:h.off+h.size])
	}
}

// doc returns chunk i as a document, with its text when withText.
func (c *chunks) doc(i int, withText bool) Doc {
	h := &c.heads[i]
	f := &c.files[h.file]
	ch := codechunk.Chunk{Path: f.path, Start: int(h.start), End: int(h.end), Kind: c.kinds[h.kind],
		Name: c.names[h.name : h.name+uint32(h.nameLen)], From: int(h.from)}
	if withText {
		ch.Text = c.text(i)
	}
	return CodeDoc(ch, fromUnixNano(f.mod))
}

// fileChunks returns, per file, the range of its chunks: they are
// consecutive, in the order of the files.
func (c *chunks) fileChunks() [][2]int {
	out := make([][2]int, len(c.files))
	for i, h := range c.heads {
		r := &out[h.file]
		if r[1] == 0 {
			r[0] = i
		}
		r[1] = i + 1
	}
	return out
}

// cuts returns the chunks of file f (whose content, the same as when
// they were cut, is given) as codechunk cut them.
func (c *chunks) cuts(r [2]int, content string) []codechunk.Chunk {
	out := make([]codechunk.Chunk, 0, r[1]-r[0])
	for i := r[0]; i < r[1]; i++ {
		h := &c.heads[i]
		out = append(out, codechunk.Chunk{Path: c.files[h.file].path, Start: int(h.start), End: int(h.end), Kind: c.kinds[h.kind],
			Name: c.names[h.name : h.name+uint32(h.nameLen)], Text: content[h.from : h.from+h.size], From: int(h.from)})
	}
	return out
}

// chunkBuilder makes the chunks of a code segment from files added in
// order.
type chunkBuilder struct {
	c      chunks
	kindOf map[string]uint8
	names  strings.Builder
}

// addFile adds a file and the chunks cut from its content, which text
// holds (their texts are substrings of it).
func (b *chunkBuilder) addFile(path string, hash [32]byte, mod time.Time, text textSource, cut []codechunk.Chunk) {
	fi := uint32(len(b.c.files))
	b.c.files = append(b.c.files, chunkFile{path: path, hash: hash, mod: unixNano(mod), test: isTest(path)})
	if len(cut) == 0 {
		return
	}
	ti := uint32(len(b.c.texts))
	b.c.texts = append(b.c.texts, text)
	for _, ch := range cut {
		name := codechunk.Cut(ch.Name, maxNameLen)
		b.c.heads = append(b.c.heads, chunkHead{file: fi, start: uint32(ch.Start), end: uint32(ch.End),
			from: uint32(ch.From), size: uint32(len(ch.Text)), text: ti, off: uint32(ch.From),
			name: uint32(b.names.Len()), nameLen: uint16(len(name)), kind: b.kind(ch.Kind)})
		b.names.WriteString(name)
	}
}

// kind returns the number of a kind of chunk.
func (b *chunkBuilder) kind(k string) uint8 {
	n, ok := b.kindOf[k]
	if !ok {
		if b.kindOf == nil {
			b.kindOf = map[string]uint8{}
		}
		if len(b.c.kinds) == maxKinds {
			panic("contextindex: more kinds of chunk than a segment holds")
		}
		n = uint8(len(b.c.kinds))
		b.kindOf[k] = n
		b.c.kinds = append(b.c.kinds, k)
	}
	return n
}

// chunks returns what was added.
func (b *chunkBuilder) chunks() *chunks {
	c := b.c
	c.names = built(&b.names)
	return &c
}

// mergeChunks joins the chunks of parts, leaving out their dead files
// (and their chunks), of which there are chunks. The texts the chunks
// kept use are kept, whatever their kind.
func mergeChunks(parts []Part, chunks int) *chunks {
	var b chunkBuilder
	b.c.heads = make([]chunkHead, 0, chunks)
	names := 0
	for _, p := range parts {
		names += len(p.Seg.code.names)
	}
	b.names.Grow(names)
	for _, p := range parts {
		c := p.Seg.code
		fileOf := make([]uint32, len(c.files)) // new number of each live file
		for fi, f := range c.files {
			if p.Dead == nil || !p.Dead[fi] {
				fileOf[fi] = uint32(len(b.c.files))
				b.c.files = append(b.c.files, f)
			}
		}
		textOf := map[uint32]uint32{}
		for _, h := range c.heads {
			if p.Dead != nil && p.Dead[h.file] {
				continue
			}
			t, ok := textOf[h.text]
			if !ok {
				t = uint32(len(b.c.texts))
				textOf[h.text] = t
				b.c.texts = append(b.c.texts, c.texts[h.text])
			}
			name := c.names[h.name : h.name+uint32(h.nameLen)]
			h.file, h.text, h.name, h.kind = fileOf[h.file], t, uint32(b.names.Len()), b.kind(c.kinds[h.kind])
			b.names.WriteString(name)
			b.c.heads = append(b.c.heads, h)
		}
	}
	return b.chunks()
}

// ---- encoding ----

// chunksMagic starts chunks.bin.
const chunksMagic = "TSCHK4\n"

// blockBytes is about how much chunk text a stored block holds: small
// enough that showing one chunk inflates little (some 0.3 ms), large
// enough to compress about as well as the whole (deflate at its fastest
// level makes Go source a quarter of its size).
const blockBytes = 64 << 10

// writeChunks writes chunks.bin: the files (path, SHA-256 of the content,
// modification time), the kinds of chunk, each chunk's head (file, first
// line, lines, byte offset in the file, kind, length, name length), the
// names back to back, then the chunks' text back to back in blocks of
// whole chunks, each deflated on its own, then the blocks' inflated and
// deflated sizes and, in the last 8 bytes, little-endian, the length of
// that list. Numbers are uvarints unless said otherwise. The blocks are
// written as they are made, so the text is never held whole.
func (c *chunks) writeChunks(w io.Writer) error {
	b := []byte(chunksMagic)
	b = binary.AppendUvarint(b, uint64(len(c.files)))
	for _, f := range c.files {
		b = appendString(b, f.path)
		b = append(b, f.hash[:]...)
		b = binary.AppendVarint(b, f.mod)
	}
	b = binary.AppendUvarint(b, uint64(len(c.kinds)))
	for _, k := range c.kinds {
		b = appendString(b, k)
	}
	b = binary.AppendUvarint(b, uint64(len(c.heads)))
	for _, h := range c.heads {
		for _, v := range []uint32{h.file, h.start, h.end - h.start, h.from, uint32(h.kind), h.size, uint32(h.nameLen)} {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	for _, h := range c.heads {
		b = append(b, c.names[h.name:h.name+uint32(h.nameLen)]...)
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	table, err := c.writeBlocks(w)
	if err != nil {
		return err
	}
	table = binary.LittleEndian.AppendUint64(table, uint64(len(table)))
	_, err = w.Write(table)
	return err
}

// writeBlocks writes the chunks' text in deflated blocks of about
// blockBytes and returns the list of the blocks' sizes.
func (c *chunks) writeBlocks(w io.Writer) ([]byte, error) {
	var table, raw []byte
	var packed bytes.Buffer
	zw, _ := flate.NewWriter(&packed, flate.BestSpeed) // a valid level never fails
	flush := func() error {
		if len(raw) == 0 {
			return nil
		}
		packed.Reset()
		zw.Reset(&packed)
		if _, err := zw.Write(raw); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		table = binary.AppendUvarint(table, uint64(len(raw)))
		table = binary.AppendUvarint(table, uint64(packed.Len()))
		raw = raw[:0]
		_, err := w.Write(packed.Bytes())
		return err
	}
	var err error
	c.eachText(func(_ int, text string) {
		if err != nil {
			return
		}
		if len(raw) > 0 && len(raw)+len(text) > blockBytes {
			err = flush()
		}
		raw = append(raw, text...)
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return table, nil
}

// decodeChunks reads chunks.bin. The files' paths and the names are
// copied; the blocks of text are kept in raw, which the caller must
// never change.
func decodeChunks(raw []byte) (*chunks, error) {
	if !bytes.HasPrefix(raw, []byte(chunksMagic)) {
		return nil, fmt.Errorf("%s: not a chunks file of this version", ChunksFile)
	}
	if len(raw) < len(chunksMagic)+8 {
		return nil, fmt.Errorf("%s: %w", ChunksFile, io.ErrUnexpectedEOF)
	}
	tableLen := binary.LittleEndian.Uint64(raw[len(raw)-8:])
	if tableLen > uint64(len(raw)-len(chunksMagic)-8) {
		return nil, fmt.Errorf("%s: a block list of %d bytes", ChunksFile, tableLen)
	}
	body := raw[len(chunksMagic) : uint64(len(raw))-8-tableLen]
	table := reader{buf: raw[uint64(len(raw))-8-tableLen : len(raw)-8]}
	r := reader{buf: body}
	c := &chunks{}
	c.files = make([]chunkFile, r.uvarint(uint64(len(body))))
	for i := range c.files {
		f := &c.files[i]
		f.path = string(r.bytes(r.uvarint(math.MaxUint16)))
		copy(f.hash[:], r.bytes(32))
		f.mod = r.varint()
		f.test = isTest(f.path)
	}
	c.kinds = make([]string, r.uvarint(maxKinds))
	for i := range c.kinds {
		c.kinds[i] = string(r.bytes(r.uvarint(math.MaxUint8)))
	}
	if err := c.readHeads(&r, uint64(len(body))); err != nil {
		return nil, err
	}
	if err := c.readBlocks(r.buf, &table); err != nil {
		return nil, err
	}
	return c, nil
}

// readHeads reads the chunks' heads and names.
func (c *chunks) readHeads(r *reader, maxChunks uint64) error {
	c.heads = make([]chunkHead, r.uvarint(maxChunks))
	names := 0
	for i := range c.heads {
		h := &c.heads[i]
		h.file = uint32(r.uvarint(uint64(max(len(c.files)-1, 0))))
		h.start = uint32(r.uvarint(math.MaxUint32))
		h.end = h.start + uint32(r.uvarint(math.MaxUint32-uint64(h.start)))
		h.from = uint32(r.uvarint(math.MaxUint32))
		h.kind = uint8(r.uvarint(uint64(max(len(c.kinds)-1, 0))))
		h.size = uint32(r.uvarint(codechunk.MaxChunkBytes))
		h.nameLen = uint16(r.uvarint(maxNameLen))
		h.name = uint32(names)
		names += int(h.nameLen)
	}
	if r.err == nil && len(c.heads) > 0 && (len(c.files) == 0 || len(c.kinds) == 0) {
		r.err = fmt.Errorf("%d chunks of %d files and %d kinds", len(c.heads), len(c.files), len(c.kinds))
	}
	c.names = string(r.bytes(uint64(names)))
	if r.err != nil {
		return fmt.Errorf("%s: %w", ChunksFile, r.err)
	}
	return nil
}

// readBlocks reads the list of blocks and places each chunk's text in
// its block: the chunks' text lies back to back in data, block after
// block.
func (c *chunks) readBlocks(data []byte, table *reader) error {
	next := 0 // the first chunk of the block
	for len(table.buf) > 0 && table.err == nil {
		size, packed := table.uvarint(blockBytes), table.uvarint(uint64(len(data)))
		if table.err != nil {
			break
		}
		t := uint32(len(c.texts))
		c.texts = append(c.texts, textSource{packed: data[:packed:packed], size: int(size)})
		data = data[packed:]
		off := uint32(0)
		for ; next < len(c.heads) && uint64(off)+uint64(c.heads[next].size) <= size; next++ {
			c.heads[next].text, c.heads[next].off = t, off
			off += c.heads[next].size
		}
		if uint64(off) != size {
			table.err = fmt.Errorf("a block of %d bytes holds %d bytes of chunks", size, off)
		}
	}
	switch {
	case table.err != nil:
		return fmt.Errorf("%s: %w", ChunksFile, table.err)
	case next != len(c.heads) || len(data) != 0:
		return fmt.Errorf("%s: the blocks hold %d of %d chunks, %d bytes left", ChunksFile, next, len(c.heads), len(data))
	}
	return nil
}

// inflaters are kept for the next block.
var inflaters sync.Pool // of io.ReadCloser (flate readers)

// inflate returns a block of text deflated by writeBlocks: size bytes.
// A block that does not inflate to its size (the file was damaged after
// it was checked) gives what it holds, padded with zeros.
func inflate(packed []byte, size int) []byte {
	zr, ok := inflaters.Get().(io.ReadCloser)
	if ok {
		zr.(flate.Resetter).Reset(bytes.NewReader(packed), nil) // never fails for a flate reader
	} else {
		zr = flate.NewReader(bytes.NewReader(packed))
	}
	out := make([]byte, size)
	io.ReadFull(zr, out)
	inflaters.Put(zr)
	return out
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// unixNano is t's Unix time in nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
