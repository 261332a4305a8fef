package contextindex

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/toolshed/toolshed/shared/codechunk"
)

// chunksMagic starts chunks.bin.
const chunksMagic = "TSCHK3\n"

// writeChunks writes chunks.bin: the commit and build time, the files
// (path, SHA-256 of the content, modification time), the kinds of chunk,
// each chunk as its file, lines, byte offset in the file plus one (0 for
// unknown), kind, name and length, and then the chunks' text back to
// back. All
// numbers are varints. The text is not compressed: it loads without a
// copy (the chunks' texts are substrings of the file as read), which
// costs less time than inflating it and half the memory; a local index
// whose files are unchanged then points its chunks back at the
// repository's files, and the file read goes.
func (ix *CodeIndex) writeChunks(w io.Writer) error {
	docs := ix.Segment.Docs
	paths := make([]string, 0, len(ix.Files))
	for p := range ix.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	fileOf := make(map[string]int, len(paths))
	mods := make(map[string]time.Time, len(paths))
	for i, p := range paths {
		fileOf[p] = i
	}
	for _, d := range docs {
		mods[d.Path] = d.Date
	}
	var kinds []string
	kindOf := map[string]int{}
	b := []byte(chunksMagic)
	b = appendString(b, ix.Commit)
	b = binary.AppendVarint(b, ix.BuiltAt.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		sum, err := hex.DecodeString(ix.Files[p])
		if err != nil || len(sum) != 32 {
			return fmt.Errorf("encode chunks: the hash of %s is not a SHA-256", p)
		}
		b = appendString(b, p)
		b = append(b, sum...)
		b = binary.AppendVarint(b, unixNano(mods[p]))
	}
	for _, d := range docs {
		if _, ok := kindOf[d.Type]; !ok {
			kindOf[d.Type] = len(kinds)
			kinds = append(kinds, d.Type)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(kinds)))
	for _, k := range kinds {
		b = appendString(b, k)
	}
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for _, d := range docs {
		fi, ok := fileOf[d.Path]
		if !ok {
			return fmt.Errorf("encode chunks: chunk %s of a file the index does not list", d.ID)
		}
		b = binary.AppendUvarint(b, uint64(fi))
		b = binary.AppendUvarint(b, uint64(d.Start))
		b = binary.AppendUvarint(b, uint64(d.End-d.Start))
		b = binary.AppendUvarint(b, uint64(d.From+1)) // -1: unknown
		b = binary.AppendUvarint(b, uint64(kindOf[d.Type]))
		b = appendString(b, d.Name)
		b = binary.AppendUvarint(b, uint64(len(d.Content)))
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	for _, d := range docs {
		if _, err := io.WriteString(w, d.Content); err != nil {
			return err
		}
	}
	return nil
}

// decodeChunks reads chunks.bin into an index without its lexical
// statistics (the segment has only its documents). The chunks' texts are
// substrings of raw: the caller must never change it.
func decodeChunks(raw []byte) (*CodeIndex, error) {
	if !bytes.HasPrefix(raw, []byte(chunksMagic)) {
		return nil, fmt.Errorf("%s: not a chunks file", ChunksFile)
	}
	r := reader{buf: raw[len(chunksMagic):]}
	ix := &CodeIndex{Commit: string(r.bytes(r.uvarint(math.MaxUint16)))}
	ix.BuiltAt = time.Unix(0, r.varint()).UTC()
	nfiles := r.uvarint(uint64(len(raw)))
	type file struct {
		path string
		mod  time.Time
	}
	files := make([]file, 0, nfiles)
	ix.Files = make(map[string]string, nfiles)
	for range nfiles {
		p := string(r.bytes(r.uvarint(math.MaxUint16)))
		sum := r.bytes(32)
		mod := r.varint()
		files = append(files, file{path: p, mod: fromUnixNano(mod)})
		ix.Files[p] = hex.EncodeToString(sum)
	}
	kinds := make([]string, r.uvarint(256))
	for i := range kinds {
		kinds[i] = string(r.bytes(r.uvarint(256)))
	}
	n := r.uvarint(uint64(len(raw)))
	type span struct{ off, n int }
	docs := make([]Doc, 0, n)
	spans := make([]span, 0, n)
	off := 0
	for range n {
		if r.err != nil {
			break
		}
		fi, start, lines, from, kind := r.uvarint(nfiles-1), r.uvarint(math.MaxUint32), r.uvarint(math.MaxUint32),
			r.uvarint(math.MaxUint32), r.uvarint(uint64(max(len(kinds)-1, 0)))
		name := string(r.bytes(r.uvarint(math.MaxUint16)))
		size := r.uvarint(codechunk.MaxChunkBytes)
		if r.err != nil || len(kinds) == 0 {
			break
		}
		f := files[fi]
		d := Doc{Source: SourceCode, Type: kinds[kind], Module: codechunk.Module(f.path), Path: f.path, Name: name, Date: f.mod,
			Start: int(start), End: int(start + lines), From: int(from) - 1}
		d.ID = fmt.Sprintf("%s:%d-%d", d.Path, d.Start, d.End)
		docs = append(docs, d)
		spans = append(spans, span{off, int(size)})
		off += int(size)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", ChunksFile, r.err)
	}
	if len(r.buf) != off {
		return nil, fmt.Errorf("%s: the chunks' text is %d bytes, the chunks say %d", ChunksFile, len(r.buf), off)
	}
	// Every chunk's content is a substring of the text, which the caller
	// hands over and never writes again.
	all := unsafe.String(unsafe.SliceData(r.buf), len(r.buf))
	for i, sp := range spans {
		docs[i].Content = all[sp.off : sp.off+sp.n]
	}
	ix.Segment = &Segment{Docs: docs}
	return ix, nil
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

// ---- the format of earlier versions ----

// chunksFileV1 is where earlier versions stored the chunks, as JSON.
const chunksFileV1 = "chunks.json.gz"

type chunksJSON struct {
	Version int               `json:"version"`
	Commit  string            `json:"commit"`
	BuiltAt time.Time         `json:"builtAt"`
	Files   map[string]string `json:"files"`
	Chunks  []chunkJSON       `json:"chunks"`
}

type chunkJSON struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	Path    string    `json:"path"`
	Module  string    `json:"module,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	Content string    `json:"content"`
}

// decodeChunksV1 reads chunks.json.gz (format version 1).
func decodeChunksV1(raw []byte) (*CodeIndex, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", chunksFileV1, err)
	}
	var doc chunksJSON
	if err := json.NewDecoder(zr).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", chunksFileV1, err)
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("%s: format version %d, this build reads 1", chunksFileV1, doc.Version)
	}
	docs := make([]Doc, len(doc.Chunks))
	for i, c := range doc.Chunks {
		docs[i] = Doc{ID: c.ID, Source: SourceCode, Type: c.Type, Content: c.Content, Module: c.Module, Path: c.Path, Date: c.Date, From: -1}
		fmt.Sscanf(c.ID[len(c.Path):], ":%d-%d", &docs[i].Start, &docs[i].End)
	}
	ix := &CodeIndex{Commit: doc.Commit, BuiltAt: doc.BuiltAt, Files: doc.Files, Segment: &Segment{Docs: docs}}
	if ix.Files == nil {
		ix.Files = map[string]string{}
	}
	return ix, nil
}
