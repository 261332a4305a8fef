package indexfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestStoreDir saves an index in a directory, reads it back through the
// pointer, and revalidates by ETag.
func TestStoreDir(t *testing.T) {
	testStore(t, &DirBlobs{Root: t.TempDir()})
	t.Run("parts", func(t *testing.T) { testParts(t, &DirBlobs{Root: t.TempDir()}) })
	t.Run("build record", func(t *testing.T) { testBuildRecord(t, &DirBlobs{Root: t.TempDir()}) })
	t.Run("publish order", func(t *testing.T) { testPublishOrder(t, &DirBlobs{Root: t.TempDir()}) })
}

// TestStoreS3 does the same on moto_server's S3.
func TestStoreS3(t *testing.T) {
	m := emulator.StartMoto(t)
	newBlobs := func(t *testing.T) Blobs {
		return &S3Blobs{Bucket: objects.New(m.S3(), m.NewBucket(t)), Prefix: "indexes/"}
	}
	testStore(t, newBlobs(t))
	t.Run("parts", func(t *testing.T) { testParts(t, newBlobs(t)) })
	t.Run("build record", func(t *testing.T) { testBuildRecord(t, newBlobs(t)) })
	t.Run("publish order", func(t *testing.T) { testPublishOrder(t, newBlobs(t)) })
}

func testStore(t *testing.T, blobs Blobs) {
	t.Helper()
	ctx := context.Background()
	s := NewStore(blobs)
	if _, err := s.CurrentCode(ctx, "acme"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no index yet: got %v, want fs.ErrNotExist", err)
	}
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	_, emb := embedtest.Start(t)
	ix, _, err := contextindex.BuildCode(ctx, nil, snapshot(t, dir, "c1"), emb, day(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SavePart(ctx, "acme", "c1", PartName(0), ix); err != nil {
		t.Fatal(err)
	}
	m := Manifest{Commit: "c1", BuiltAt: ix.BuiltAt, Model: emb.Model(),
		Parts: []PartInfo{{Name: PartName(0), Files: len(ix.Files), Chunks: ix.Segment.Len(), Vectors: ix.Vectors.Len()}}}
	if _, err := s.Publish(ctx, "acme", m); err != nil {
		t.Fatal(err)
	}
	p, etag, err := s.Pointer(ctx, "acme", "")
	if err != nil || p.Commit != "c1" || p.Chunks != ix.Segment.Len() || p.Model != emb.Model() || p.Parts != 1 {
		t.Fatalf("pointer %+v, %v", p, err)
	}
	if _, _, err := s.Pointer(ctx, "acme", etag); !errors.Is(err, ErrNotModified) {
		t.Errorf("revalidation with the current ETag: %v, want ErrNotModified", err)
	}
	back, err := s.LoadPart(ctx, "acme", p.Commit, PartName(0), true)
	if err != nil {
		t.Fatal(err)
	}
	if back.Commit != "c1" || back.Segment.Len() != ix.Segment.Len() || back.Vectors.Len() != ix.Vectors.Len() || len(back.Files) != len(ix.Files) {
		t.Errorf("read back %s: %d chunks, %d vectors", back.Commit, back.Segment.Len(), back.Vectors.Len())
	}
	if _, _, err := s.Pointer(ctx, "other", ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another repository sees an index: %v", err)
	}

	// Memory vectors: conditional writes.
	mv, tag, err := s.MemoryVectors(ctx, "acme", emb.Model(), "")
	if err != nil || mv.Len() != 0 || tag != "" {
		t.Fatalf("no memory vectors yet: %d, %q, %v", mv.Len(), tag, err)
	}
	_ = mv.Add(contextindex.TextHash("x"), []float32{1, 0})
	tag1, err := s.SaveMemoryVectors(ctx, "acme", mv, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, ""); !errors.Is(err, ErrPrecondition) {
		t.Errorf("second create: %v, want ErrPrecondition", err)
	}
	_ = mv.Add(contextindex.TextHash("y"), []float32{0, 1})
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, tag1); err != nil {
		t.Errorf("update with the current ETag: %v", err)
	}
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, tag1); !errors.Is(err, ErrPrecondition) {
		t.Errorf("update with a stale ETag: %v, want ErrPrecondition", err)
	}
	got, _, err := s.MemoryVectors(ctx, "acme", emb.Model(), "")
	if err != nil || got.Len() != 2 {
		t.Errorf("memory vectors: %v, %v", got, err)
	}
	if _, err := s.Publish(ctx, "../x", m); err == nil {
		t.Error("a repository key that is not a key (reposcope.CheckKey) was accepted")
	}
}

