package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestIndexer runs the tests that need S3 on one moto_server.
func TestIndexer(t *testing.T) {
	m := emulator.StartMoto(t)
	newStore := func(t *testing.T) *contextindex.Store {
		return contextindex.NewStore(&contextindex.S3Blobs{Bucket: objects.New(m.S3(), m.NewBucket(t)), Prefix: contextindex.BucketPrefix})
	}
	t.Run("snapshot published", func(t *testing.T) {
		blobs := &countingBlobs{Blobs: &contextindex.S3Blobs{Bucket: objects.New(m.S3(), m.NewBucket(t)), Prefix: contextindex.BucketPrefix}}
		testSnapshotPublished(t, blobs)
	})
	t.Run("snapshot errors", func(t *testing.T) { testSnapshotErrors(t, newStore(t)) })
	t.Run("memory stream", func(t *testing.T) { testMemoryStream(t, newStore(t), newStore(t)) })
}

// countingBlobs counts the objects read other than pointers.
type countingBlobs struct {
	contextindex.Blobs
	mu   sync.Mutex
	gets int
}

func (c *countingBlobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	if !strings.HasSuffix(key, "/"+contextindex.PointerFile) {
		c.mu.Lock()
		c.gets++
		c.mu.Unlock()
	}
	return c.Blobs.Get(ctx, key, etag)
}

func (c *countingBlobs) loads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets
}

// mapSnapshots serves repo → snapshot from memory (shared/repo's reader
// in production), counting opens.
type mapSnapshots struct {
	snaps map[string]contextindex.Snapshot
	opens int
}

func (m *mapSnapshots) Open(_ context.Context, repo string) (contextindex.Snapshot, error) {
	m.opens++
	s, ok := m.snaps[repo]
	if !ok {
		return contextindex.Snapshot{}, fs.ErrNotExist
	}
	return s, nil
}

func snapshot(commit string, files map[string]string) contextindex.Snapshot {
	fsys := fstest.MapFS{}
	var list []contextindex.File
	for p, c := range files {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
		list = append(list, contextindex.File{Path: p})
	}
	return contextindex.Snapshot{FS: fsys, Commit: commit, Files: list}
}

