package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestIndexer runs the tests that need S3 on one moto_server, each in a
// bucket of its own.
func TestIndexer(t *testing.T) {
	m := repotest.StartS3(t)
	bucket := func(t *testing.T) *repotest.S3 { return &repotest.S3{Moto: m.Moto, Bucket: m.Moto.NewBucket(t)} }
	t.Run("fan-out", func(t *testing.T) { testFanOut(t, bucket(t)) })
	t.Run("resume", func(t *testing.T) { testResume(t, bucket(t)) })
	t.Run("replaced build", func(t *testing.T) { testReplacedBuild(t, bucket(t)) })
	t.Run("late plan", func(t *testing.T) { testLatePlan(t, m) })
	t.Run("rollback while building", func(t *testing.T) { testRollbackWhileBuilding(t, bucket(t)) })
	t.Run("commit pushed again", func(t *testing.T) { testCommitPushedAgain(t, bucket(t)) })
	t.Run("unnumbered pointer", func(t *testing.T) { testUnnumberedPointer(t, bucket(t)) })
	t.Run("index stored whole", func(t *testing.T) { testIndexStoredWhole(t, bucket(t)) })
	t.Run("refused text", func(t *testing.T) { testRefusedText(t, bucket(t)) })
	t.Run("provider down", func(t *testing.T) { testProviderDown(t, bucket(t)) })
	t.Run("queue down", func(t *testing.T) { testQueueDown(t, bucket(t)) })
	t.Run("embed queue", func(t *testing.T) { testEmbedQueue(t, bucket(t)) })
	t.Run("lexical", func(t *testing.T) { testLexical(t, bucket(t)) })
	t.Run("snapshot files", func(t *testing.T) { testSnapshotFiles(t, bucket(t)) })
	t.Run("snapshot ranges", func(t *testing.T) { testSnapshotRanges(t, bucket(t)) })
	t.Run("snapshot errors", func(t *testing.T) { testSnapshotErrors(t, bucket(t)) })
	t.Run("memory stream", func(t *testing.T) { testMemoryStream(t, bucket(t), bucket(t)) })
	t.Run("precise", func(t *testing.T) { testPrecise(t, bucket(t)) })
	t.Run("precise refused", func(t *testing.T) { testPreciseRefused(t, bucket(t)) })
	t.Run("precise order", func(t *testing.T) { testPreciseOrder(t, bucket(t)) })
}

// memQueue keeps the batch messages sent, for the test to deliver; with
// fail set it refuses them. It records the retries asked for.
type memQueue struct {
	mu      sync.Mutex
	bodies  [][]byte
	fail    bool
	retries []string // receipt@delay
}

func (q *memQueue) RetryAfter(_ context.Context, receipt string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retries = append(q.retries, fmt.Sprintf("%s@%v", receipt, d))
	return nil
}

func (q *memQueue) Send(_ context.Context, bodies [][]byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return errors.New("queue unavailable")
	}
	q.bodies = append(q.bodies, bodies...)
	return nil
}

// take removes and returns the messages sent so far.
func (q *memQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.bodies
	q.bodies = nil
	return out
}

// deliver hands one message to the indexer as the SQS event source
// would, and fails the test if the indexer reports it failed.
func deliver(t *testing.T, ix *Indexer, body []byte) {
	t.Helper()
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body), EventSource: "aws:sqs"}}}
	raw, _ := json.Marshal(ev)
	out, err := ix.Handle(context.Background(), raw)
	if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) != 0 {
		t.Fatalf("batch %s: %v %+v", body, err, out)
	}
}

// drain delivers messages until the queue stays empty.
func drain(t *testing.T, ix *Indexer, q *memQueue) {
	t.Helper()
	for bodies := q.take(); len(bodies) > 0; bodies = q.take() {
		for _, b := range bodies {
			deliver(t, ix, b)
		}
	}
}

func newIndexer(s3 *repotest.S3, emb contextindex.Embedder, q Queue) *Indexer {
	b := s3.Objects()
	return &Indexer{
		Store:      indexfile.NewStore(&indexfile.S3Blobs{Bucket: b, Prefix: indexfile.BucketPrefix}),
		Embedder:   emb,
		Snapshots:  &Snapshots{Bucket: b, MaxBytes: repo.DefaultMaxBytes},
		Queue:      q,
		BatchFiles: 1,
		Now:        time.Now,
		Log:        slog.New(slog.DiscardHandler),
	}
}

func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// published is the event of acme's snapshot pointer being written.
func published(t *testing.T, ix *Indexer) {
	t.Helper()
	if _, err := ix.Handle(context.Background(), fixture(t, "s3-snapshot-published.json")); err != nil {
		t.Fatal(err)
	}
}

