package contextindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/symbols"
)

// EmbedBatch is how many texts an index build sends to the embedder at a
// time (the adapters split further as their provider requires).
const EmbedBatch = 64

// buildBatch is how many files BuildCode cuts into one segment at a time.
const buildBatch = 256

// Snapshot is what a code index is built from: a repository at a commit
// and the files to index, as the repository walker yields them (it skips
// ignored files, excluded folders and binaries).
type Snapshot struct {
	FS     fs.FS
	Commit string // "" for a working tree: the index names a version by its files' hashes
	Files  []File
}

// File is one file to index.
type File struct {
	Path    string    // slash-separated, relative to the root of FS
	Content []byte    // nil: read from FS
	ModTime time.Time // zero when unknown; dates the file's chunks
}

// CodeIndex is the searchable code of one snapshot.
type CodeIndex struct {
	Commit  string
	BuiltAt time.Time
	Files   map[string]string // path → SHA-256 of its content
	Segment *Segment          // of code
	Vectors *Vectors          // nil when built without an embedder
}

// BuildStats says what a build did.
type BuildStats struct {
	Files     int // files in the snapshot
	Rechunked int // files cut anew (new or changed since the previous index)
	Chunks    int
	Embedded  int // texts sent to the embedder
}

// BuildCode indexes a snapshot. Files whose content hash is unchanged
// since prev keep the chunks they were cut into (their text is the
// snapshot's); with an embedder, chunks whose text hash has a vector in
// prev (same model) keep it, and only the others are embedded. prev may
// be nil. The index holds the snapshot's file contents (its chunks' text
// is theirs): they must not change.
func BuildCode(ctx context.Context, prev *CodeIndex, snap Snapshot, emb Embedder, now time.Time) (*CodeIndex, BuildStats, error) {
	st := BuildStats{Files: len(snap.Files)}
	files, err := byPath(snap.Files)
	if err != nil {
		return nil, st, err
	}
	seg, rechunked, err := cutSnapshot(ctx, snap, files, reusable(prev))
	st.Rechunked = rechunked
	if err != nil {
		return nil, st, err
	}
	ix := &CodeIndex{BuiltAt: now.UTC(), Segment: seg, Files: seg.code.hashes(), Commit: snap.Commit}
	if ix.Commit == "" {
		ix.Commit = version(ix.Files)
	}
	st.Chunks = seg.Len()
	if emb != nil {
		if st.Embedded, err = ix.embed(ctx, prev, emb); err != nil {
			return nil, st, err
		}
	}
	return ix, st, nil
}

// byPath returns files sorted by path, refusing a path listed twice.
func byPath(files []File) ([]File, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("file %s is listed twice", files[i].Path)
		}
	}
	return files, nil
}

// cutBatch is what cutting one batch of files made.
type cutBatch struct {
	seg       *Segment
	rechunked int // files cut anew
	err       error
}

