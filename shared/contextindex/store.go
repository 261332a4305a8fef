package contextindex

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
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
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

// Pointer is <tenant>/current.json: which code index is current.
type Pointer struct {
	Commit  string    `json:"commit"`
	BuiltAt time.Time `json:"builtAt"`
	Chunks  int       `json:"chunks"`
	Model   string    `json:"model,omitempty"` // "" for a lexical-only index
	// Parts is how many parts the index has when it was built in
	// batches (see Manifest); 0 for an index stored whole.
	Parts int `json:"parts,omitempty"`
}

// Store keeps indexes in Blobs under these keys:
//
//	<tenant>/current.json                  the Pointer to the current code index
//	<tenant>/<commit>/chunks.bin           chunks and file hashes (chunks.json.gz before)
//	<tenant>/<commit>/lexical.bin          BM25 statistics
//	<tenant>/<commit>/vectors.bin          chunk vectors (with an embedder)
//	<tenant>/memory/<model>.vectors.bin    vectors of memory entries
//
// and, for an index built in batches, its parts and the build's record
// (see Manifest and Build).
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

// checkKey refuses the first segment of a key, the tenant owner (the rule
// of package tenant), and commits that would not stay one segment.
func checkKey(owner string, commits ...string) error {
	if err := tenant.Check(owner); err != nil {
		return fmt.Errorf("index key: %w", err)
	}
	for _, c := range commits {
		if err := checkCommit(c); err != nil {
			return err
		}
	}
	return nil
}

// SaveCode writes a code index, its files first and the pointer last, so
// readers never see a pointer to a partial index.
func (s *Store) SaveCode(ctx context.Context, tenant string, ix *CodeIndex) error {
	if err := checkKey(tenant, ix.Commit); err != nil {
		return err
	}
	if err := s.saveFiles(ctx, tenant+"/"+ix.Commit+"/", ix); err != nil {
		return fmt.Errorf("save %s: %w", ix.Commit, err)
	}
	p := Pointer{Commit: ix.Commit, BuiltAt: ix.BuiltAt, Chunks: len(ix.Segment.Docs)}
	if ix.Vectors != nil {
		p.Model = ix.Vectors.Model
	}
	return s.savePointer(ctx, tenant, p)
}

// saveFiles writes the files of a code index under prefix (which ends
// in "/").
func (s *Store) saveFiles(ctx context.Context, prefix string, ix *CodeIndex) error {
	writers := ix.writers()
	for _, name := range []string{ChunksFile, LexicalFile, VectorsFile} {
		write, ok := writers[name]
		if !ok {
			continue
		}
		if err := s.put(ctx, prefix+name, write); err != nil {
			return fmt.Errorf("save %s: %w", name, err)
		}
	}
	return nil
}