func TestStoreMem(t *testing.T) {
	testStore(t, &MemBlobs{})
	t.Run("parts", func(t *testing.T) { testParts(t, &MemBlobs{}) })
	t.Run("build record", func(t *testing.T) { testBuildRecord(t, &MemBlobs{}) })
	t.Run("publish order", func(t *testing.T) { testPublishOrder(t, &MemBlobs{}) })
}

// TestAddMemoryVectors embeds only new texts and survives a concurrent
// writer.
func TestAddMemoryVectors(t *testing.T) {
	ctx := context.Background()
	s := NewStore(&MemBlobs{})
	srv, emb := embedtest.Start(t)
	notes := notesOf("JWT tokens in httpOnly cookies", "token refresh under a mutex", "a refresh race fixed",
		"PostgreSQL for billing", "billing tables migrated", "workers batch their writes")
	docs := notes[:3]
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, docs); err != nil || n != 3 {
		t.Fatalf("first: %d, %v", n, err)
	}
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, notes[:4]); err != nil || n != 1 {
		t.Fatalf("one more: %d, %v", n, err)
	}
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, notes[:4]); err != nil || n != 0 || srv.Texts.Load() != 4 {
		t.Fatalf("nothing new: %d, %v; %d texts embedded in all", n, err, srv.Texts.Load())
	}
	// Two writers at once: both documents end up stored.
	done := make(chan error, 2)
	for _, d := range []contextindex.Doc{notes[4], notes[5]} {
		go func() {
			_, err := s.AddMemoryVectors(ctx, "acme", emb, []contextindex.Doc{d})
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	v, _, _ := s.MemoryVectors(ctx, "acme", emb.Model(), "")
	if v.Len() != 6 {
		t.Errorf("%d vectors stored, want 6", v.Len())
	}
}

// TestOlderFormatIsNoIndex: a pointer to an index of an older format
// (the first one, in testdata/index-v1, has no format) is as good as none,
// so the index is built anew.
func TestOlderFormatIsNoIndex(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "acme", "abc123"), 0o755)
	for _, name := range []string{"chunks.json.gz", contextindex.LexicalFile} {
		data, err := os.ReadFile(filepath.Join("testdata/index-v1", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "acme", "abc123", name), data, 0o644)
	}
	os.WriteFile(filepath.Join(root, "acme", PointerFile), []byte(`{"commit":"abc123","builtAt":"2025-01-01T10:00:00Z","chunks":6}`), 0o644)
	s := NewStore(&DirBlobs{Root: root})
	if _, _, err := s.Pointer(t.Context(), "acme", ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pointer to a version 1 index: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.CurrentCode(t.Context(), "acme"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("current code index of version 1: %v, want fs.ErrNotExist", err)
	}
}

// snapshot is every file under dir, at commit.
func snapshot(t *testing.T, dir, commit string) contextindex.Snapshot {
	snap := contextindex.Snapshot{FS: os.DirFS(dir), Commit: commit}
	for _, p := range repotest.Files(t, dir) {
		snap.Files = append(snap.Files, contextindex.File{Path: p})
	}
	return snap
}

// notesOf makes a discovery of each text.
func notesOf(texts ...string) []contextindex.Doc {
	out := make([]contextindex.Doc, len(texts))
	for i, text := range texts {
		out[i] = contextindex.Doc{ID: fmt.Sprint(i), Source: contextindex.SourceDiscovery, Type: contextindex.TypePattern, Content: text}
	}
	return out
}

func day(d int) time.Time { return time.Date(2025, 1, d, 10, 0, 0, 0, time.UTC) }
