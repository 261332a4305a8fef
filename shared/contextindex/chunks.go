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
	"maps"
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
	paths := slices.Sorted(maps.Keys(ix.Files))
	b := []byte(chunksMagic)
	b = appendString(b, ix.Commit)
	b = binary.AppendVarint(b, ix.BuiltAt.UnixNano())
	b, err := ix.appendFiles(b, paths)
	if err != nil {
		return err
	}
	kinds, kindOf := chunkKinds(docs)
	b = binary.AppendUvarint(b, uint64(len(kinds)))
	for _, k := range kinds {
		b = appendString(b, k)
	}
	b, err = appendChunkHeads(b, docs, paths, kindOf)
	if err != nil {
		return err
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

// appendFiles appends the number of files and, for each of paths, the
// path, the SHA-256 of its content and its modification time (that of its
// chunks).
func (ix *CodeIndex) appendFiles(b []byte, paths []string) ([]byte, error) {
	mods := make(map[string]time.Time, len(paths))
	for _, d := range ix.Segment.Docs {
		mods[d.Path] = d.Date
	}
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		sum, err := hex.DecodeString(ix.Files[p])
		if err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("encode chunks: the hash of %s is not a SHA-256", p)
		}
		b = appendString(b, p)
		b = append(b, sum...)
		b = binary.AppendVarint(b, unixNano(mods[p]))
	}
	return b, nil
}

// chunkKinds lists the kinds of docs in the order they first come, and
// each kind's place in that list.
func chunkKinds(docs []Doc) ([]string, map[string]int) {
	var kinds []string
	kindOf := map[string]int{}
	for _, d := range docs {
		if _, ok := kindOf[d.Type]; !ok {
			kindOf[d.Type] = len(kinds)
			kinds = append(kinds, d.Type)
		}
	}
	return kinds, kindOf
}

// appendChunkHeads appends the number of chunks and each chunk's file
// (its place in paths), lines, byte offset plus one, kind, name and
// length.
func appendChunkHeads(b []byte, docs []Doc, paths []string, kindOf map[string]int) ([]byte, error) {
	fileOf := make(map[string]int, len(paths))
	for i, p := range paths {
		fileOf[p] = i
	}
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for _, d := range docs {
		fi, ok := fileOf[d.Path]
		if !ok {
			return nil, fmt.Errorf("encode chunks: chunk %s of a file the index does not list", d.ID)
		}
		b = binary.AppendUvarint(b, uint64(fi))
		b = binary.AppendUvarint(b, uint64(d.Start))
		b = binary.AppendUvarint(b, uint64(d.End-d.Start))
		b = binary.AppendUvarint(b, uint64(d.From+1)) // -1: unknown
		b = binary.AppendUvarint(b, uint64(kindOf[d.Type]))
		b = appendString(b, d.Name)
		b = binary.AppendUvarint(b, uint64(len(d.Content)))
	}
	return b, nil
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
	var files []chunkFile
	ix.Files, files = readChunkFiles(&r, uint64(len(raw)))
	kinds := make([]string, r.uvarint(256))
	for i := range kinds {
		kinds[i] = string(r.bytes(r.uvarint(256)))
	}
	docs, sizes := readChunkHeads(&r, files, kinds, uint64(len(raw)))
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", ChunksFile, r.err)
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if len(r.buf) != total {
		return nil, fmt.Errorf("%s: the chunks' text is %d bytes, the chunks say %d", ChunksFile, len(r.buf), total)
	}
	// Every chunk's content is a substring of the text, which the caller
	// hands over and never writes again.
	all := unsafe.String(unsafe.SliceData(r.buf), len(r.buf))
	off := 0
	for i, n := range sizes {
		docs[i].Content = all[off : off+n]
		off += n
	}
	ix.Segment = &Segment{Docs: docs}
	return ix, nil
}

// chunkFile is a file of chunks.bin, as its chunks refer to it.
type chunkFile struct {
	path string
	mod  time.Time
}

// readChunkFiles reads the number of files (at most maxFiles) and each
// file. It returns each path's content hash, and the files in order.
func readChunkFiles(r *reader, maxFiles uint64) (map[string]string, []chunkFile) {
	n := r.uvarint(maxFiles)
	files := make([]chunkFile, 0, n)
	hashes := make(map[string]string, n)
	for range n {
		p := string(r.bytes(r.uvarint(math.MaxUint16)))
		sum := r.bytes(32)
		mod := r.varint()
		files = append(files, chunkFile{path: p, mod: fromUnixNano(mod)})
		hashes[p] = hex.EncodeToString(sum)
	}
	return hashes, files
}

// readChunkHeads reads the number of chunks (at most maxChunks) and each
// chunk's head. It returns the chunks without their content, and the
// length of each one's content.
func readChunkHeads(r *reader, files []chunkFile, kinds []string, maxChunks uint64) ([]Doc, []int) {
	n := r.uvarint(maxChunks)
	docs := make([]Doc, 0, n)
	sizes := make([]int, 0, n)
	for range n {
		if r.err != nil {
			break
		}
		fi, start, lines, from, kind := r.uvarint(uint64(len(files))-1), r.uvarint(math.MaxUint32), r.uvarint(math.MaxUint32),
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
		sizes = append(sizes, int(size))
	}
	return docs, sizes
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
