package contextindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/toolshed/toolshed/shared/codechunk"
)

// EmbedBatch is how many texts an index build sends to the embedder at a
// time (the adapters split further as their provider requires).
const EmbedBatch = 64

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
	Segment *Segment
	Vectors *Vectors // nil when built without an embedder
	// Outdated: read from a format an earlier version wrote; saving it
	// again writes the current one.
	Outdated bool
}

// BuildStats says what a build did.
type BuildStats struct {
	Files     int // files in the snapshot
	Rechunked int // files cut anew (new or changed since the previous index)
	Chunks    int
	Embedded  int // texts sent to the embedder
}

// BuildCode indexes a snapshot. Files whose content hash is unchanged
// since prev keep their chunks (unless prev is Outdated); with an embedder, chunks whose text hash
// has a vector in prev (same model) keep it, and only the others are
// embedded. prev may be nil.
func BuildCode(ctx context.Context, prev *CodeIndex, snap Snapshot, emb Embedder, now time.Time) (*CodeIndex, BuildStats, error) {
	st := BuildStats{Files: len(snap.Files)}
	ix := &CodeIndex{BuiltAt: now.UTC(), Files: make(map[string]string, len(snap.Files))}
	docs, rechunked, err := ix.chunkFiles(ctx, prev, snap)
	st.Rechunked = rechunked
	if err != nil {
		return nil, st, err
	}
	ix.Commit = snap.Commit
	if ix.Commit == "" {
		ix.Commit = ix.version()
	}
	ix.Segment = NewSegment(docs)
	st.Chunks = len(docs)
	if emb != nil {
		st.Embedded, err = ix.embed(ctx, prev, emb)
		if err != nil {
			return nil, st, err
		}
	}
	return ix, st, nil
}

// chunkFiles records the content hash of each of snap's files in ix.Files
// and returns their chunks, in path order: a file whose hash is the same
// in prev keeps prev's chunks (unless prev is Outdated), and the others
// are cut anew. It also returns how many files were cut anew.
func (ix *CodeIndex) chunkFiles(ctx context.Context, prev *CodeIndex, snap Snapshot) (docs []Doc, rechunked int, err error) {
	old := map[string][]Doc{}
	if prev != nil {
		for _, d := range prev.Segment.Docs {
			old[d.Path] = append(old[d.Path], d)
		}
	}
	files := slices.Clone(snap.Files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, rechunked, err
		}
		content, err := readContent(snap, f)
		if err != nil {
			return nil, rechunked, err
		}
		sum := sha256.Sum256(content)
		h := hex.EncodeToString(sum[:])
		if _, dup := ix.Files[f.Path]; dup {
			return nil, rechunked, fmt.Errorf("file %s is listed twice", f.Path)
		}
		ix.Files[f.Path] = h
		if prev != nil && !prev.Outdated && prev.Files[f.Path] == h {
			for _, d := range old[f.Path] {
				d.Date = f.ModTime.UTC()
				docs = append(docs, d)
			}
			continue
		}
		rechunked++
		// The chunks share the content's memory: a snapshot's files never
		// change, and a file read here is never written to.
		for _, c := range codechunk.Split(f.Path, unsafe.String(unsafe.SliceData(content), len(content))) {
			docs = append(docs, CodeDoc(c, f.ModTime))
		}
	}
	return docs, rechunked, nil
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
	docs := ix.Segment.Docs
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.EmbedText()
	}
	return ix.Vectors.EmbedMissing(ctx, emb, texts, EmbedBatch)
}

// version names a working tree by its files: "tree-" and 16 hex digits of
// the hash of every path and content hash.
func (ix *CodeIndex) version() string {
	paths := make([]string, 0, len(ix.Files))
	for p := range ix.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\n", p, ix.Files[p])
	}
	return "tree-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ---- encoding ----

// The files of a stored code index.
const (
	ChunksFile  = "chunks.bin"
	LexicalFile = "lexical.bin"
	VectorsFile = "vectors.bin"
)

// writers returns, per file of the stored index, what writes it:
// chunks.bin (the chunks and the files' hashes, see writeChunks),
// lexical.bin (writeLexical) and, with vectors, vectors.bin
// (Vectors.Marshal). Writing to a file, none holds the file in memory.
func (ix *CodeIndex) writers() map[string]func(io.Writer) error {
	out := map[string]func(io.Writer) error{ChunksFile: ix.writeChunks, LexicalFile: ix.Segment.writeLexical}
	if ix.Vectors != nil {
		out[VectorsFile] = ix.Vectors.write
	}
	return out
}

// DecodeCodeIndex reads an index from its files; get returns a file's
// bytes, or an error wrapping fs.ErrNotExist (vectors.bin may be missing;
// an index stored by an earlier version has chunks.json.gz instead of
// chunks.bin).
func DecodeCodeIndex(get func(name string) ([]byte, error)) (*CodeIndex, error) {
	var ix *CodeIndex
	raw, err := get(ChunksFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if raw, err = get(chunksFileV1); err != nil {
			return nil, err
		}
		if ix, err = decodeChunksV1(raw); err == nil {
			ix.Outdated = true
		}
	case err == nil:
		ix, err = decodeChunks(raw)
	}
	if err != nil {
		return nil, err
	}
	lex, err := get(LexicalFile)
	if err != nil {
		return nil, err
	}
	if ix.Segment, err = UnmarshalSegment(ix.Segment.Docs, lex); err != nil {
		return nil, err
	}
	vec, err := get(VectorsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if ix.Vectors, err = UnmarshalVectors(vec); err != nil {
			return nil, err
		}
	}
	return ix, nil
}