// current returns acme's build record and pointer (zero when none).
func current(t *testing.T, ix *Indexer) (indexfile.Build, indexfile.Pointer) {
	t.Helper()
	ctx := context.Background()
	b, _, err := ix.Store.Build(ctx, "acme", "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	p, _, err := ix.Store.Pointer(ctx, "acme", "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return b, p
}

// loadParts reads acme's published index, its parts ranked together.
func loadParts(t *testing.T, ix *Indexer) (indexfile.Manifest, *contextindex.Corpus) {
	t.Helper()
	ctx := context.Background()
	_, p := current(t, ix)
	m, err := ix.Store.Manifest(ctx, "acme", p.Commit)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*contextindex.CodeIndex
	for _, info := range m.Parts {
		part, err := ix.Store.LoadPart(ctx, "acme", p.Commit, info.Name, true)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	return m, contextindex.Join(contextindex.NewCodeCollection(m.Model, parts))
}

// testFanOut: a published snapshot is split into batches on the queue;
// the index is published when the last is built, not before, and before
// any chunk is embedded: searchable by words at once, each part queueing
// its embedding, which publishes the index again with its vectors;
// repeated events and messages change nothing; a new commit embeds only
// the text that changed.
func testFanOut(t *testing.T, s3 *repotest.S3) {
	dir := repotest.GoPackages(t, "container/list", "container/ring", "container/heap")
	s3.Publish(t, "acme", "c1", dir)
	srv, emb := embedtest.Start(t)
	q := &memQueue{}
	ix := newIndexer(s3, emb, q)

	published(t, ix)
	bodies := q.take()
	rec, p := current(t, ix)
	if len(bodies) != 3 || rec.Commit != "c1" || rec.Batches != 3 || rec.Files != 3 || !rec.Queued || rec.State != indexfile.BuildRunning {
		t.Fatalf("planned: %d messages, record %+v", len(bodies), rec)
	}
	if p.Commit != "" {
		t.Fatalf("a pointer before any batch ran: %+v", p)
	}
	published(t, ix) // S3 notifies at least once
	if n := len(q.take()); n != 0 {
		t.Errorf("a repeated event queued %d batches", n)
	}
	for _, b := range bodies[:2] {
		deliver(t, ix, b)
	}
	if rec, p = current(t, ix); p.Commit != "" || len(rec.Done) != 2 {
		t.Fatalf("two of three batches: pointer %+v, %d done", p, len(rec.Done))
	}
	deliver(t, ix, bodies[2])
	rec, p = current(t, ix)
	if p.Commit != "c1" || p.Parts != 3 || p.Model != emb.Model() || rec.State != indexfile.BuildPublished {
		t.Fatalf("after the last batch: pointer %+v, record %+v", p, rec)
	}
	m, corpus := loadParts(t, ix)
	total := indexfile.Totals(m.Parts)
	if total.Files != 3 || total.Vectors != 0 || total.Pending != total.Chunks || srv.Texts.Load() != 0 || p.Pending != total.Chunks {
		t.Errorf("published before embedding: %+v, pointer %+v; %d texts embedded", total, p, srv.Texts.Load())
	}
	if hits, mode := corpus.Search(contextindex.Query{Text: "ring of elements", Limit: 3}); len(hits) == 0 || !strings.HasPrefix(hits[0].Doc.Path, "container/ring/") || mode != contextindex.ModeLexical {
		t.Errorf("search over the parts: %v (%s)", hits, mode)
	}
	embeds := q.take()
	if len(embeds) != 3 {
		t.Fatalf("%d embed messages, want one a part", len(embeds))
	}
	for _, b := range embeds {
		deliver(t, ix, b)
	}
	_, p = current(t, ix)
	m, corpus = loadParts(t, ix)
	total = indexfile.Totals(m.Parts)
	if total.Vectors != total.Chunks || total.Pending != 0 || total.Embedded != int(srv.Texts.Load()) || corpus.Vectors() != total.Chunks ||
		p.Embedded != total.Chunks || p.Pending != 0 {
		t.Errorf("embedded: %+v, pointer %+v; %d texts embedded, %d vectors searched", total, p, srv.Texts.Load(), corpus.Vectors())
	}
	embedded := srv.Texts.Load()
	deliver(t, ix, bodies[1]) // a redelivered message
	published(t, ix)          // and event
	if srv.Texts.Load() != embedded || len(q.take()) != 0 {
		t.Error("a published commit was worked on again")
	}

	// A new commit changing one comment: only its chunk is embedded, the
	// others reuse the vectors of c1's parts.
	ring := filepath.Join(dir, "container", "ring", "ring.go")
	data, _ := os.ReadFile(ring)
	os.WriteFile(ring, bytes.Replace(data, []byte("// Len computes the number of elements"), []byte("// Len counts the elements"), 1), 0o644)
	s3.Publish(t, "acme", "c2", dir)
	published(t, ix)
	drain(t, ix, q)
	rec, p = current(t, ix)
	m, _ = loadParts(t, ix)
	if p.Commit != "c2" || rec.State != indexfile.BuildPublished || srv.Texts.Load()-embedded != 1 {
		t.Errorf("c2: pointer %s, %s, %d texts embedded (want 1)", p.Commit, rec.State, srv.Texts.Load()-embedded)
	}
	if total := indexfile.Totals(m.Parts); total.Reused != total.Vectors-1 || total.Embedded != 1 {
		t.Errorf("c2's parts: %+v", total)
	}
}

// testResume: a round cut short by its time checkpoints its vectors and
// queues the batch again; the next round embeds only what is left. The
// provider's quota throttles the requests meanwhile, and nothing fails.
func testResume(t *testing.T, s3 *repotest.S3) {
	s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "strings", "bufio", "sort"))
	srv, emb := embedtest.StartWith(t, embedtest.Options{Latency: 20 * time.Millisecond, RequestsPerSecond: 3})
	q := &memQueue{}
	ix := newIndexer(s3, emb, q)
	ix.BatchFiles = 1000
	published(t, ix)
	bodies := q.take()
	if len(bodies) != 1 {
		t.Fatalf("%d batches, want 1", len(bodies))
	}
	deliver(t, ix, bodies[0])
	if _, p := current(t, ix); p.Commit != "c1" {
		t.Fatal("not published before embedding")
	}
	bodies = q.take()
	var b Batch
	json.Unmarshal(bodies[0], &b)
	if !b.Embed {
		t.Fatalf("after the part was built: %s", bodies[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	if err := ix.RunBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	next := q.take()
	cp, err := ix.Store.Checkpoint(context.Background(), "acme", "c1", indexfile.PartName(0))
	if len(next) != 1 || err != nil || cp.Len() == 0 {
		t.Fatalf("a round cut short: %d continuations, checkpoint %v", len(next), err)
	}
	var cont Batch
	json.Unmarshal(next[0], &cont)
	if cont.Rounds != 1 || cont.Stalled != 0 || !cont.Embed || cont.N != b.N {
		t.Errorf("continuation %+v", cont)
	}
	before := srv.Texts.Load()
	deliver(t, ix, next[0])
	m, _ := loadParts(t, ix)
	total := indexfile.Totals(m.Parts)
	if total.Vectors != total.Chunks || total.Failed != 0 {
		t.Errorf("after resuming: %+v", total)
	}
	if again := srv.Texts.Load() - before; again > int64(total.Embedded-cp.Len()) {
		t.Errorf("the second round embedded %d texts; %d were left after the checkpoint's %d", again, total.Embedded-cp.Len(), cp.Len())
	}
	if srv.Throttled.Load() == 0 {
		t.Error("the quota never throttled: the test does not test throttling")
	}
}

// testReplacedBuild: a newer snapshot replaces a build under way; the old
// build's remaining batches are dropped, and the new one reuses the
// vectors of its parts that were done.
func testReplacedBuild(t *testing.T, s3 *repotest.S3) {
	dir := repotest.GoPackages(t, "container/list", "container/ring", "container/heap")
	s3.Publish(t, "acme", "c1", dir)
	srv, emb := embedtest.Start(t)
	q := &memQueue{}
	ix := newIndexer(s3, emb, q)
	published(t, ix)
	old := q.take()
	deliver(t, ix, old[0])
	drain(t, ix, q) // its part's embedding
	doneOld := srv.Texts.Load()

	s3.Publish(t, "acme", "c2", dir)
	published(t, ix)
	for _, b := range old[1:] {
		deliver(t, ix, b)
	}
	if rec, p := current(t, ix); rec.Commit != "c2" || len(rec.Done) != 0 || p.Commit != "" {
		t.Fatalf("c1's batches after c2 was planned: record %+v, pointer %+v", rec, p)
	}
	drain(t, ix, q)
	m, _ := loadParts(t, ix)
	total := indexfile.Totals(m.Parts)
	if m.Commit != "c2" || total.Vectors != total.Chunks || int64(total.Embedded) != srv.Texts.Load()-doneOld || total.Reused == 0 {
		t.Errorf("c2: %+v; %d texts embedded for c1's part", total, doneOld)
	}
}

// heldSnapshots holds the first plan that reads a snapshot, once it has
// read it (its pointer and its files), until release is closed; read is
// closed when it has.
type heldSnapshots struct {
	SnapshotReader
	once          sync.Once
	read, release chan struct{}
}

func (h *heldSnapshots) Current(ctx context.Context, key string) (Snapshot, error) {
	snap, err := h.SnapshotReader.Current(ctx, key)
	h.once.Do(func() {
		close(h.read)
		<-h.release
	})
	return snap, err
}

// testLatePlan: c1 is pushed, and its plan is held once it has read the
// snapshot while c2 is pushed and planned, or also built and published.
// Going on, c1's plan leaves c2's build record alone and queues nothing;
// c2 is the index published, and c1 never is.
func testLatePlan(t *testing.T, m *repotest.S3) {
	for _, c2 := range []string{"planned", "published"} {
		t.Run("c2 "+c2, func(t *testing.T) {
			s3 := &repotest.S3{Moto: m.Moto, Bucket: m.Moto.NewBucket(t)}
			dir := repotest.GoPackages(t, "container/list", "container/ring")
			s3.Publish(t, "acme", "c1", dir)
			q := &memQueue{}
			late := newIndexer(s3, nil, q)
			held := &heldSnapshots{SnapshotReader: late.Snapshots, read: make(chan struct{}), release: make(chan struct{})}
			late.Snapshots = held
			planned := make(chan error, 1)
			go func() { planned <- late.IndexSnapshot(context.Background(), "acme") }()
			<-held.read

			ix := newIndexer(s3, nil, q) // another invocation meanwhile
			os.WriteFile(filepath.Join(dir, "container", "list", "new.go"), []byte("package list\n\n// Newer is new in c2.\nfunc Newer() {}\n"), 0o644)
			s3.Publish(t, "acme", "c2", dir)
			published(t, ix)
			if c2 == "published" {
				drain(t, ix, q)
			}
			close(held.release)
			if err := <-planned; err != nil {
				t.Fatal(err)
			}
			if rec, _ := current(t, ix); rec.Commit != "c2" {
				t.Fatalf("c1's late plan replaced c2's build record: %+v", rec)
			}
			for _, body := range q.take() {
				var b Batch
				if json.Unmarshal(body, &b); b.Commit != "c2" {
					t.Errorf("a batch of %s queued", b.Commit)
				}
				deliver(t, ix, body)
			}
			rec, p := current(t, ix)
			if p.Commit != "c2" || rec.Commit != "c2" || rec.State != indexfile.BuildPublished || p.SnapshotSeq != rec.SnapshotSeq {
				t.Errorf("after c1's late plan: pointer %+v, record %+v", p, rec)
			}
			published(t, late) // c1's event, delivered again, late: c2 is current and indexed
			if n := len(q.take()); n != 0 {
				t.Errorf("%d batches queued for the snapshot indexed", n)
			}
		})
	}
}

// testRollbackWhileBuilding: c1 is indexed; c2 is pushed and planned;
// the repository is rolled back to c1 before c2's batches run. c1's index
// is taken for the rollback's snapshot, c2's batches are dropped, and the
// pointer stays on c1.
func testRollbackWhileBuilding(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	s3.Publish(t, "acme", "c1", dir)
	q := &memQueue{}
	ix := newIndexer(s3, nil, q)
	published(t, ix)
	drain(t, ix, q)
	os.WriteFile(filepath.Join(dir, "container", "list", "new.go"), []byte("package list\n"), 0o644)
	s3.Publish(t, "acme", "c2", dir)
	published(t, ix)
	c2 := q.take()
	rolled, err := repo.Rollback(ctx, s3.Objects(), reposcope.DefaultOf("acme"), "c1", repotest.ModTime)
	if err != nil {
		t.Fatal(err)
	}
	published(t, ix)
	for _, body := range c2 {
		deliver(t, ix, body)
	}
	drain(t, ix, q)
	rec, p := current(t, ix)
	if p.Commit != "c1" || p.SnapshotSeq != rolled.Seq || rec.Commit != "c1" || rec.SnapshotSeq != rolled.Seq || rec.State != indexfile.BuildPublished {
		t.Errorf("after the rollback to c1 (snapshot %d): pointer %+v, record %+v", rolled.Seq, p, rec)
	}
	if m, err := ix.Store.Manifest(ctx, "acme", "c1"); err != nil || m.SnapshotSeq != rolled.Seq || len(m.Parts) != 2 {
		t.Errorf("c1's manifest: %+v, %v", m, err)
	}
}

// testCommitPushedAgain: the same commit pushed again while its build
// waits is a later snapshot: its build replaces the first, whose batches
// are dropped (their commit is the record's, their snapshot is not).
func testCommitPushedAgain(t *testing.T, s3 *repotest.S3) {
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	s3.Publish(t, "acme", "c1", dir)
	q := &memQueue{}
	ix := newIndexer(s3, nil, q)
	published(t, ix)
	first := q.take()
	again := s3.Publish(t, "acme", "c1", dir)
	published(t, ix)
	for _, body := range first {
		deliver(t, ix, body)
	}
	if rec, p := current(t, ix); rec.SnapshotSeq != again.Seq || len(rec.Done) != 0 || p.Commit != "" {
		t.Fatalf("the first push's batches after the second's plan: record %+v, pointer %+v", rec, p)
	}
	drain(t, ix, q)
	if rec, p := current(t, ix); p.Commit != "c1" || p.SnapshotSeq != again.Seq || rec.State != indexfile.BuildPublished {
		t.Errorf("after the second push's batches: pointer %+v, record %+v", p, rec)
	}
}

// testUnnumberedPointer: a snapshot pointer without a number (written
// by an older scripts/snapshot) after an indexed one that had one is
// indexed: it is read as numbered by its creation time.
func testUnnumberedPointer(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	s3.Publish(t, "acme", "c1", dir)
	q := &memQueue{}
	ix := newIndexer(s3, nil, q)
	published(t, ix)
	drain(t, ix, q)
	os.WriteFile(filepath.Join(dir, "container", "list", "new.go"), []byte("package list\n"), 0o644)
	c2 := s3.Publish(t, "acme", "c2", dir)
	c2.Seq, c2.Created = 0, c2.Created.Add(time.Minute)
	raw, _ := json.Marshal(c2)
	if strings.Contains(string(raw), "seq") {
		t.Fatalf("the pointer %s has a number", raw)
	}
	if _, err := s3.Objects().Put(ctx, repo.PointerKey(reposcope.DefaultOf("acme")), raw, objects.PutOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	published(t, ix)
	drain(t, ix, q)
	if rec, p := current(t, ix); p.Commit != "c2" || p.SnapshotSeq != c2.Created.UnixMilli() || rec.State != indexfile.BuildPublished {
		t.Errorf("after an unnumbered pointer to c2: pointer %+v, record %+v; want c2 indexed as numbered %d", p, rec, c2.Created.UnixMilli())
	}
}

// testIndexStoredWhole: the snapshot's commit has an index an earlier
// version stored whole (no manifest, no snapshot number); the snapshot,
// numbered since, is built again in parts and published, instead of
// failing for good to adopt an index that has no manifest.
func testIndexStoredWhole(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	pushed := s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "container/ring"))
	q := &memQueue{}
	ix := newIndexer(s3, nil, q)
	snap, err := ix.Snapshots.Current(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := contextindex.BuildCode(ctx, nil, snap.Snapshot, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Store.SaveSegment(ctx, "acme", "c1", whole.Segment); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(indexfile.Pointer{Commit: "c1", BuiltAt: whole.BuiltAt, Chunks: whole.Segment.Len(), Format: indexfile.CodeFormat})
	if _, err := s3.Objects().Put(ctx, indexfile.BucketPrefix+"acme/"+indexfile.PointerFile, old, objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	published(t, ix)
	drain(t, ix, q)
	if rec, p := current(t, ix); p.Commit != "c1" || p.SnapshotSeq != pushed.Seq || p.Parts == 0 || rec.State != indexfile.BuildPublished {
		t.Errorf("c1's snapshot over its index stored whole: pointer %+v, record %+v; want it built in parts", p, rec)
	}
}

// testRefusedText: a text the provider refuses fails alone; the build is
// published with that chunk found lexically only.
func testRefusedText(t *testing.T, s3 *repotest.S3) {
	dir := repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n\n// Zebra stripes.\nfunc Zebra() {}\n\n// Lion roars.\nfunc Lion() {}\n",
	})
	s3.Publish(t, "acme", "c1", dir)
	_, emb := embedtest.StartWith(t, embedtest.Options{Refuse: "Zebra"})
	q := &memQueue{}
	ix := newIndexer(s3, emb, q)
	published(t, ix)
	drain(t, ix, q)
	m, _ := loadParts(t, ix)
	if total := indexfile.Totals(m.Parts); total.Failed != 1 || total.Vectors != total.Chunks-1 {
		t.Errorf("a refused text: %+v", total)
	}
}

// testProviderDown: a provider that fails every request stalls a part's
// embedding: each round that embedded nothing queues it again, counting;
// the round that makes maxStalledRounds saves the part without those
// vectors (found lexically), so the embedding still finishes.
func testProviderDown(t *testing.T, s3 *repotest.S3) {
	s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/ring"))
	srv, emb := embedtest.Start(t)
	srv.Fail.Store(true)
	q := &memQueue{}
	ix := newIndexer(s3, emb, q)
	published(t, ix)
	round := func(body []byte) []byte {
		t.Helper()
		var b Batch
		json.Unmarshal(body, &b)
		// Long enough for moto on a busy machine to save the round's
		// checkpoint and queue the batch within it.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := ix.RunBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
		next := q.take()
		if len(next) == 0 {
			return nil
		}
		return next[0]
	}
	embed := round(q.take()[0]) // builds the part, queues its embedding
	next := round(embed)
	var b Batch
	if err := json.Unmarshal(next, &b); err != nil || b.Stalled != 1 || b.Rounds != 1 {
		t.Fatalf("after a round that embedded nothing: %s", next)
	}
	b.Stalled, b.Rounds = maxStalledRounds-1, maxStalledRounds-1
	last, _ := json.Marshal(b)
	if more := round(last); more != nil {
		t.Fatalf("a batch stalled %d rounds was queued again: %s", maxStalledRounds, more)
	}
	m, _ := loadParts(t, ix)
	if total := indexfile.Totals(m.Parts); total.Vectors != 0 || total.Failed != total.Chunks {
		t.Errorf("the part built without its vectors: %+v", total)
	}
}

// testEmbedQueue: embed messages go to the embed queue, never to the
// index queue, so that a second push's batches are built and its index
// published while the first push's embed messages are still waiting (as
// they do for hours at scale, paced within the embedding quota). Then
// the first push's are dropped (its build was replaced) and the second's
// embed its parts.
func testEmbedQueue(t *testing.T, s3 *repotest.S3) {
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	s3.Publish(t, "acme", "c1", dir)
	srv, emb := embedtest.Start(t)
	q, eq := &memQueue{}, &memQueue{}
	ix := newIndexer(s3, emb, q)
	ix.EmbedQueue = eq

	published(t, ix)
	drain(t, ix, q)
	if _, p := current(t, ix); p.Commit != "c1" || p.Pending == 0 {
		t.Fatalf("c1's batches built: pointer %+v", p)
	}
	os.WriteFile(filepath.Join(dir, "container", "list", "new.go"), []byte("package list\n\n// Newer is new in c2.\nfunc Newer() {}\n"), 0o644)
	s3.Publish(t, "acme", "c2", dir)
	published(t, ix)
	drain(t, ix, q) // c1's embed messages, still queued, are not in its way
	rec, p := current(t, ix)
	if p.Commit != "c2" || rec.State != indexfile.BuildPublished || srv.Texts.Load() != 0 {
		t.Fatalf("c2's batches built while c1's embed messages wait: pointer %+v, record %s, %d texts embedded", p, rec.State, srv.Texts.Load())
	}
	embeds := eq.take()
	if len(embeds) != 2+rec.Batches {
		t.Fatalf("%d embed messages, want one a part of c1 (2) and c2 (%d)", len(embeds), rec.Batches)
	}
	for _, b := range embeds {
		deliver(t, ix, b)
	}
	drain(t, ix, eq)
	if _, p := current(t, ix); p.Commit != "c2" || p.Pending != 0 || p.Embedded == 0 {
		t.Errorf("c2 embedded: pointer %+v", p)
	}
}

// testQueueDown: an event whose batches could not be queued fails (S3
// retries it); the retry queues them.
func testQueueDown(t *testing.T, s3 *repotest.S3) {
	s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "container/ring"))
	q := &memQueue{fail: true}
	ix := newIndexer(s3, nil, q)
	if _, err := ix.Handle(context.Background(), fixture(t, "s3-snapshot-published.json")); err == nil {
		t.Fatal("batches that could not be queued: no error")
	}
	if rec, _ := current(t, ix); rec.Queued || rec.Batches != 2 {
		t.Fatalf("after the failure: %+v", rec)
	}
	q.fail = false
	published(t, ix)
	drain(t, ix, q)
	if rec, p := current(t, ix); p.Commit != "c1" || !rec.Queued {
		t.Errorf("after the retry: pointer %+v, record %+v", p, rec)
	}
}

// testLexical: without an embedder the parts have no vectors.
func testLexical(t *testing.T, s3 *repotest.S3) {
	s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "container/ring"))
	q := &memQueue{}
	ix := newIndexer(s3, nil, q)
	published(t, ix)
	drain(t, ix, q)
	m, corpus := loadParts(t, ix)
	if p := m.Parts; len(p) != 2 || m.Model != "" || corpus.Vectors() != 0 || corpus.Len() != indexfile.Totals(p).Chunks {
		t.Errorf("lexical build: %+v", m)
	}
}

