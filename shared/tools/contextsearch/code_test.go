package contextsearch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/contextindex/memorydoc"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/contextsearch"
	"github.com/toolshed/toolshed/shared/wiring"
)

// TestLocalCode: locally the code index of the repository is built in
// the background from the start, persisted under the data directory,
// follows changes to the files within moments, and is searched with the
// module filter; code results are cut and name their lines.
func TestLocalCode(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list", "container/ring", "sort")
	data := t.TempDir()
	st := tooltest.BoltStores(t)
	h := newHarness(t, st, contextsearch.Options{
		Blobs: &indexfile.DirBlobs{Root: filepath.Join(data, "index")}, Mode: wiring.CodeIndexLive,
		Repo: repotest.Local(t, dir),
	})
	h.svc.Start(context.Background(), "local")
	h.svc.Settle()
	// No memory entries at all: the code alone is searchable.
	out := h.search(t, "local", `{"query":"doubly linked list","module":"container"}`)
	if len(out.Results) == 0 || out.Results[0].Source != "code" || !strings.HasPrefix(out.Results[0].ID, "container/list/list.go:") {
		t.Fatalf("first use: %+v", out.Results)
	}
	for _, r := range out.Results {
		if !strings.HasPrefix(*r.Module, "container/") || len(r.Content) > 2010 || r.Date == nil {
			t.Errorf("result %s: module %s, %d bytes, date %v", r.ID, *r.Module, len(r.Content), r.Date)
		}
	}

	// A new file, not committed, is found within moments; an edit and a
	// delete too.
	zebra := filepath.Join(dir, "sort", "zebra.go")
	os.WriteFile(zebra, []byte("package sort\n\n// Zebra stripes a slice.\nfunc Zebra() {}\n"), 0o644)
	out = h.eventually(t, "local", `{"query":"zebra stripes"}`, func(o output) bool { return len(o.Results) > 0 })
	if out.Results[0].ID != "sort/zebra.go:3-4" || out.Results[0].Type != "function" {
		t.Errorf("new file: %+v", out.Results)
	}
	os.WriteFile(zebra, []byte("package sort\n\n// Okapi stripes a slice.\nfunc Okapi() {}\n"), 0o644)
	h.eventually(t, "local", `{"query":"okapi stripes"}`, func(o output) bool {
		return len(o.Results) > 0 && strings.Contains(o.Results[0].Content, "Okapi")
	})
	for _, r := range h.search(t, "local", `{"query":"zebra stripes"}`).Results {
		if strings.Contains(r.Content, "Zebra") {
			t.Errorf("the edited file's old chunk is still found: %+v", r)
		}
	}
	os.Remove(zebra)
	h.eventually(t, "local", `{"query":"okapi stripes"}`, func(o output) bool { return len(o.Results) == 0 })

	// A new process finds the persisted index at once.
	os.WriteFile(zebra, []byte("package sort\n\n// Zebra stripes a slice.\nfunc Zebra() {}\n"), 0o644)
	h.eventually(t, "local", `{"query":"zebra stripes"}`, func(o output) bool { return len(o.Results) > 0 })
	h.svc.Close() // saves the index
	h2 := newHarness(t, st, contextsearch.Options{Blobs: &indexfile.DirBlobs{Root: filepath.Join(data, "index")}, Mode: wiring.CodeIndexLive,
		Repo: repotest.Local(t, dir)})
	h2.svc.Start(context.Background(), "local")
	h2.svc.Settle()
	if out := h2.search(t, "local", `{"query":"zebra stripes"}`); len(out.Results) == 0 {
		t.Error("a new process does not find the saved index")
	}
}

