// Package indexfile keeps the indexes of package contextindex in object
// storage (an S3 bucket when deployed, a directory or memory locally):
// the keys they live under, the pointer to a repository's current code
// index (a live index saved segment by segment as it changes, one built
// in batches, with its manifest and the record of its build, or one an
// earlier version saved whole, which is still read), and the vectors of a tenant's memory entries. What is in a
// segment's files and a vector file is contextindex's encoding
// (Segment.EncodeChunks and EncodeLexical, Vectors.Encode): this package
// decides where each file lives and which ones are current.
package indexfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/tenant"
)

// Errors of Blobs: those of package objects, so that S3Blobs passes the
// bucket's answers on as they are mapped there.
var (
	// ErrNotModified: the object still has the ETag the caller holds.
	ErrNotModified = objects.ErrNotModified
	// ErrPrecondition: a conditional write found another version.
	ErrPrecondition = objects.ErrPrecondition
)

// IfAbsent is the Put condition "only when no object has the key".
const IfAbsent = "*"

// Blobs is the object storage indexes live in: an S3 bucket when
// deployed, a directory locally. Missing objects are errors wrapping
// fs.ErrNotExist.
type Blobs interface {
	// Get returns the object at key and its ETag, or ErrNotModified when
	// etag is not "" and still the object's ETag.
	Get(ctx context.Context, key, etag string) (data []byte, newETag string, err error)
	// Put writes the object. match "" writes unconditionally, IfAbsent
	// only when the key is free, any other value only when it is the
	// object's ETag (else ErrPrecondition).
	Put(ctx context.Context, key string, data []byte, match string) (etag string, err error)
}

// Pointer is <repo>/current.json: which code index is current.
type Pointer struct {
	Commit string `json:"commit"`
	// SnapshotSeq is the number of the snapshot pointer the index was
	// built from (Build.SnapshotSeq; 0 for none, and for the local
	// server's): Publish never moves the pointer to a lower one.
	SnapshotSeq int64     `json:"snapshotSeq,omitempty"`
	BuiltAt     time.Time `json:"builtAt"`
	Chunks      int       `json:"chunks"`
	// Embedded are its chunks with a vector; Pending, those still
	// waiting for one (an index built in batches: see PartInfo.Pending).
	Embedded int    `json:"embedded,omitempty"`
	Pending  int    `json:"pending,omitempty"`
	Model    string `json:"model,omitempty"` // "" for a lexical-only index
	// Format is the format of the index's files (CodeFormat).
	Format int `json:"format"`
	// Segments are the index's segments when it is saved as it changes
	// (the local server's): oldest first, each under <repo>/<name>/,
	// with the files later ones replaced; Vectors then names the sets of
	// vectors, each <repo>/<name>/vectors.bin. Without Segments the
	// index is the one segment under <repo>/<commit>/, with its vectors.
	Segments []StoredSegment `json:"segments,omitempty"`
	Vectors  []string        `json:"vectors,omitempty"`
	// Parts is how many parts the index has when it was built in
	// batches (the deployed indexer's: see Manifest); 0 otherwise.
	Parts int `json:"parts,omitempty"`
}

// StoredSegment is one segment of a stored index.
type StoredSegment struct {
	Name string `json:"name"`
	// Dead numbers the segment's files (in its order) that are left out:
	// changed or removed since it was saved.
	Dead []int `json:"dead,omitempty"`
}

// segments returns the segments the pointer names.
func (p Pointer) segments() []StoredSegment {
	if len(p.Segments) > 0 {
		return p.Segments
	}
	return []StoredSegment{{Name: p.Commit}}
}

// vectorSets returns the names of the sets of vectors the pointer names,
// and whether each must exist.
func (p Pointer) vectorSets() ([]string, bool) {
	if len(p.Segments) > 0 {
		return p.Vectors, true
	}
	return []string{p.Commit}, false
}

// names returns every name under <repo>/ the index uses.
func (p Pointer) names() []string {
	var out []string
	for _, s := range p.segments() {
		out = append(out, s.Name)
	}
	sets, _ := p.vectorSets()
	return append(out, sets...)
}

// CodeFormat is the format of the code indexes this version writes and
// reads (chunks.bin TSCHK4, lexical.bin TSLEX4; 5: the languages
// shared/symbols reads are chunked at declarations; 6: Go too, from
// shared/symbols' parse, and C#, Ruby, PHP and Kotlin). A pointer to an index
// of another format is as good as none: the index is built anew (locally
// at start, deployed when the snapshot is published again).
const CodeFormat = 6