// testSnapshotFiles: the files indexed are those grep_codebase searches:
// ignored, hidden, binary and denied files are left out, and a byte
// order mark is not part of the text. Without a queue the indexer builds
// the batches itself.
func testSnapshotFiles(t *testing.T, s3 *repotest.S3) {
	dir := repotest.WriteDir(t, map[string]string{
		".gitignore":              "gen/\n",
		"main.go":                 "package main\n\nfunc main() {}\n",
		"bom.md":                  "\uFEFF# Title\n",
		"gen/out.go":              "package gen\n",
		"node_modules/x/index.js": "module.exports = 1\n",
		".hidden/x.go":            "package x\n",
		"logo.png":                "\x89PNG\x00\x01",
		".env":                    "SECRET=1\n",
		"secrets/k.txt":           "key\n",
	})
	s3.Publish(t, "acme", "c1", dir)
	ix := newIndexer(s3, nil, nil)
	snap, err := ix.Snapshots.Current(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range snap.Files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	if fmt.Sprint(paths) != "[bom.md main.go]" || snap.Commit != "c1" {
		t.Errorf("indexed files %v of %s", paths, snap.Commit)
	}
	files, err := ix.Snapshots.Files(context.Background(), "acme", "c1", []string{"bom.md"})
	if err != nil || len(files) != 1 || string(files[0].Content) != "# Title\n" || !files[0].ModTime.Equal(repotest.ModTime) {
		t.Errorf("bom.md read as %+v, %v", files, err)
	}
	published(t, ix)
	if rec, p := current(t, ix); p.Commit != "c1" || rec.Batches != 2 || rec.State != indexfile.BuildPublished {
		t.Errorf("without a queue: pointer %+v, record %+v", p, rec)
	}
}

// testSnapshotRanges: a batch reads the zip's directory and its own
// files, not the whole snapshot.
func testSnapshotRanges(t *testing.T, s3 *repotest.S3) {
	files := map[string]string{}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		var b strings.Builder
		for range 400 << 10 {
			b.WriteByte(byte('a' + rnd.IntN(26))) // incompressible: the zip is 16 MB, four blocks
		}
		files[fmt.Sprintf("f%02d.txt", i)] = b.String()
	}
	dir := repotest.WriteDir(t, files)
	s3.Publish(t, "acme", "c1", dir)
	ctx := context.Background()
	info, err := s3.Objects().Head(ctx, repo.ZipKey(reposcope.DefaultOf("acme"), "c1"))
	if err != nil {
		t.Fatal(err)
	}
	z := &rangedZip{bucket: s3.Objects(), key: info.Key, etag: info.ETag, size: info.Size}
	view, err := repo.OpenZipAt(z, info.Size, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"f20.txt", "f21.txt"} {
		f, err := repo.ReadSearchable(view, p)
		if err != nil || f.Text() != files[p] {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if z.fetchCount > 3 {
		t.Errorf("the directory and two files of 40 read %d blocks of %d", z.fetchCount, info.Size/zipBlock+1)
	}
	// The zip replaced under the reader: it reads no other version.
	os.WriteFile(filepath.Join(dir, "f00.txt"), []byte("changed"), 0o644)
	s3.Publish(t, "acme", "c1", dir)
	if _, err := repo.ReadSearchable(view, "f00.txt"); !errors.Is(err, objects.ErrPrecondition) {
		t.Errorf("a block of another version: %v, want ErrPrecondition", err)
	}
}

func testSnapshotErrors(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	if _, err := newIndexer(s3, nil, nil).Handle(ctx, fixture(t, "s3-snapshot-published.json")); !errors.Is(err, repo.ErrNoRepository) {
		t.Errorf("missing snapshot: %v (Lambda must retry)", err)
	}
	noReader := newIndexer(s3, nil, nil)
	noReader.Snapshots = nil
	if _, err := noReader.Handle(ctx, fixture(t, "s3-snapshot-published.json")); err == nil {
		t.Error("no snapshot reader: no error")
	}
	for _, bad := range []string{`{}`, `{"Records":[]}`, `{"Records":[{"eventSource":"aws:kinesis"}]}`, `[1]`} {
		if _, err := newIndexer(s3, nil, nil).Handle(ctx, json.RawMessage(bad)); err == nil {
			t.Errorf("event %s: no error", bad)
		}
	}
	q := &memQueue{}
	out, err := newIndexer(s3, nil, q).Handle(ctx, json.RawMessage(
		`{"Records":[{"eventSource":"aws:sqs","messageId":"m9","receiptHandle":"r9","body":"{","attributes":{"ApproximateReceiveCount":"3"}}]}`))
	if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) != 1 || fmt.Sprint(q.retries) != "[r9@1m0s]" {
		t.Errorf("a message that is not a batch: %v %+v, retries %v", err, out, q.retries)
	}
	// Other objects and removals are ignored.
	if _, err := newIndexer(s3, nil, nil).Handle(ctx, fixture(t, "s3-other-objects.json")); err != nil {
		t.Errorf("other objects: %v", err)
	}
}

func TestRepoOf(t *testing.T) {
	for key, want := range map[string]string{
		"snapshots/acme/current.json": "acme", "snapshots/acme/x.zip": "", "snapshots/current.json": "",
		"snapshots/a/b/current.json": "a/b", "snapshots/a/b/c/current.json": "", "snapshots/a/default/current.json": "",
		"snapshots/a/b/x.zip": "", "indexes/acme/current.json": "",
	} {
		if got, ok := repoOf(key); got != want && ok || ok != (want != "") {
			t.Errorf("repoOf(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

// TestBatchMessage: a batch message names the repository's key "repo";
// one written before (named "tenant") still decodes, so a deploy keeps
// the builds under way.
func TestBatchMessage(t *testing.T) {
	sent, _ := json.Marshal(Batch{RepoKey: "acme/web", Commit: "c1", N: 2, Paths: []string{"a.go"}})
	if !strings.Contains(string(sent), `"repo":"acme/web"`) || strings.Contains(string(sent), "tenant") {
		t.Errorf("a batch message: %s", sent)
	}
	for _, tt := range []struct{ name, body, want string }{
		{"this version's", string(sent), "acme/web"},
		{"before the rename", `{"tenant":"acme/web","commit":"c1","n":2,"paths":["a.go"]}`, "acme/web"},
		{"both names: repo wins", `{"repo":"acme/web","tenant":"other","commit":"c1","n":2,"paths":["a.go"]}`, "acme/web"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b Batch
			if err := json.Unmarshal([]byte(tt.body), &b); err != nil || b.RepoKey != tt.want || b.Commit != "c1" || b.N != 2 || fmt.Sprint(b.Paths) != "[a.go]" {
				t.Errorf("decoded %+v, %v", b, err)
			}
		})
	}
	if err := json.Unmarshal([]byte(`{"repo":1}`), new(Batch)); err == nil {
		t.Error("a malformed message decoded")
	}
}

func TestRetryBatchAfter(t *testing.T) {
	for receives, want := range map[int]time.Duration{0: 15 * time.Second, 1: 15 * time.Second, 2: 30 * time.Second, 4: 2 * time.Minute, 6: 5 * time.Minute, 100: 5 * time.Minute} {
		if got := retryBatchAfter(receives); got != want {
			t.Errorf("after receive %d: %v, want %v", receives, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	file := func(p string, size int) contextindex.File {
		return contextindex.File{Path: p, Content: make([]byte, size)}
	}
	long := strings.Repeat("d/", 3000) + "f.go" // 6 KB of path
	tests := []struct {
		name  string
		most  int
		files []contextindex.File
		want  string // each batch's paths
	}{
		{"by count, in path order", 2, []contextindex.File{file("c", 1), file("a", 1), file("b", 1)}, "[[a b] [c]]"},
		{"by bytes", 10, []contextindex.File{file("a", maxBatchBytes-1), file("b", 2), file("c", 1)}, "[[a] [b c]]"},
		{"a file larger than a batch is a batch", 10, []contextindex.File{file("a", 1), file("b", maxBatchBytes+1), file("c", 1)}, "[[a] [b] [c]]"},
		{"no files, one empty batch", 10, nil, "[[]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := &Indexer{BatchFiles: tt.most}
			var got [][]string
			for i, b := range ix.split("acme", Snapshot{Snapshot: contextindex.Snapshot{Commit: "c1", Files: tt.files}, Seq: 7}) {
				if b.N != i || b.RepoKey != "acme" || b.Commit != "c1" || b.SnapshotSeq != 7 {
					t.Errorf("batch %d: %+v", i, b)
				}
				got = append(got, b.Paths)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("batches %v, want %s", got, tt.want)
			}
		})
	}
	t.Run("by message size", func(t *testing.T) {
		var files []contextindex.File
		for i := range 100 {
			files = append(files, file(fmt.Sprintf("%s%03d", long, i), 1))
		}
		for _, b := range (&Indexer{BatchFiles: 1000}).split("acme", Snapshot{Snapshot: contextindex.Snapshot{Files: files}}) {
			if raw, _ := json.Marshal(b); len(raw) > 256<<10 {
				t.Errorf("batch %d's message is %d bytes, over SQS's 256 KiB", b.N, len(raw))
			}
		}
	})
}

// testMemoryStream: the stream fixture's inserts are embedded per tenant;
// a failing embedder reports each tenant's first record for retry.
func testMemoryStream(t *testing.T, s3, empty *repotest.S3) {
	ctx := context.Background()
	srv, emb := embedtest.Start(t)
	ix := newIndexer(s3, emb, nil)
	st := ix.Store

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
	quiet := newIndexer(s3, emb, nil)
	quiet.Log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if _, err := quiet.Handle(ctx, fixture(t, "dynamodb-memory-inserts.json")); err != nil || logged.Len() > 0 {
		t.Errorf("a batch with a claim: %v, logged %q", err, logged.String())
	}
	// Without an embedder the stream is acknowledged and nothing stored.
	out, err = newIndexer(empty, nil, nil).Handle(ctx, fixture(t, "dynamodb-memory-inserts.json"))
	if err != nil || len(out.(events.DynamoDBEventResponse).BatchItemFailures) != 0 {
		t.Errorf("lexical only: %v %+v", err, out)
	}
}