// eventually searches until ok holds, for at most the freshness the tools
// promise (2 s), and returns the last answer.
func (h harness) eventually(t *testing.T, tenant, args string, ok func(output) bool) output {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		out := h.search(t, tenant, args)
		if ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within 2 s: %+v", args, out.Results)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestS3 runs the tests that read indexes from S3 on one moto_server.
func TestS3(t *testing.T) {
	m := emulator.StartMoto(t)
	newBlobs := func(t *testing.T) *indexfile.S3Blobs {
		return &indexfile.S3Blobs{Bucket: objects.New(m.S3(), m.NewBucket(t)), Prefix: indexfile.BucketPrefix}
	}
	t.Run("deployed", func(t *testing.T) { testDeployedS3(t, newBlobs(t)) })
	t.Run("default repository", func(t *testing.T) { testDefaultRepositoryIndex(t, newBlobs(t)) })
	t.Run("parts", func(t *testing.T) { testStoredParts(t, newBlobs(t)) })
	t.Run("embedding", func(t *testing.T) { testStoredEmbedding(t, newBlobs(t)) })
}

// heldBlobs holds the reads of the objects under a prefix until release
// is closed.
type heldBlobs struct {
	indexfile.Blobs
	hold    string
	release chan struct{}
}

func (h *heldBlobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	if strings.Contains(key, h.hold) {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
	return h.Blobs.Get(ctx, key, etag)
}

// testStoredParts: an index built in batches is read in parts, shared by
// the tenants that read it. A call while a part is still being read
// answers within its time from the others, saying the index is loading;
// while a newer snapshot is indexed, the index before is searched and the
// answer says how far the new one is.
func testStoredParts(t *testing.T, blobs *indexfile.S3Blobs) {
	ctx := context.Background()
	idx := indexfile.NewStore(blobs)
	infos := saveParts(t, idx, "container/list/", "container/ring/")
	if _, err := idx.Publish(ctx, "shared", indexfile.Manifest{Commit: "c1", BuiltAt: time.Now(), Parts: infos}); err != nil {
		t.Fatal(err)
	}
	held := &heldBlobs{Blobs: blobs, hold: "shared/c1/part-0001/", release: make(chan struct{})}
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: held, DefaultRepo: "shared"})
	start := time.Now()
	out := h.search(t, "acme", `{"query":"doubly linked list"}`)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("a call while a part is read took %v", took)
	}
	if out.Index.State != "loading" || out.Index.FilesIndexed != infos[0].Files || out.Index.FilesTotal != infos[0].Files+infos[1].Files ||
		len(out.Results) == 0 || !strings.HasPrefix(out.Results[0].ID, "container/list/") || !strings.Contains(out.Notice, "being loaded") {
		t.Errorf("while part 1 is read: %+v", out)
	}
	close(held.release)
	h.svc.Settle()
	out = h.search(t, "beta", `{"query":"ring of elements"}`)
	if out.Index.State != "ready" || out.Index.Commit != "c1" || out.Index.FilesIndexed != out.Index.FilesTotal ||
		out.Index.Chunks != infos[0].Chunks+infos[1].Chunks || !strings.HasPrefix(out.Results[0].ID, "container/ring/") || out.Notice != "" {
		t.Errorf("read whole: %+v", out)
	}

	// The indexer builds a newer snapshot.
	_, err := idx.UpdateBuild(ctx, "shared", func(b *indexfile.Build) bool {
		*b = indexfile.Build{Commit: "c2", State: indexfile.BuildRunning, Batches: 4, Files: 9, Started: time.Now(), Updated: time.Now(),
			Done: []indexfile.PartInfo{{Name: indexfile.PartName(0), Chunks: 12}}}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	out = h.search(t, "acme", `{"query":"ring of elements"}`)
	if b := out.Index.Build; out.Index.State != "building" || out.Index.Commit != "c1" || b == nil || b.Commit != "c2" || b.BatchesDone != 1 ||
		b.Batches != 4 || b.Chunks != 12 || !strings.Contains(out.Notice, "commit c2") || len(out.Results) == 0 {
		t.Errorf("while c2 is built: %+v %+v", out, out.Index.Build)
	}
}

// saveParts saves commit c1 of the repository "shared" as the indexer
// builds it: one part a package (of the Go tree's), searchable by words,
// each chunk waiting for its vector.
func saveParts(t *testing.T, idx *indexfile.Store, pkgs ...string) []indexfile.PartInfo {
	t.Helper()
	ctx := context.Background()
	snap, _ := (&dirSource{root: repotest.GoPackages(t, pkgs...)}).Open(ctx, "acme")
	var infos []indexfile.PartInfo
	for n, pkg := range pkgs {
		files := slices.DeleteFunc(slices.Clone(snap.Files), func(f contextindex.File) bool { return !strings.HasPrefix(f.Path, pkg) })
		ix, st, err := contextindex.BuildCode(ctx, nil, contextindex.Snapshot{FS: snap.FS, Commit: "c1", Files: files}, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.SavePart(ctx, "shared", "c1", indexfile.PartName(n), ix); err != nil {
			t.Fatal(err)
		}
		infos = append(infos, indexfile.PartInfo{Name: indexfile.PartName(n), First: files[0].Path, Last: files[len(files)-1].Path,
			Files: len(files), Chunks: st.Chunks, Pending: st.Chunks})
	}
	return infos
}

// embedPart gives part n of c1 its vectors, as the index worker does once
// the index is published, and publishes the index again.
func embedPart(t *testing.T, idx *indexfile.Store, emb contextindex.Embedder, m *indexfile.Manifest, n int) {
	t.Helper()
	ctx := context.Background()
	code, err := idx.LoadPart(ctx, "shared", "c1", indexfile.PartName(n), true)
	if err != nil {
		t.Fatal(err)
	}
	code.ReuseVectors(emb.Model())
	texts, _ := code.Missing()
	if _, err := code.Vectors.EmbedMissing(ctx, emb, texts, 32); err != nil {
		t.Fatal(err)
	}
	if err := idx.SavePartVectors(ctx, "shared", "c1", indexfile.PartName(n), code.Vectors); err != nil {
		t.Fatal(err)
	}
	m.Parts[n].Vectors, m.Parts[n].Embedded, m.Parts[n].Pending = m.Parts[n].Chunks, m.Parts[n].Chunks, 0
	if _, err := idx.Publish(ctx, "shared", *m); err != nil {
		t.Fatal(err)
	}
}

// readBlobs records the keys read.
type readBlobs struct {
	indexfile.Blobs
	mu   sync.Mutex
	keys []string
}

func (r *readBlobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	r.mu.Lock()
	r.keys = append(r.keys, key)
	r.mu.Unlock()
	return r.Blobs.Get(ctx, key, etag)
}

// take returns the keys read since the last take.
func (r *readBlobs) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := r.keys
	r.keys = nil
	return keys
}

// testStoredEmbedding: deployed, an index is published as soon as its
// parts are built, searchable by words, and embedded part by part after.
// Meanwhile context_search answers lexically with one notice that says
// exactly how far the embedding is (none embedded included); each part's
// vectors publish the index again, of which the function reads only the
// manifest and the new vectors; once every part has them the search is
// hybrid, with no notice.
func testStoredEmbedding(t *testing.T, s3 *indexfile.S3Blobs) {
	ctx := context.Background()
	blobs := &readBlobs{Blobs: s3}
	idx := indexfile.NewStore(blobs)
	_, emb := embedtest.Start(t)
	m := indexfile.Manifest{Commit: "c1", BuiltAt: time.Now(), Model: emb.Model(), Parts: saveParts(t, idx, "container/list/", "container/ring/")}
	if _, err := idx.Publish(ctx, "shared", m); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: blobs, DefaultRepo: "shared", Embedder: emb, Revalidate: time.Nanosecond})
	chunks := m.Parts[0].Chunks + m.Parts[1].Chunks
	notice := func(vectors int) string {
		return fmt.Sprintf("Semantic: %d%% of code chunks embedded (%d of %d; %d are still being embedded): results are ranked by meaning among those, and lexically for the rest.",
			vectors*100/chunks, vectors, chunks, chunks-vectors)
	}
	search := func() output {
		h.svc.Settle()
		return h.search(t, "acme", `{"query":"ring of elements"}`)
	}
	out := search()
	if out.Mode != "lexical" || out.Index.Vectors != 0 || out.Index.Chunks != chunks || out.Notice != notice(0) || len(out.Results) == 0 {
		t.Errorf("nothing embedded: mode %s, index %+v, notice %q; want %q", out.Mode, out.Index, out.Notice, notice(0))
	}
	embedPart(t, idx, emb, &m, 1)
	blobs.take()
	search() // takes the new pointer, reads the vectors
	out = search()
	var parts []string
	for _, k := range blobs.take() {
		if strings.Contains(k, "/part-") {
			parts = append(parts, k[strings.Index(k, "/part-")+1:])
		}
	}
	if want := []string{"part-0001/" + contextindex.VectorsFile}; !slices.Equal(parts, want) {
		t.Errorf("read of the parts once part 1 is embedded: %q, want %q", parts, want)
	}
	if v := m.Parts[1].Chunks; out.Mode != "hybrid" || out.Index.Vectors != v || out.Index.Pending != m.Parts[0].Chunks || out.Notice != notice(v) {
		t.Errorf("part 1 embedded: mode %s, index %+v, notice %q; want %q", out.Mode, out.Index, out.Notice, notice(v))
	}
	embedPart(t, idx, emb, &m, 0)
	search()
	out = search()
	if out.Mode != "hybrid" || out.Index.Vectors != chunks || out.Index.Pending != 0 || out.Notice != "" {
		t.Errorf("embedded: mode %s, index %+v, notice %q", out.Mode, out.Index, out.Notice)
	}
}