// savePointer points the tenant's readers at an index.
func (s *Store) savePointer(ctx context.Context, tenant string, p Pointer) error {
	raw, _ := json.Marshal(p)
	if _, err := s.blobs.Put(ctx, tenant+"/"+PointerFile, raw, ""); err != nil {
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

// Prune removes the tenant's code indexes other than keep, where the
// Blobs can (a local directory or memory; S3 keeps old indexes, which warm
// readers may still be loading).
func (s *Store) Prune(tenant, keep string) error {
	if p, ok := s.blobs.(interface {
		RemoveOthers(prefix, keep string) error
	}); ok {
		return p.RemoveOthers(tenant, keep)
	}
	return nil
}

// Pointer reads the tenant's pointer; with the ETag of the pointer the
// caller holds, ErrNotModified says it is still current. A tenant without
// a code index gets an error wrapping fs.ErrNotExist.
func (s *Store) Pointer(ctx context.Context, tenant, etag string) (Pointer, string, error) {
	if err := checkKey(tenant); err != nil {
		return Pointer{}, "", err
	}
	raw, tag, err := s.blobs.Get(ctx, tenant+"/"+PointerFile, etag)
	if err != nil {
		return Pointer{}, "", err
	}
	var p Pointer
	if err := json.Unmarshal(raw, &p); err != nil {
		return Pointer{}, "", fmt.Errorf("%s/%s: %w", tenant, PointerFile, err)
	}
	if err := checkCommit(p.Commit); err != nil {
		return Pointer{}, "", fmt.Errorf("%s/%s: %w", tenant, PointerFile, err)
	}
	return p, tag, nil
}

// LoadCode reads one code index.
func (s *Store) LoadCode(ctx context.Context, tenant, commit string) (*CodeIndex, error) {
	if err := checkKey(tenant, commit); err != nil {
		return nil, err
	}
	ix, err := DecodeCodeIndex(func(name string) ([]byte, error) {
		data, _, err := s.blobs.Get(ctx, tenant+"/"+commit+"/"+name, "")
		return data, err
	})
	if err != nil {
		return nil, fmt.Errorf("load code index %s/%s: %w", tenant, commit, err)
	}
	return ix, nil
}

// CurrentCode reads the tenant's current code index, or returns an error
// wrapping fs.ErrNotExist when there is none.
func (s *Store) CurrentCode(ctx context.Context, tenant string) (*CodeIndex, error) {
	p, _, err := s.Pointer(ctx, tenant, "")
	if err != nil {
		return nil, err
	}
	return s.LoadCode(ctx, tenant, p.Commit)
}

// memoryKey is where the vectors of a tenant's memory entries live.
func memoryKey(tenant, model string) string {
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, model)
	return tenant + "/memory/" + slug + ".vectors.bin"
}

// MemoryVectors reads the vectors of a tenant's memory entries for a
// model, with ETag revalidation as Pointer. None yet is an empty set with
// ETag "".
func (s *Store) MemoryVectors(ctx context.Context, tenant, model, etag string) (*Vectors, string, error) {
	if err := checkKey(tenant); err != nil {
		return nil, "", err
	}
	raw, tag, err := s.blobs.Get(ctx, memoryKey(tenant, model), etag)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NewVectors(model), "", nil
	case err != nil:
		return nil, "", err
	}
	v, err := UnmarshalVectors(raw)
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
func (s *Store) SaveMemoryVectors(ctx context.Context, tenant string, v *Vectors, etag string) (string, error) {
	if err := checkKey(tenant); err != nil {
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
func (s *Store) AddMemoryVectors(ctx context.Context, tenant string, emb Embedder, docs []Doc) (int, error) {
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
		n, err := cur.EmbedMissing(ctx, emb, texts, EmbedBatch)
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

// MemBlobs keeps objects in memory (a local server without a data
// directory, and tests).
type MemBlobs struct {
	mu      sync.Mutex
	objects map[string][]byte
}

var _ Blobs = (*MemBlobs)(nil)

// RemoveOthers deletes the objects under prefix/ except those of keep/,
// memory/ and the pointer.
func (m *MemBlobs) RemoveOthers(prefix, keep string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.objects {
		rest, ok := strings.CutPrefix(k, prefix+"/")
		if ok && strings.Contains(rest, "/") && !strings.HasPrefix(rest, keep+"/") && !strings.HasPrefix(rest, "memory/") {
			delete(m.objects, k)
		}
	}
	return nil
}

// Get implements Blobs.
func (m *MemBlobs) Get(_ context.Context, key, etag string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[key]
	if !ok {
		return nil, "", fmt.Errorf("index object %s: %w", key, fs.ErrNotExist)
	}
	tag := etagOf(data)
	if etag != "" && etag == tag {
		return nil, tag, ErrNotModified
	}
	return data, tag, nil
}

// Put implements Blobs.
func (m *MemBlobs) Put(_ context.Context, key string, data []byte, match string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objects[key]
	if match == IfAbsent && ok || match != "" && match != IfAbsent && (!ok || etagOf(cur) != match) {
		return "", fmt.Errorf("index object %s: %w", key, ErrPrecondition)
	}
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[key] = data
	return etagOf(data), nil
}