// cutSnapshot cuts files (of snap, sorted by path) into one segment: a
// batch of them at a time on every core, the batches' segments merged in
// order as they come, so that the segment is the same whatever the number
// of cores. It returns how many files it cut anew (not kept from r).
func cutSnapshot(ctx context.Context, snap Snapshot, files []File, r reuse) (*Segment, int, error) {
	var parts []Part
	rechunked := 0
	batch := func(i int) []File { return files[i*buildBatch : min((i+1)*buildBatch, len(files))] }
	err := inOrder(ctx, (len(files)+buildBatch-1)/buildBatch, func(i int) cutBatch {
		return snap.cut(ctx, batch(i), r)
	}, func(_ int, b cutBatch) error {
		if b.err != nil {
			return b.err
		}
		rechunked += b.rechunked
		parts = append(parts, Part{Seg: b.seg})
		if from := mergeFrom(parts, math.MaxInt); from < len(parts) {
			parts = append(parts[:from], Part{Seg: MergeSegments(parts[from:])})
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, rechunked, err
	case len(parts) == 0:
		return newCodeBuilder().segment(), 0, nil
	case len(parts) == 1:
		return parts[0].Seg, rechunked, nil
	}
	return MergeSegments(parts), rechunked, nil
}

// cut cuts files of snap into a segment, keeping the chunks r holds for a
// file whose content is unchanged.
func (snap Snapshot) cut(ctx context.Context, files []File, r reuse) cutBatch {
	b := newCodeBuilder()
	out := cutBatch{}
	for _, f := range files {
		if out.err = ctx.Err(); out.err != nil {
			return out
		}
		content, err := readContent(snap, f)
		if err != nil {
			out.err = err
			return out
		}
		text := unsafe.String(unsafe.SliceData(content), len(content)) // never changes (see BuildCode)
		hash := sha256.Sum256(content)
		cut, ok := r.cuts(f.Path, hash, text)
		if !ok {
			out.rechunked++
			cut = cutFile(f.Path, text)
		}
		b.addFile(f.Path, hash, f.ModTime, textSource{plain: text}, cut)
	}
	out.seg = b.segment()
	return out
}

// cutFile cuts the file at p, whose content is text, into chunks: at the
// declarations shared/symbols' parse of it finds, Markdown at its
// headings, else into blocks. It parses the file itself: BuildCode (the
// deployed indexer) has no symbol table to take the parse from, which a
// live index does (LiveOptions.Parses).
func cutFile(p, text string) []codechunk.Chunk {
	return codechunk.Split(p, text, symbols.Parse(p, text))
}

// codeBuilder makes a segment of code from files added one after the
// other: their chunks and those chunks' terms.
type codeBuilder struct {
	chunks chunkBuilder
	lex    *lexiconBuilder
}

func newCodeBuilder() *codeBuilder {
	return &codeBuilder{lex: lexiconBuilders.Get().(*lexiconBuilder)}
}

// addFile adds a file and the chunks cut from its content, which text
// holds (their texts are substrings of it).
func (b *codeBuilder) addFile(path string, hash [32]byte, mod time.Time, text textSource, cut []codechunk.Chunk) {
	b.chunks.addFile(path, hash, mod, text, cut)
	module := codechunk.Module(path)
	for _, c := range cut {
		d := Doc{Source: SourceCode, Type: c.Kind, Content: c.Text, Module: module, Path: path, Name: c.Name}
		b.lex.addDoc(&d)
	}
}

// segment returns what was added; the builder is done.
func (b *codeBuilder) segment() *Segment {
	s := &Segment{code: b.chunks.chunks(), lex: b.lex.lexicon()}
	lexiconBuilders.Put(b.lex)
	b.lex = nil
	return s
}

// reuse holds the chunks of a previous index, to keep them for files
// whose content is unchanged.
type reuse struct {
	c      *chunks
	ranges map[string][2]int // path → its chunks
	hash   map[string][32]byte
}

// reusable returns prev's chunks for reuse (none when prev is nil).
func reusable(prev *CodeIndex) reuse {
	if prev == nil {
		return reuse{}
	}
	c := prev.Segment.code
	r := reuse{c: c, ranges: make(map[string][2]int, len(c.files)), hash: make(map[string][32]byte, len(c.files))}
	for fi, rg := range c.fileChunks() {
		f := c.files[fi]
		r.ranges[f.path], r.hash[f.path] = rg, f.hash
	}
	return r
}

// cuts returns the chunks the previous index cut path into, with their
// text from content, when path had the same hash.
func (r reuse) cuts(path string, hash [32]byte, content string) ([]codechunk.Chunk, bool) {
	if r.c == nil {
		return nil, false
	}
	if h, ok := r.hash[path]; !ok || h != hash {
		return nil, false
	}
	return r.c.cuts(r.ranges[path], content), true
}

// readContent returns f's content: the one it carries, or else the file
// read from snap.FS.
func readContent(snap Snapshot, f File) ([]byte, error) {
	if f.Content != nil {
		return f.Content, nil
	}
	content, err := fs.ReadFile(snap.FS, f.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	return content, nil
}

// embed gives ix the vectors of its chunks: those whose text hash has a
// vector in prev (same model) keep it, and the others are embedded. It
// returns how many texts it sent to emb.
func (ix *CodeIndex) embed(ctx context.Context, prev *CodeIndex, emb Embedder) (int, error) {
	hashes := ix.Segment.hashes()
	ix.Vectors = NewVectors(emb.Model())
	if prev != nil && prev.Vectors != nil && prev.Vectors.Model == emb.Model() {
		ix.Vectors = prev.Vectors.Subset(hashes)
	}
	texts := make([]string, 0, len(hashes))
	ix.Segment.eachEmbedText(func(_ int, text string) { texts = append(texts, text) })
	return ix.Vectors.EmbedMissing(ctx, emb, texts, EmbedBatch)
}

// hashes returns each file's path and the hex SHA-256 of its content.
func (c *chunks) hashes() map[string]string {
	out := make(map[string]string, len(c.files))
	for _, f := range c.files {
		out[f.path] = hex.EncodeToString(f.hash[:])
	}
	return out
}

// version names a working tree by its files: "tree-" and 16 hex digits of
// the hash of every path and content hash.
func version(files map[string]string) string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s\x00%s\n", p, files[p])
	}
	return "tree-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// NewCodeCollection ranks the parts of a code index together, as one
// collection (nil when they hold no documents): each document has the
// vector of its text in its own part's vectors, when those are of model.
func NewCodeCollection(model string, parts []*CodeIndex) *Collection {
	var ps []Part
	var vecs []*Vectors // per part in ps
	usable := false
	for _, p := range parts {
		if p.Segment == nil || p.Segment.Len() == 0 {
			continue // NewCollection leaves it out too
		}
		ps = append(ps, Part{Seg: p.Segment})
		v := p.Vectors
		if v == nil || v.Model != model || v.Len() == 0 {
			v = nil
		}
		vecs = append(vecs, v)
		usable = usable || v != nil
	}
	c := NewCollection(model, ps)
	if c == nil || !usable {
		return c
	}
	c.vecs = make([][]float32, c.n)
	for si, p := range c.parts {
		if vecs[si] == nil {
			continue
		}
		for i, h := range p.Seg.hashes() {
			if vec, ok := vecs[si].Get(h); ok {
				c.vecs[c.base[si]+i] = vec
				c.nvecs++
			}
		}
	}
	return c
}

// ReuseVectors gives ix's chunks the vectors their texts have in from
// (sets of another model than model are skipped), adding to ix.Vectors
// (started for model when nil). It returns how many vectors it added.
func (ix *CodeIndex) ReuseVectors(model string, from ...*Vectors) int {
	if ix.Vectors == nil {
		ix.Vectors = NewVectors(model)
	}
	added := 0
	for _, h := range ix.Segment.hashes() {
		if _, ok := ix.Vectors.Get(h); ok {
			continue
		}
		for _, v := range from {
			if v == nil || v.Model != model {
				continue
			}
			if vec, ok := v.Get(h); ok {
				_ = ix.Vectors.Add(h, vec) // of the set's dimensions and unit length already
				added++
				break
			}
		}
	}
	return added
}

// Missing returns the texts to embed for ix's chunks that have no vector
// in ix.Vectors, each text once, and how many chunks those are.
func (ix *CodeIndex) Missing() (texts []string, chunks int) {
	all := Part{Seg: ix.Segment}.textsWithoutVectors(ix.Vectors)
	seen := map[string]bool{}
	for _, t := range all {
		if h := TextHash(t); !seen[h] {
			seen[h] = true
			texts = append(texts, t)
		}
	}
	return texts, len(all)
}

// ---- encoding ----

// A segment of code is stored as two encodings, its vectors as a third;
// package indexfile keeps them, each a file of the name here. Writing to a
// file, none holds the file in memory.
const (
	ChunksFile  = "chunks.bin"  // Segment.EncodeChunks
	LexicalFile = "lexical.bin" // Segment.EncodeLexical
	VectorsFile = "vectors.bin" // Vectors.Encode
)

// Encoding is one file of a stored code index: its name and what writes
// it.
type Encoding struct {
	Name  string
	Write func(io.Writer) error
}

// Encodings returns the files ix is stored as: its segment's two, and
// its vectors' when it has them.
func (ix *CodeIndex) Encodings() []Encoding {
	out := []Encoding{{ChunksFile, ix.Segment.EncodeChunks}, {LexicalFile, ix.Segment.EncodeLexical}}
	if ix.Vectors != nil {
		out = append(out, Encoding{VectorsFile, ix.Vectors.Encode})
	}
	return out
}

// EncodeChunks writes the segment's chunks, their text and their files'
// hashes (chunks.writeChunks).
func (s *Segment) EncodeChunks(w io.Writer) error { return s.code.writeChunks(w) }

// FileHashes returns the segment's files of code, each with the hex
// SHA-256 of its content (as CodeIndex.Files).
func (s *Segment) FileHashes() map[string]string { return s.code.hashes() }

// DecodeSegment reads a segment of code from its two encodings. It keeps
// raw chunks' blocks and the lexical encoding's terms and postings in
// place: the caller must never change them.
func DecodeSegment(chunksRaw, lexical []byte) (*Segment, error) {
	c, err := decodeChunks(chunksRaw)
	if err != nil {
		return nil, err
	}
	lx, err := decodeLexicon(c.len(), lexical)
	if err != nil {
		return nil, err
	}
	return &Segment{code: c, lex: lx}, nil
}