// testDeployedS3 reads indexes the indexer keeps in S3: the code index
// through its pointer, revalidated by ETag, and memory vectors.
func testDeployedS3(t *testing.T, blobs *indexfile.S3Blobs) {
	ctx := context.Background()
	idx := indexfile.NewStore(blobs)
	repo := repotest.GoPackages(t, "container/list")
	snap, _ := (&dirSource{root: repo}).Open(ctx, "acme")
	snap.Commit = "c1"
	ix, _, err := contextindex.BuildCode(ctx, nil, snap, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	publishWhole(t, idx, "acme", ix)
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: blobs})
	out := h.search(t, "acme", `{"query":"doubly linked list"}`)
	if len(out.Results) == 0 || !strings.HasPrefix(out.Results[0].ID, "container/list/list.go:") {
		t.Fatalf("code from S3: %+v", out.Results)
	}
	h.Fail(t, "zeta", contextsearch.Tool, `{"query":"doubly linked list"}`, toolerr.ResourceNotFound)

	// A new snapshot: the next call revalidates the pointer and loads it.
	os.WriteFile(filepath.Join(repo, "container", "list", "zebra.go"), []byte("package list\n\n// Zebra stripes a list.\nfunc Zebra() {}\n"), 0o644)
	snap, _ = (&dirSource{root: repo}).Open(ctx, "acme")
	snap.Commit = "c2"
	ix2, st, err := contextindex.BuildCode(ctx, ix, snap, nil, time.Now())
	if err != nil || st.Rechunked != 1 {
		t.Fatalf("incremental build: %+v %v", st, err)
	}
	publishWhole(t, idx, "acme", ix2)
	// The next call finds the new pointer and loads the index in the
	// background, serving the one in hand meanwhile.
	h.search(t, "acme", `{"query":"zebra stripes"}`)
	h.svc.Settle()
	out = h.search(t, "acme", `{"query":"zebra stripes"}`)
	if len(out.Results) == 0 || out.Results[0].ID != "container/list/zebra.go:3-4" {
		t.Errorf("after publishing c2: %+v", out.Results)
	}
	// Hybrid: vectors of the code (built by the indexer) and of memory
	// entries (written from the stream) are read from S3; the tool only
	// embeds the query.
	srv, emb := embedtest.Start(t)
	ix3, _, err := contextindex.BuildCode(ctx, ix2, snap, emb, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	publishWhole(t, idx, "acme", ix3)
	st2 := tooltest.BoltStores(t)
	h = newHarness(t, st2, contextsearch.Options{Blobs: blobs, Embedder: emb})
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-01-15T10:00:00Z","type":"rule","module":"container/list","content":"Never copy a List value"}`)
	page, _ := st2.Memory.List(ctx, "acme", memoryfile.Decisions, store.MemoryQuery{})
	doc, _ := memorydoc.Of(page.Entries[0])
	if _, err := idx.AddMemoryVectors(ctx, "acme", emb, []contextindex.Doc{doc}); err != nil {
		t.Fatal(err)
	}
	before := srv.Texts.Load()
	out = h.search(t, "acme", `{"query":"copy a list"}`)
	if out.Mode != "hybrid" || len(out.Results) == 0 {
		t.Fatalf("hybrid from S3: %+v", out)
	}
	if got := srv.Texts.Load() - before; got != 1 {
		t.Errorf("the tool embedded %d texts, want only the query", got)
	}
}