// Store keeps indexes in Blobs under these keys, where <repo> is a
// repository's folder (reposcope.Ref.Key: <tenant> for a tenant's default
// repository, <tenant>/<name> for its named ones):
//
//	<repo>/current.json                    the Pointer to the current code index
//	<repo>/<commit>/chunks.bin             chunks, their text and file hashes
//	<repo>/<commit>/lexical.bin            BM25 statistics
//	<repo>/<commit>/vectors.bin            chunk vectors (with an embedder)
//	<tenant>/memory/<model>.vectors.bin    vectors of memory entries (a tenant's, whatever the repository)
//
// (the files under <repo>/<commit>/ are an index saved whole, as earlier
// versions did: it is still read). An index saved as it changes (the
// local server's) is segments instead,
// <repo>/<name>/chunks.bin and lexical.bin each, and sets of vectors,
// <repo>/<name>/vectors.bin, that its pointer lists (Pointer.Segments):
// a save writes the segments and vectors that are new, then the pointer.
// An index built in batches is parts, with a manifest and the build's
// record (see Manifest and Build).
//
// Deployed, Blobs is the bucket under BucketPrefix.
type Store struct {
	blobs Blobs
}

// BucketPrefix is where indexes live in the deployment's bucket: the
// indexer Lambda writes them there and context_search reads them.
const BucketPrefix = "indexes/"

// NewStore returns a Store over b.
func NewStore(b Blobs) *Store { return &Store{blobs: b} }

// PointerFile is the name of the pointer to the current code index.
const PointerFile = "current.json"

// commitName is what a commit may look like: one segment of a key.
var commitName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// checkCommit refuses a commit that would not stay one segment of a key.
func checkCommit(commit string) error {
	if !commitName.MatchString(commit) {
		return fmt.Errorf("index key segment %q is not 1-128 letters, digits, '.', '_' or '-'", commit)
	}
	return nil
}

// checkKey refuses the folder of a key, owner, unless it is a
// repository's (reposcope.CheckKey: <tenant> or <tenant>/<repository>),
// and commits that would not stay one segment.
func checkKey(owner string, commits ...string) error {
	if err := reposcope.CheckKey(owner); err != nil {
		return fmt.Errorf("index key: %w", err)
	}
	for _, c := range commits {
		if err := checkCommit(c); err != nil {
			return err
		}
	}
	return nil
}

// checkTenant refuses the folder of a tenant's memory vectors, owner,
// unless it is a tenant (the rule of package tenant).
func checkTenant(owner string) error {
	if err := tenant.Check(owner); err != nil {
		return fmt.Errorf("index key: %w", err)
	}
	return nil
}

// SaveSegment writes a segment of code under <repo>/<name>/.
func (s *Store) SaveSegment(ctx context.Context, repoKey, name string, seg *contextindex.Segment) error {
	if err := checkKey(repoKey, name); err != nil {
		return err
	}
	if err := s.saveFiles(ctx, repoKey+"/"+name+"/", &contextindex.CodeIndex{Segment: seg}); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	return nil
}

// saveFiles writes the files of a code index under prefix (which ends
// in "/"): its segment's, and its vectors when it has them.
func (s *Store) saveFiles(ctx context.Context, prefix string, ix *contextindex.CodeIndex) error {
	for _, f := range ix.Encodings() {
		if err := s.put(ctx, prefix+f.Name, f.Write); err != nil {
			return fmt.Errorf("save %s: %w", f.Name, err)
		}
	}
	return nil
}

// SaveVectors writes a set of vectors as <repo>/<name>/vectors.bin.
func (s *Store) SaveVectors(ctx context.Context, repoKey, name string, v *contextindex.Vectors) error {
	if err := checkKey(repoKey, name); err != nil {
		return err
	}
	if err := s.put(ctx, repoKey+"/"+name+"/"+contextindex.VectorsFile, v.Encode); err != nil {
		return fmt.Errorf("save %s of %s: %w", contextindex.VectorsFile, name, err)
	}
	return nil
}

// savePointer makes p (of this format) the repository's current code index:
// what it names must be saved already.
func (s *Store) savePointer(ctx context.Context, repoKey string, p Pointer) error {
	if err := checkKey(repoKey, p.names()...); err != nil {
		return err
	}
	p.Format = CodeFormat
	raw, _ := json.Marshal(p)
	if _, err := s.blobs.Put(ctx, repoKey+"/"+PointerFile, raw, ""); err != nil {
		return fmt.Errorf("save the pointer to %s: %w", p.Commit, err)
	}
	return nil
}

