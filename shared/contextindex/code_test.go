package contextindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// dirSnapshot lists every regular file under root as a snapshot (the
// repository walker's job in production; test directories hold only
// source files).
func dirSnapshot(t *testing.T, root string) Snapshot {
	t.Helper()
	fsys := os.DirFS(root)
	var files []File
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, File{Path: p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return Snapshot{FS: fsys, Files: files}
}

func TestBuildCodeMapFS(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":            {Data: []byte("# Toolshed\n\nTools for agents.\n\n## Auth\n\nKeys are hashed.\n")},
		"src/auth/token.go":    {Data: []byte("package auth\n\n// Sign signs a token.\nfunc Sign() {}\n\n// Verify checks a token signature.\nfunc Verify() {}\n")},
		"scripts/deploy.sh":    {Data: []byte("#!/bin/sh\nset -e\nmake deploy\n")},
		"src/auth/empty.go":    {Data: []byte("  \n")},
		"src/auth/notindexed":  {Data: []byte("the walker did not list this file")},
		"src/billing/plans.go": {Data: []byte("package billing\n\n// Plan is a subscription plan.\ntype Plan struct{}\n")},
	}
	snap := Snapshot{FS: fsys, Commit: "abc123", Files: []File{
		{Path: "README.md"}, {Path: "src/auth/token.go"}, {Path: "scripts/deploy.sh"},
		{Path: "src/auth/empty.go"}, {Path: "src/billing/plans.go", Content: []byte("package billing\n\n// Plan is a plan.\ntype Plan struct{}\n")},
	}}
	ix, st, err := BuildCode(context.Background(), nil, snap, nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range Docs(ix.Segment) {
		got = append(got, d.ID+" "+d.Type+" "+d.Module)
	}
	want := []string{
		"README.md:1-3 section ", "README.md:5-7 section ",
		"scripts/deploy.sh:1-3 block scripts",
		"src/auth/token.go:3-4 func src/auth", "src/auth/token.go:6-7 func src/auth",
		"src/billing/plans.go:3-4 type src/billing",
	}
	if !slices.Equal(got, want) {
		t.Errorf("chunks:\n%q\nwant\n%q", got, want)
	}
	if st != (BuildStats{Files: 5, Rechunked: 5, Chunks: 6}) || ix.Commit != "abc123" || ix.Vectors != nil {
		t.Errorf("stats %+v commit %s", st, ix.Commit)
	}
	// Given content wins over the file system's.
	if d := ix.Segment.Doc(5); !strings.Contains(d.Content, "Plan is a plan.") {
		t.Errorf("content of plans.go read from the FS: %q", d.Content)
	}
	hits, _ := NewCorpus("", []*Segment{ix.Segment}).Search(Query{Text: "verify signature"})
	if len(hits) == 0 || hits[0].Doc.ID != "src/auth/token.go:6-7" {
		t.Errorf("search: %v", ids(hits))
	}
	if _, _, err := BuildCode(context.Background(), nil, Snapshot{FS: fsys, Files: []File{{Path: "missing.go"}}}, nil, day(1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestBuildCodeIncremental builds a real directory (packages of the Go
// tree), changes one file and adds another, and checks that only those
// are cut and embedded again, and that the rebuilt index equals a fresh
// build.
func TestBuildCodeIncremental(t *testing.T) {
	dir := repotest.GoPackages(t, "strings", "bytes", "unicode/utf8", "container/list")
	ctx := context.Background()
	emb := &wordEmbedder{}
	first, st, err := BuildCode(ctx, nil, dirSnapshot(t, dir), emb, day(1))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != st.Files || st.Chunks < 200 || st.Embedded != emb.count() || first.Vectors.Len() == 0 {
		t.Fatalf("first build: %+v, %d vectors", st, first.Vectors.Len())
	}
	if !strings.HasPrefix(first.Commit, "tree-") {
		t.Errorf("working tree version %q", first.Commit)
	}

	// Unchanged: nothing is cut or embedded.
	before := emb.count()
	same, st, err := BuildCode(ctx, first, dirSnapshot(t, dir), emb, day(2))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != 0 || st.Embedded != 0 || emb.count() != before || same.Commit != first.Commit {
		t.Errorf("unchanged tree: %+v, commit %s → %s", st, first.Commit, same.Commit)
	}

	// One changed declaration, one new file.
	p := filepath.Join(dir, "container", "list", "list.go")
	data, _ := os.ReadFile(p)
	changed := strings.Replace(string(data), "// Len returns the number of elements", "// Len counts the elements", 1)
	if changed == string(data) {
		t.Fatal("list.go has no Len comment to change")
	}
	os.WriteFile(p, []byte(changed), 0o644)
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# Notes\n\nLinked lists are doubly linked.\n"), 0o644)
	next, st, err := BuildCode(ctx, same, dirSnapshot(t, dir), emb, day(3))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != 2 || st.Embedded != 2 {
		t.Errorf("after changing one declaration and adding a file: %+v; want 2 files cut, 2 chunks embedded", st)
	}
	if next.Commit == first.Commit {
		t.Error("the version did not change with the files")
	}
	fresh, _, err := BuildCode(ctx, nil, dirSnapshot(t, dir), &wordEmbedder{}, day(3))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(Docs(next.Segment), Docs(fresh.Segment), func(a, b Doc) bool { return a.ID == b.ID && a.Content == b.Content }) {
		t.Error("the incremental build differs from a fresh one")
	}
	if next.Vectors.Len() != fresh.Vectors.Len() {
		t.Errorf("incremental build has %d vectors, a fresh one %d", next.Vectors.Len(), fresh.Vectors.Len())
	}
}

// TestStoreDir saves an index in a directory, reads it back through the
// pointer, and revalidates by ETag.
func TestStoreDir(t *testing.T) {
	testStore(t, &DirBlobs{Root: t.TempDir()})
	t.Run("parts", func(t *testing.T) { testParts(t, &DirBlobs{Root: t.TempDir()}) })
	t.Run("build record", func(t *testing.T) { testBuildRecord(t, &DirBlobs{Root: t.TempDir()}) })
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
}

func testStore(t *testing.T, blobs Blobs) {
	t.Helper()
	ctx := context.Background()
	s := NewStore(blobs)
	if _, err := s.CurrentCode(ctx, "acme"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no index yet: got %v, want fs.ErrNotExist", err)
	}
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	ix, _, err := BuildCode(ctx, nil, Snapshot{FS: os.DirFS(dir), Commit: "c1", Files: dirSnapshot(t, dir).Files}, &wordEmbedder{}, day(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCode(ctx, "acme", ix); err != nil {
		t.Fatal(err)
	}
	p, etag, err := s.Pointer(ctx, "acme", "")
	if err != nil || p.Commit != "c1" || p.Chunks != ix.Segment.Len() || p.Model != "test-words/64" {
		t.Fatalf("pointer %+v, %v", p, err)
	}
	if _, _, err := s.Pointer(ctx, "acme", etag); !errors.Is(err, ErrNotModified) {
		t.Errorf("revalidation with the current ETag: %v, want ErrNotModified", err)
	}
	back, err := s.CurrentCode(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if back.Commit != "c1" || back.Segment.Len() != ix.Segment.Len() || back.Vectors.Len() != ix.Vectors.Len() ||
		!back.BuiltAt.Equal(ix.BuiltAt) || len(back.Files) != len(ix.Files) {
		t.Errorf("read back %s: %d chunks, %d vectors", back.Commit, back.Segment.Len(), back.Vectors.Len())
	}
	if _, err := s.CurrentCode(ctx, "other"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another tenant sees an index: %v", err)
	}

	// Memory vectors: conditional writes.
	mv, tag, err := s.MemoryVectors(ctx, "acme", "test-words/64", "")
	if err != nil || mv.Len() != 0 || tag != "" {
		t.Fatalf("no memory vectors yet: %d, %q, %v", mv.Len(), tag, err)
	}
	_ = mv.Add(TextHash("x"), []float32{1, 0})
	tag1, err := s.SaveMemoryVectors(ctx, "acme", mv, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, ""); !errors.Is(err, ErrPrecondition) {
		t.Errorf("second create: %v, want ErrPrecondition", err)
	}
	_ = mv.Add(TextHash("y"), []float32{0, 1})
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, tag1); err != nil {
		t.Errorf("update with the current ETag: %v", err)
	}
	if _, err := s.SaveMemoryVectors(ctx, "acme", mv, tag1); !errors.Is(err, ErrPrecondition) {
		t.Errorf("update with a stale ETag: %v, want ErrPrecondition", err)
	}
	got, _, err := s.MemoryVectors(ctx, "acme", "test-words/64", "")
	if err != nil || got.Len() != 2 {
		t.Errorf("memory vectors: %v, %v", got, err)
	}
	if err := s.SaveCode(ctx, "../x", ix); err == nil {
		t.Error("a tenant that is not one path segment was accepted")
	}
}

func TestStoreMem(t *testing.T) {
	testStore(t, &MemBlobs{})
	t.Run("parts", func(t *testing.T) { testParts(t, &MemBlobs{}) })
	t.Run("build record", func(t *testing.T) { testBuildRecord(t, &MemBlobs{}) })
}

// TestAddMemoryVectors embeds only new texts and survives a concurrent
// writer.
func TestAddMemoryVectors(t *testing.T) {
	ctx := context.Background()
	s := NewStore(&MemBlobs{})
	emb := &wordEmbedder{}
	docs := notes[:3]
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, docs); err != nil || n != 3 {
		t.Fatalf("first: %d, %v", n, err)
	}
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, notes[:4]); err != nil || n != 1 {
		t.Fatalf("one more: %d, %v", n, err)
	}
	if n, err := s.AddMemoryVectors(ctx, "acme", emb, notes[:4]); err != nil || n != 0 || emb.count() != 4 {
		t.Fatalf("nothing new: %d, %v; %d texts embedded in all", n, err, emb.count())
	}
	// Two writers at once: both documents end up stored.
	done := make(chan error, 2)
	for _, d := range []Doc{notes[4], notes[5]} {
		go func() {
			_, err := s.AddMemoryVectors(ctx, "acme", emb, []Doc{d})
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

// TestEncodeRoundTrip stores an index of real packages and reads it
// back: the same chunks (lines, byte offsets, kinds, dates, text) and the
// same answers.
func TestEncodeRoundTrip(t *testing.T) {
	dir := repotest.GoPackages(t, "strings", "container/list")
	// Names longer than the tokenizer takes.
	long := "package list\n\n// Long has long names.\ntype " + strings.Repeat("L", 3*maxTokenBytes) + " struct{}\n\nfunc (" + strings.Repeat("L", 3*maxTokenBytes) + ") " + strings.Repeat("M", 3*maxTokenBytes) + "() {}\n"
	os.WriteFile(filepath.Join(dir, "container/list/long.go"), []byte(long), 0o644)
	snap := dirSnapshot(t, dir)
	for i := range snap.Files {
		snap.Files[i].ModTime = day(i%28 + 1)
	}
	ix, _, err := BuildCode(context.Background(), nil, snap, nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	files, err := encode(ix)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeSegment(files[ChunksFile], files[LexicalFile])
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back.code.hashes(), ix.Files) {
		t.Errorf("read back %d files, want %d", len(back.code.hashes()), len(ix.Files))
	}
	if !slices.Equal(Docs(back), Docs(ix.Segment)) {
		t.Errorf("the chunks differ after decoding")
	}
	for _, q := range []string{"split a string around separators", "doubly linked list", "Builder Grow"} {
		a, _ := NewCorpus("", []*Segment{ix.Segment}).Search(Query{Text: q})
		b, _ := NewCorpus("", []*Segment{back}).Search(Query{Text: q})
		if !slices.EqualFunc(a, b, func(x, y Hit) bool {
			return x.Doc.ID == y.Doc.ID && x.Score == y.Score && x.Doc.Content == y.Doc.Content
		}) {
			t.Errorf("%q: %v after decoding, %v before", q, ids(b), ids(a))
		}
	}
	for name, data := range files {
		if name == VectorsFile {
			continue
		}
		for _, cut := range []int{len(data) / 2, len(data) - 1, len(data) - 9} {
			bad := maps.Clone(files)
			bad[name] = data[:cut]
			if _, err := decodeSegment(bad[ChunksFile], bad[LexicalFile]); err == nil {
				t.Errorf("%s cut at %d of %d bytes was accepted", name, cut, len(data))
			}
		}
	}
}

// TestOlderFormatIsNoIndex: a pointer to an index of an older format
// (the first one, in testdata/index-v1, has no format) is as good as none,
// so the index is built anew.
func TestOlderFormatIsNoIndex(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "acme", "abc123"), 0o755)
	for _, name := range []string{"chunks.json.gz", LexicalFile} {
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

// encode returns the files of a stored index.
func encode(ix *CodeIndex) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, write := range ix.writers() {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return nil, err
		}
		out[name] = b.Bytes()
	}
	return out, nil
}

// TestBuildCodeSameOnAnyCores: the index of a tree is the same byte for
// byte whether one core or several cut it, and as a segment made at once
// of the same files.
func TestBuildCodeSameOnAnyCores(t *testing.T) {
	snap := dirSnapshot(t, repotest.GoPackages(t, "strings", "bytes", "container/list", "bufio", "sort"))
	snap.Commit = "c1"
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda")
	for i := range 3*buildBatch + 17 { // several batches, the last one short
		text := fmt.Sprintf("package p%d\n\n// F%d: %s and %s.\nfunc F%d() {}\n", i%7, i, words[i%11], words[i*7%11], i)
		if i%5 == 0 {
			text = fmt.Sprintf("# Note %d\n\n%s %s\n", i, words[i%11], words[(i+3)%11])
		}
		snap.Files = append(snap.Files, File{Path: fmt.Sprintf("gen/%03d/f%d.go", i%13, i), Content: []byte(text), ModTime: day(i%28 + 1)})
	}
	build := func(cores int) map[string][]byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores))
		ix, _, err := BuildCode(t.Context(), nil, snap, nil, day(1))
		if err != nil {
			t.Fatal(err)
		}
		files, err := encode(ix)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	one, four := build(1), build(4)
	for name := range one {
		if !bytes.Equal(one[name], four[name]) {
			t.Errorf("%s differs between 1 and 4 cores", name)
		}
	}
	b := newCodeBuilder()
	sorted := slices.SortedFunc(slices.Values(snap.Files), func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range sorted {
		content, err := readContent(snap, f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(content)
		b.addFile(f.Path, sha256.Sum256(content), f.ModTime, textSource{plain: text}, codechunk.Split(f.Path, text))
	}
	whole, err := encode(&CodeIndex{Segment: b.segment()})
	if err != nil {
		t.Fatal(err)
	}
	for name := range whole {
		if !bytes.Equal(one[name], whole[name]) {
			t.Errorf("%s differs from a segment made at once", name)
		}
	}
}

func TestMergeFrom(t *testing.T) {
	tests := []struct {
		sizes     []int
		maxChunks int
		want      int
	}{
		{nil, 100, 0},
		{[]int{10}, 100, 1},
		{[]int{10, 10}, 100, 0},         // the last holds half of the one before, and more
		{[]int{10, 4}, 100, 2},          // less than half
		{[]int{40, 20, 10, 10}, 100, 0}, // the last two hold half of 20, the last three half of 40
		{[]int{40, 20, 10, 10}, 50, 1},  // but all of them would be too many
		{[]int{100, 10, 10}, 1000, 1},
		{[]int{0, 0}, 100, 0},
	}
	for _, tt := range tests {
		var parts []Part
		for _, n := range tt.sizes {
			parts = append(parts, Part{Seg: &Segment{docs: make([]Doc, n)}})
		}
		if got := mergeFrom(parts, tt.maxChunks); got != tt.want {
			t.Errorf("mergeFrom(%v, %d) = %d, want %d", tt.sizes, tt.maxChunks, got, tt.want)
		}
	}
}