// publishWhole publishes ix as the repository's code index, of one part,
// as the indexer publishes the parts it built.
func publishWhole(t *testing.T, idx *indexfile.Store, repoKey string, ix *contextindex.CodeIndex) {
	t.Helper()
	ctx := context.Background()
	if err := idx.SavePart(ctx, repoKey, ix.Commit, indexfile.PartName(0), ix); err != nil {
		t.Fatal(err)
	}
	m := indexfile.Manifest{Commit: ix.Commit, BuiltAt: ix.BuiltAt,
		Parts: []indexfile.PartInfo{{Name: indexfile.PartName(0), Files: len(ix.Files), Chunks: ix.Segment.Len()}}}
	if ix.Vectors != nil {
		m.Model, m.Parts[0].Vectors = ix.Vectors.Model, ix.Vectors.Len()
	}
	if _, err := idx.Publish(ctx, repoKey, m); err != nil {
		t.Fatal(err)
	}
}

// testDefaultRepositoryIndex: deployed, a tenant without a code index of
// its own searches the default repository's, as the other repository
// tools read its snapshot.
func testDefaultRepositoryIndex(t *testing.T, blobs *indexfile.S3Blobs) {
	ctx := context.Background()
	snap, _ := (&dirSource{root: repotest.GoPackages(t, "container/list")}).Open(ctx, "shared")
	snap.Commit = "c1"
	ix, _, err := contextindex.BuildCode(ctx, nil, snap, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	publishWhole(t, indexfile.NewStore(blobs), "shared", ix)
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: blobs, DefaultRepo: "shared"})
	out := h.search(t, "newcomer", `{"query":"doubly linked list"}`)
	if len(out.Results) == 0 || !strings.HasPrefix(out.Results[0].ID, "container/list/list.go:") {
		t.Fatalf("a tenant without an index: %+v", out.Results)
	}
	h = newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: blobs})
	h.Fail(t, "newcomer", contextsearch.Tool, `{"query":"doubly linked list"}`, toolerr.ResourceNotFound)
}