// put writes an object as write makes it: streamed where the Blobs can
// (a local directory), else made in memory first.
func (s *Store) put(ctx context.Context, key string, write func(io.Writer) error) error {
	if st, ok := s.blobs.(interface {
		PutFrom(ctx context.Context, key string, write func(io.Writer) error) error
	}); ok {
		return st.PutFrom(ctx, key, write)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	_, err := s.blobs.Put(ctx, key, b.Bytes(), "")
	return err
}

// Pointer reads the repository's pointer; with the ETag of the pointer the
// caller holds, ErrNotModified says it is still current. A repository without
// a code index, or with one of another format than CodeFormat, gets an
// error wrapping fs.ErrNotExist.
func (s *Store) Pointer(ctx context.Context, repoKey, etag string) (Pointer, string, error) {
	p, tag, err := s.readPointer(ctx, repoKey, etag)
	if err != nil {
		return Pointer{}, "", err
	}
	if p.Format != CodeFormat {
		return Pointer{}, "", fmt.Errorf("%s/%s: an index of format %d, this version reads %d: %w", repoKey, PointerFile, p.Format, CodeFormat, fs.ErrNotExist)
	}
	return p, tag, nil
}

// readPointer reads the repository's pointer, of whatever format, with
// its ETag (as Pointer).
func (s *Store) readPointer(ctx context.Context, repoKey, etag string) (Pointer, string, error) {
	if err := checkKey(repoKey); err != nil {
		return Pointer{}, "", err
	}
	raw, tag, err := s.blobs.Get(ctx, repoKey+"/"+PointerFile, etag)
	if err != nil {
		return Pointer{}, "", err
	}
	var p Pointer
	if err := json.Unmarshal(raw, &p); err != nil {
		return Pointer{}, "", fmt.Errorf("%s/%s: %w", repoKey, PointerFile, err)
	}
	if err := checkCommit(p.Commit); err != nil {
		return Pointer{}, "", fmt.Errorf("%s/%s: %w", repoKey, PointerFile, err)
	}
	return p, tag, nil
}

// LoadCode reads the code index a pointer names, its segments merged
// into one.
func (s *Store) LoadCode(ctx context.Context, repoKey string, p Pointer) (*contextindex.CodeIndex, error) {
	parts, vectors, err := s.loadParts(ctx, repoKey, p)
	if err != nil {
		return nil, err
	}
	ix := &contextindex.CodeIndex{Commit: p.Commit, BuiltAt: p.BuiltAt, Segment: parts[0].Seg, Vectors: vectors}
	if len(parts) > 1 || parts[0].Dead != nil {
		ix.Segment = contextindex.MergeSegments(parts)
	}
	ix.Files = ix.Segment.FileHashes()
	return ix, nil
}

// loadParts reads the segments a pointer names, each with its dead files,
// and its vectors (nil when it has none).
func (s *Store) loadParts(ctx context.Context, repoKey string, p Pointer) ([]contextindex.Part, *contextindex.Vectors, error) {
	if err := checkKey(repoKey, p.names()...); err != nil {
		return nil, nil, err
	}
	var parts []contextindex.Part
	for _, stored := range p.segments() {
		seg, err := s.loadSegment(ctx, repoKey+"/"+stored.Name+"/")
		if err != nil {
			return nil, nil, fmt.Errorf("load code index %s/%s: %w", repoKey, stored.Name, err)
		}
		part := contextindex.Part{Seg: seg}
		for _, f := range stored.Dead {
			if f < 0 || f >= seg.Files() {
				return nil, nil, fmt.Errorf("load code index %s/%s: dead file %d of %d", repoKey, stored.Name, f, seg.Files())
			}
			if part.Dead == nil {
				part.Dead = make([]bool, seg.Files())
			}
			part.Dead[f] = true
		}
		parts = append(parts, part)
	}
	sets, required := p.vectorSets()
	var vectors *contextindex.Vectors
	for _, name := range sets {
		raw, _, err := s.blobs.Get(ctx, repoKey+"/"+name+"/"+contextindex.VectorsFile, "")
		if errors.Is(err, fs.ErrNotExist) && !required {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("load code index %s/%s: %w", repoKey, name, err)
		}
		v, err := contextindex.UnmarshalVectors(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("load code index %s/%s: %w", repoKey, name, err)
		}
		if vectors == nil {
			vectors = v
			continue
		}
		if err := vectors.AddAll(v); err != nil {
			return nil, nil, fmt.Errorf("load code index %s/%s: %w", repoKey, name, err)
		}
	}
	return parts, vectors, nil
}

// loadSegment reads the segment stored under prefix (which ends in "/"):
// its chunks and its lexical index.
func (s *Store) loadSegment(ctx context.Context, prefix string) (*contextindex.Segment, error) {
	chunks, _, err := s.blobs.Get(ctx, prefix+contextindex.ChunksFile, "")
	if err != nil {
		return nil, err
	}
	lexical, _, err := s.blobs.Get(ctx, prefix+contextindex.LexicalFile, "")
	if err != nil {
		return nil, err
	}
	return contextindex.DecodeSegment(chunks, lexical)
}

// CurrentCode reads the repository's current code index, or returns an error
// wrapping fs.ErrNotExist when there is none.
func (s *Store) CurrentCode(ctx context.Context, repoKey string) (*contextindex.CodeIndex, error) {
	p, _, err := s.Pointer(ctx, repoKey, "")
	if err != nil {
		return nil, err
	}
	return s.LoadCode(ctx, repoKey, p)
}

// memoryFolder is the folder of a tenant's memory vectors.
const memoryFolder = "memory"

// memoryKey is where the vectors of a tenant's memory entries live.
func memoryKey(tenant, model string) string {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, model)
	return tenant + "/" + memoryFolder + "/" + slug + ".vectors.bin"
}