func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func newIndexer(t *testing.T, st *contextindex.Store, emb contextindex.Embedder, snaps Snapshots) *Indexer {
	return &Indexer{Store: st, Embedder: emb, Snapshots: snaps, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
}

// testSnapshotPublished: the S3 event of snapshots/acme/current.json
// builds indexes/acme/<commit>/ and its pointer, then a new commit is
// built incrementally, and a repeated event is a no-op that reads only the
// pointer.
func testSnapshotPublished(t *testing.T, blobs *countingBlobs) {
	ctx := context.Background()
	st := contextindex.NewStore(blobs)
	srv, emb := embedtest.Start(t)
	files := map[string]string{
		"README.md":         "# Acme\n\nBilling service.\n",
		"src/auth/token.go": "package auth\n\n// Refresh renews a token under a mutex.\nfunc Refresh() {}\n",
	}
	snaps := &mapSnapshots{snaps: map[string]contextindex.Snapshot{"acme": snapshot("c1", files)}}
	ix := newIndexer(t, st, emb, snaps)

	if _, err := ix.Handle(ctx, fixture(t, "s3-snapshot-published.json")); err != nil {
		t.Fatal(err)
	}
	code, err := st.CurrentCode(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if code.Commit != "c1" || code.Segment.Len() != 2 || code.Vectors.Len() != 2 {
		t.Fatalf("index %s: %d chunks, %d vectors", code.Commit, code.Segment.Len(), code.Vectors.Len())
	}
	embedded := srv.Texts.Load()

	// The same event again (Lambda retries, duplicate notifications).
	loads := blobs.loads()
	if _, err := ix.Handle(ctx, fixture(t, "s3-snapshot-published.json")); err != nil {
		t.Fatal(err)
	}
	if srv.Texts.Load() != embedded {
		t.Error("an indexed commit was embedded again")
	}
	if n := blobs.loads() - loads; n != 0 {
		t.Errorf("a repeated event read %d index files; the pointer tells it is indexed", n)
	}

	// A new commit changing one file: only its chunk is embedded.
	files["src/auth/token.go"] = "package auth\n\n// Refresh renews a token under a lock.\nfunc Refresh() {}\n"
	snaps.snaps["acme"] = snapshot("c2", files)
	if _, err := ix.Handle(ctx, fixture(t, "s3-snapshot-published.json")); err != nil {
		t.Fatal(err)
	}
	code, _ = st.CurrentCode(ctx, "acme")
	if code.Commit != "c2" || srv.Texts.Load() != embedded+1 {
		t.Errorf("after c2: commit %s, %d more texts embedded (want 1)", code.Commit, srv.Texts.Load()-embedded)
	}
	// Other objects and removals are ignored.
	opens := snaps.opens
	if _, err := ix.Handle(ctx, fixture(t, "s3-other-objects.json")); err != nil || snaps.opens != opens {
		t.Errorf("other objects: %v, %d opens", err, snaps.opens-opens)
	}
}

func testSnapshotErrors(t *testing.T, st *contextindex.Store) {
	ctx := context.Background()
	if _, err := newIndexer(t, st, nil, &mapSnapshots{}).Handle(ctx, fixture(t, "s3-snapshot-published.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing snapshot: %v (Lambda must retry)", err)
	}
	if _, err := newIndexer(t, st, nil, nil).Handle(ctx, fixture(t, "s3-snapshot-published.json")); err == nil {
		t.Error("no snapshot reader: no error")
	}
	for _, bad := range []string{`{}`, `{"Records":[]}`, `{"Records":[{"eventSource":"aws:sqs"}]}`, `[1]`} {
		if _, err := newIndexer(t, st, nil, nil).Handle(ctx, json.RawMessage(bad)); err == nil {
			t.Errorf("event %s: no error", bad)
		}
	}
}

func TestRepoOf(t *testing.T) {
	for key, want := range map[string]string{
		"snapshots/acme/current.json": "acme", "snapshots/acme/x.zip": "", "snapshots/current.json": "",
		"snapshots/a/b/current.json": "", "indexes/acme/current.json": "",
	} {
		if got, ok := repoOf(key); got != want && ok || ok != (want != "") {
			t.Errorf("repoOf(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

// testMemoryStream: the stream fixture's inserts are embedded per tenant;
// a failing embedder reports each tenant's first record for retry.
func testMemoryStream(t *testing.T, st, empty *contextindex.Store) {
	ctx := context.Background()
	srv, emb := embedtest.Start(t)
	ix := newIndexer(t, st, emb, nil)

	srv.Fail.Store(true)
	out, err := ix.Handle(ctx, fixture(t, "dynamodb-memory-inserts.json"))
	if err != nil {
		t.Fatal(err)
	}
	resp := out.(events.DynamoDBEventResponse)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if strings.Join(failed, ",") != "100000000000000000001,100000000000000000002" {
		t.Errorf("failures %v, want the first record of acme and of beta", failed)
	}

	srv.Fail.Store(false)
	out, err = ix.Handle(ctx, fixture(t, "dynamodb-memory-inserts.json"))
	if err != nil || len(out.(events.DynamoDBEventResponse).BatchItemFailures) != 0 {
		t.Fatalf("retry: %v %+v", err, out)
	}
	for tenant, want := range map[string]int{"acme": 2, "beta": 1, "gamma": 0} {
		v, _, err := st.MemoryVectors(ctx, tenant, emb.Model(), "")
		if err != nil || v.Len() != want {
			t.Errorf("%s: %d vectors (%v), want %d", tenant, v.Len(), err, want)
		}
	}
	// The vector is the one of the entry's discovery text.
	v, _, _ := st.MemoryVectors(ctx, "acme", emb.Model(), "")
	doc := contextindex.Doc{Source: contextindex.SourceDiscovery, Module: "auth", Content: "Token refresh race condition fixed with mutex lock"}
	if _, ok := v.Get(contextindex.TextHash(doc.EmbedText())); !ok {
		t.Error("no vector for the discovery's text")
	}
	// Redelivery embeds nothing.
	n := srv.Texts.Load()
	ix.Handle(ctx, fixture(t, "dynamodb-memory-inserts.json"))
	if srv.Texts.Load() != n {
		t.Error("a redelivered batch was embedded again")
	}
	// The fixture's idempotency claim is skipped as one, without a warning.
	var logged bytes.Buffer
	quiet := &Indexer{Store: st, Embedder: emb, Now: time.Now, Log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if _, err := quiet.Handle(ctx, fixture(t, "dynamodb-memory-inserts.json")); err != nil || logged.Len() > 0 {
		t.Errorf("a batch with a claim: %v, logged %q", err, logged.String())
	}
	// Without an embedder the stream is acknowledged and nothing stored.
	out, err = newIndexer(t, empty, nil, nil).Handle(ctx, fixture(t, "dynamodb-memory-inserts.json"))
	if err != nil || len(out.(events.DynamoDBEventResponse).BatchItemFailures) != 0 {
		t.Errorf("lexical only: %v %+v", err, out)
	}
}