// blockingEmbedder holds every Embed call until release is closed, then
// fails it.
type blockingEmbedder struct{ release chan struct{} }

func (b blockingEmbedder) Model() string { return "blocking" }

func (b blockingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-b.release:
		return nil, errors.New("released")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestLocalCodeRestart: a new process serves the index an earlier one
// saved at once, while it brings the index up to date in the background,
// however long embedding what changed takes.
func TestLocalCodeRestart(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list")
	blobs := &indexfile.DirBlobs{Root: filepath.Join(t.TempDir(), "index")}
	st := tooltest.BoltStores(t)
	h := newHarness(t, st, contextsearch.Options{Blobs: blobs, Mode: wiring.CodeIndexLive, Repo: repotest.Local(t, dir)})
	h.svc.Start(context.Background(), "local")
	h.svc.Settle()
	h.svc.Close()

	// The files change while no server runs; the next one embeds slowly.
	os.WriteFile(filepath.Join(dir, "container", "list", "zebra.go"), []byte("package list\n\n// Zebra stripes a list.\nfunc Zebra() {}\n"), 0o644)
	emb := blockingEmbedder{release: make(chan struct{})}
	h2 := newHarness(t, st, contextsearch.Options{Blobs: blobs, Mode: wiring.CodeIndexLive, Repo: repotest.Local(t, dir), Embedder: emb})
	t.Cleanup(func() { close(emb.release) }) // before h2 settles
	out := h2.eventually(t, "local", `{"query":"doubly linked list"}`, func(o output) bool { return len(o.Results) > 0 })
	if !strings.HasPrefix(out.Results[0].ID, "container/list/list.go:") {
		t.Errorf("the saved index: %+v", out.Results)
	}
	h2.eventually(t, "local", `{"query":"zebra stripes"}`, func(o output) bool { return len(o.Results) > 0 })
}

// TestLocalCodeWhileEmbedding: while the local server embeds the chunks in
// the background, an answer counts them as pending and says they are
// still being embedded (not that they could not be).
func TestLocalCodeWhileEmbedding(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list")
	emb := blockingEmbedder{release: make(chan struct{})}
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Blobs: &indexfile.DirBlobs{Root: t.TempDir()},
		Mode: wiring.CodeIndexLive, Repo: repotest.Local(t, dir), Embedder: emb})
	t.Cleanup(func() { close(emb.release) })
	out := h.eventually(t, "local", `{"query":"doubly linked list"}`, func(o output) bool {
		return o.Index != nil && o.Index.State == "ready" && len(o.Results) > 0
	})
	want := fmt.Sprintf("Semantic: 0%% of code chunks embedded (0 of %d; %d are still being embedded)", out.Index.Chunks, out.Index.Chunks)
	if out.Index.Pending != out.Index.Chunks || !strings.HasPrefix(out.Notice, want) {
		t.Errorf("while embedding: index %+v, notice %q; want pending %d and a notice starting %q", out.Index, out.Notice, out.Index.Chunks, want)
	}
}