// MemoryVectors reads the vectors of a tenant's memory entries for a
// model, with ETag revalidation as Pointer. None yet is an empty set with
// ETag "".
func (s *Store) MemoryVectors(ctx context.Context, tenant, model, etag string) (*contextindex.Vectors, string, error) {
	if err := checkTenant(tenant); err != nil {
		return nil, "", err
	}
	raw, tag, err := s.blobs.Get(ctx, memoryKey(tenant, model), etag)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return contextindex.NewVectors(model), "", nil
	case err != nil:
		return nil, "", err
	}
	v, err := contextindex.UnmarshalVectors(raw)
	if err != nil {
		return nil, "", fmt.Errorf("memory vectors of %s: %w", tenant, err)
	}
	if v.Model != model {
		return nil, "", fmt.Errorf("memory vectors of %s hold %s vectors, not %s", tenant, v.Model, model)
	}
	return v, tag, nil
}

// SaveMemoryVectors writes the vectors of a tenant's memory entries if the
// stored ones still have the ETag etag ("" when there were none); a lost
// race is ErrPrecondition.
func (s *Store) SaveMemoryVectors(ctx context.Context, tenant string, v *contextindex.Vectors, etag string) (string, error) {
	if err := checkTenant(tenant); err != nil {
		return "", err
	}
	match := etag
	if match == "" {
		match = IfAbsent
	}
	return s.blobs.Put(ctx, memoryKey(tenant, v.Model), v.Marshal(), match)
}

// maxSaveAttempts bounds the read-embed-write rounds of AddMemoryVectors
// when concurrent writers keep winning.
const maxSaveAttempts = 5

// AddMemoryVectors embeds the documents whose text has no vector yet in
// the tenant's memory vectors and saves them with a conditional write,
// starting over from the stored vectors when another writer got there
// first. It returns how many texts it embedded.
func (s *Store) AddMemoryVectors(ctx context.Context, tenant string, emb contextindex.Embedder, docs []contextindex.Doc) (int, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.EmbedText()
	}
	embedded := 0
	for range maxSaveAttempts {
		// MemoryVectors decodes a new set on every call: adding to it
		// changes nothing another caller holds.
		cur, etag, err := s.MemoryVectors(ctx, tenant, emb.Model(), "")
		if err != nil {
			return embedded, err
		}
		n, err := cur.EmbedMissing(ctx, emb, texts, contextindex.EmbedBatch)
		embedded += n
		if err != nil || n == 0 {
			return embedded, err
		}
		_, err = s.SaveMemoryVectors(ctx, tenant, cur, etag)
		if !errors.Is(err, ErrPrecondition) {
			return embedded, err
		}
	}
	return embedded, fmt.Errorf("save memory vectors of %s: %d conflicting writes in a row", tenant, maxSaveAttempts)
}