// TestLocalCodeIndexGoesWithItsView: once its repository's view is done
// (closed, here), the code index stops and is forgotten.
func TestLocalCodeIndexGoesWithItsView(t *testing.T) {
	view, err := repo.NewLocal(repotest.GoPackages(t, "container/list"), repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Mode: wiring.CodeIndexLive, Repo: repo.Shared{View: view}})
	h.svc.Start(context.Background(), "local")
	h.svc.Settle()
	if n := len(h.svc.LiveIndexes()); n != 1 {
		t.Fatalf("%d code indexes, want 1", n)
	}
	view.Close()
	for i := 0; len(h.svc.LiveIndexes()) > 0; i++ {
		if i == 1000 {
			t.Fatal("the code index of a closed view is still kept")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTenantsShareOneCodeIndex: every tenant reading the local repository
// searches the same code index, built once; only their discoveries are
// their own.
func TestTenantsShareOneCodeIndex(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list")
	st := tooltest.BoltStores(t)
	h := newHarness(t, st, contextsearch.Options{Mode: wiring.CodeIndexLive, Repo: repotest.Local(t, dir)})
	h.svc.Start(context.Background(), "alice")
	h.svc.Settle()
	h.write(t, "alice", memoryfile.Decisions, `{"timestamp":"2025-01-10T09:00:00Z","type":"decision","module":"list","content":"Alice keeps the doubly linked list"}`)
	a := h.search(t, "alice", `{"query":"doubly linked list"}`)
	b := h.search(t, "bob", `{"query":"doubly linked list"}`)
	if len(a.Results) == 0 || len(b.Results) == 0 || a.Index == nil || b.Index == nil || *a.Index != *b.Index || a.Index.State != "ready" {
		t.Fatalf("alice %+v / bob %+v", a, b)
	}
	if lives := h.svc.LiveIndexes(); len(lives) != 1 || lives[0].Builds.Load() != int64(a.Index.FilesTotal) {
		t.Errorf("%d code indexes; want one, each file cut once", len(lives))
	}
	for _, r := range b.Results {
		if r.Source != "code" {
			t.Errorf("bob sees alice's %s %s", r.Source, r.ID)
		}
	}
	if a.Results[0].Source != "discovery" && slices.IndexFunc(a.Results, func(r result) bool { return r.Source == "discovery" }) < 0 {
		t.Errorf("alice's decision is not among her results: %+v", a.Results)
	}
}

// TestAnswersWhileTheCodeIsIndexed: while the code index is being built
// (here, held back: the repository is not even read yet), context_search
// answers at once from what it has, discoveries always, says the index is
// building, and never waits for the build; once built, it says ready.
func TestAnswersWhileTheCodeIsIndexed(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list")
	held := repotest.NewHeld(repotest.Local(t, dir))
	st := tooltest.BoltStores(t)
	h := newHarness(t, st, contextsearch.Options{Mode: wiring.CodeIndexLive, Repo: held})
	h.write(t, "alice", memoryfile.Decisions, `{"timestamp":"2025-01-10T09:00:00Z","type":"decision","module":"list","content":"Keep the doubly linked list for the LRU cache"}`)

	start := time.Now()
	out := h.search(t, "alice", `{"query":"doubly linked list"}`)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the search waited %s for the build", took)
	}
	if out.Index == nil || out.Index.State != "building" || len(out.Results) != 1 || out.Results[0].Source != "discovery" ||
		!strings.Contains(out.Notice, "being built") {
		t.Fatalf("while building: %+v", out)
	}
	// Nothing at all yet for this tenant: an empty answer, not an error.
	if out := h.search(t, "bob", `{"query":"doubly linked list"}`); len(out.Results) != 0 || out.Index.State != "building" {
		t.Errorf("bob while building: %+v", out)
	}
	close(held.Release)
	out = h.eventually(t, "alice", `{"query":"doubly linked list"}`, func(o output) bool { return o.Index.State == "ready" })
	if len(out.Results) < 2 || out.Index.FilesIndexed != out.Index.FilesTotal || out.Index.FilesTotal == 0 || out.Notice != "" {
		t.Errorf("ready: %+v", out)
	}
}

// TestHybridCodeAgainstServerProcess: with TOOLSHED_EMBED_URL naming an
// OpenAI-compatible server running as a process of its own (embedtest's
// stand-in, whose synonyms play a model's sense that "exponential backoff"
// is "doubling the pause"), the code is embedded as it is indexed and
// searches fuse the BM25 and cosine rankings by reciprocal rank: the
// function that retries doubling the pause (a), second lexically and
// first by cosine, comes before the one with the question's words (c),
// first lexically and third by cosine, and the one that only doubles a
// pause (b), found by cosine alone, comes last.
func TestHybridCodeAgainstServerProcess(t *testing.T) {
	url := embedtest.StartProcess(t, embedtest.Options{Synonyms: map[string]string{"exponential": "doubling", "backoff": "pause"}})
	env := map[string]string{"TOOLSHED_EMBED_URL": url, "TOOLSHED_EMBED_MODEL": embedtest.Model}
	emb, err := embedding.FromEnv(context.Background(), func(k string) string { return env[k] }, awscall.LoadConfig)
	if err != nil || emb == nil {
		t.Fatalf("embedder from the environment: %v, %v", emb, err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"a/a.go": "package a\n\n// Do retries f, doubling the pause after each failure.\nfunc Do(f func() error) error { return f() }\n",
		"b/b.go": "package b\n\n// Sleep doubles the pause.\nfunc Sleep() {}\n",
		"c/c.go": "package c\n\n// Exponentially growing waits; a retry loop may use them.\nfunc Grow() {}\n",
	}
	for p, text := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644)
	}
	query := `{"query":"retry with exponential backoff"}`
	first := func(emb contextindex.Embedder) output {
		h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Repo: repotest.Local(t, dir), Embedder: emb, Mode: wiring.CodeIndexLive})
		h.svc.Start(context.Background(), "local")
		h.svc.Settle()
		return h.search(t, "local", query)
	}
	lexical := first(nil)
	if lexical.Mode != "lexical" || len(lexical.Results) < 2 || !strings.HasPrefix(lexical.Results[0].ID, "c/") || !strings.HasPrefix(lexical.Results[1].ID, "a/") {
		t.Fatalf("lexical: %+v", lexical.Results)
	}
	hybrid := first(emb)
	if hybrid.Mode != "hybrid" || hybrid.Degraded || len(hybrid.Results) < 3 {
		t.Fatalf("hybrid: mode %s, degraded %v, %+v", hybrid.Mode, hybrid.Degraded, hybrid.Results)
	}
	var got []string
	for _, r := range hybrid.Results {
		got = append(got, strings.SplitN(r.ID, "/", 2)[0])
	}
	if want := []string{"a", "c", "b"}; !slices.Equal(got, want) {
		// a: 1/(60+2) + 1/(60+1); c: 1/(60+1) + 1/(60+3); b: 1/(60+2).
		for _, r := range hybrid.Results {
			t.Logf("%s %v", r.ID, r.Score)
		}
		t.Errorf("hybrid order %v, want %v (reciprocal rank fusion of lexical [c a] and cosine [a b c])", got, want)
	}
	if hybrid.Index == nil || hybrid.Index.Vectors != 3 {
		t.Errorf("index: %+v, want 3 vectors", hybrid.Index)
	}
}

// TestNoCodeIndexStartsOnceClosed: a search once the service is closed
// (the process shutting down) answers without starting a code index,
// which nothing would ever close.
func TestNoCodeIndexStartsOnceClosed(t *testing.T) {
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Mode: wiring.CodeIndexLive,
		Repo: repotest.Local(t, repotest.GoPackages(t, "container/list"))})
	h.svc.Close()
	if out := h.search(t, "local", `{"query":"doubly linked list"}`); len(out.Results) != 0 || out.Index == nil || out.Index.State != "building" {
		t.Errorf("once closed: %+v", out)
	}
	if n := len(h.svc.LiveIndexes()); n != 0 {
		t.Errorf("%d code indexes started once closed", n)
	}
}
