package indexer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// preciseRepo is a repository holding precise's Go fixture module in src/
// and a README; its SCIP index (the Go emitter's, made in src/) is made
// once.
var preciseRepo struct {
	once sync.Once
	dir  string
	scip []byte
	err  error
}

// fixtureRepo returns the repository's folder and the SCIP index of src/.
func fixtureRepo(t *testing.T) (string, []byte) {
	t.Helper()
	preciseRepo.once.Do(func() {
		dir, err := os.MkdirTemp("", "precise-repo-")
		if err == nil {
			err = os.CopyFS(filepath.Join(dir, "src"), os.DirFS("../precise/testdata/fixture"))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "README.md"), []byte("# shapes\n"), 0o644)
		}
		var out bytes.Buffer
		if err == nil {
			_, err = goscip.Emit(context.Background(), filepath.Join(dir, "src"), nil, &out, goscip.Options{Tests: true, ModuleVersion: "c1"})
		}
		preciseRepo.dir, preciseRepo.scip, preciseRepo.err = dir, out.Bytes(), err
	})
	if preciseRepo.err != nil {
		t.Fatal(preciseRepo.err)
	}
	return preciseRepo.dir, preciseRepo.scip
}

// goIndex is how push records the Go emitter's index of src/.
var goIndex = repo.PreciseIndex{Root: "src", Language: "go", Indexer: "goscip"}

// pushPrecise publishes dir as acme's commit with a SCIP file of content
// scip described by x (and, when more are given, those too).
func pushPrecise(t *testing.T, s3 *repotest.S3, commit, dir string, x repo.PreciseIndex, scip []byte) repo.Pointer {
	t.Helper()
	file := filepath.Join(t.TempDir(), "index.scip")
	if err := os.WriteFile(file, scip, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := repo.Publish(context.Background(), s3.Objects(), repo.PublishInput{Repo: reposcope.DefaultOf("acme"), Commit: commit, Dir: dir,
		Paths: repotest.Files(t, dir), MaxBytes: repo.DefaultMaxBytes, Now: time.Now(),
		Precise: func(context.Context, repo.View) ([]repo.PreciseFile, error) {
			return []repo.PreciseFile{{Index: x, File: file}, {Index: repo.PreciseIndex{Root: ".", Language: "python", Indexer: "scip-python", Reason: "node is not installed", Unavailable: true}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Pointer
}

// preciseIndexer is an indexer converting precise indexes into the bucket.
func preciseIndexer(t *testing.T, s3 *repotest.S3, q Queue) *Indexer {
	ix := newIndexer(s3, nil, q)
	ix.Precise = &Precise{Bucket: s3.Objects(), TempDir: t.TempDir(), MemoryBytes: 64 << 10, MaxBytes: 64 << 20}
	return ix
}

// preciseJobs removes the precise messages from q and returns them.
func preciseJobs(t *testing.T, q *memQueue) [][]byte {
	t.Helper()
	var out [][]byte
	for _, b := range q.take() {
		if bytes.HasPrefix(b, []byte(`{"precise"`)) {
			out = append(out, b)
		}
	}
	return out
}

// status reads the status of acme's p.Precise[0].
func status(t *testing.T, s3 *repotest.S3, p repo.Pointer) (precisebucket.Status, bool) {
	t.Helper()
	st, ok, err := precisebucket.ReadStatus(context.Background(), s3.Objects(), precisebucket.StatusKey("acme", p.Commit, p.Precise[0]))
	if err != nil {
		t.Fatal(err)
	}
	return st, ok
}

// testPrecise: a pushed snapshot's SCIP file is queued once, converted by
// the message into a store of the repository's tenant, by the files'
// paths from the repository's root, with their hashes; its status is
// written last. Events and messages delivered again change nothing, and
// without a queue the indexer converts it itself.
func testPrecise(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	dir, scip := fixtureRepo(t)
	p := pushPrecise(t, s3, "c1", dir, goIndex, scip)
	q := &memQueue{}
	ix := preciseIndexer(t, s3, q)
	published(t, ix)
	jobs := preciseJobs(t, q)
	if len(jobs) != 1 {
		t.Fatalf("%d precise messages, want 1 (the project push could not index has none)", len(jobs))
	}
	if _, ok := status(t, s3, p); ok {
		t.Fatal("a status before the conversion")
	}
	deliver(t, ix, jobs[0])
	st, ok := status(t, s3, p)
	if !ok || st.State != precisebucket.Ready || st.SCIPBytes != int64(len(scip)) || st.Documents != 3 || st.Skipped != 0 {
		t.Fatalf("status %+v, %v", st, ok)
	}
	r := objects.NewRangeReader(s3.Objects(), objects.Info{Key: st.Store, Size: st.Bytes, ETag: st.ETag}, 1<<20)
	store, err := precise.Open(ctx, r, st.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "src/cmd/app/main.go"))
	doc, ok := store.Document("src/cmd/app/main.go")
	if store.Tenant() != "acme" || store.Commit() != "c1" || !ok || doc.Changed(sha256Of(main)) {
		t.Errorf("store of %q at %s; main.go %+v, %v", store.Tenant(), store.Commit(), doc, ok)
	}
	occs, err := store.At(ctx, "src/cmd/app/main.go", 12, 15) // shapes.Square{Side: 2}
	if err != nil || len(occs) == 0 || !strings.HasSuffix(occs[0].Symbol, "`example.com/fixture/shapes`/Square#") {
		t.Errorf("At main.go:12:15: %+v, %v", occs, err)
	}

	published(t, ix)
	if n := len(preciseJobs(t, q)); n != 0 {
		t.Errorf("an event delivered again queued %d precise messages", n)
	}
	deliver(t, ix, jobs[0])
	if again, _ := status(t, s3, p); again.Converted != st.Converted {
		t.Error("a message delivered again converted the index again")
	}

	p2 := pushPrecise(t, s3, "c2", dir, goIndex, scip)
	inline := preciseIndexer(t, s3, nil)
	published(t, inline)
	if st, ok := status(t, s3, p2); !ok || st.State != precisebucket.Ready {
		t.Errorf("converted without a queue: %+v, %v", st, ok)
	}
}

// testPreciseRefused: a SCIP file that is not SCIP, is over the size
// limit, names no file of the snapshot, or is not the one the pointer
// names, is recorded failed, saying why; the message is done with.
func testPreciseRefused(t *testing.T, s3 *repotest.S3) {
	dir, scip := fixtureRepo(t)
	tests := []struct {
		name, commit string
		x            repo.PreciseIndex
		scip         []byte
		max          int64
		replace      []byte
		why          string
	}{
		{"not SCIP", "n1", repo.PreciseIndex{Root: ".", Indexer: repo.Uploaded, Languages: []string{"go"}}, []byte("hello, world"), 0, nil, "not a SCIP index"},
		{"too large", "n2", goIndex, scip, int64(len(scip) / 2), nil, "SCIP index too large"},
		{"outside", "n3", repo.PreciseIndex{Root: "elsewhere", Language: "go", Indexer: "goscip"}, scip, 0, nil, "none of its 3 documents is a file of the snapshot"},
		{"replaced", "n4", goIndex, scip, 0, append(slices.Clone(scip), scip...), "is not the one the snapshot's pointer names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pushPrecise(t, s3, tt.commit, dir, tt.x, tt.scip)
			if tt.replace != nil {
				if _, err := s3.Objects().Put(context.Background(), p.Precise[0].Key, tt.replace, objects.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			ix := preciseIndexer(t, s3, nil)
			if tt.max > 0 {
				ix.Precise.MaxBytes = tt.max
			}
			published(t, ix)
			if st, ok := status(t, s3, p); !ok || st.State != precisebucket.Failed || !strings.Contains(st.Reason, tt.why) {
				t.Errorf("status %+v, %v; want failed saying %q", st, ok, tt.why)
			}
		})
	}
}

// testPreciseOrder: the conversion of a snapshot a later one replaced is
// dropped, unless the later one names the same SCIP file of the same
// commit; a conversion that ends after a later snapshot's never changes
// what that snapshot's readers read (each has its own objects).
func testPreciseOrder(t *testing.T, s3 *repotest.S3) {
	dir, scip := fixtureRepo(t)
	q := &memQueue{}
	ix := preciseIndexer(t, s3, q)
	p1 := pushPrecise(t, s3, "c1", dir, goIndex, scip)
	published(t, ix)
	late := preciseJobs(t, q)
	p2 := pushPrecise(t, s3, "c2", dir, goIndex, scip)
	published(t, ix)
	drain(t, ix, q)
	deliver(t, ix, late[0])
	if _, ok := status(t, s3, p1); ok {
		t.Error("the conversion of a replaced snapshot was not dropped")
	}
	st2, ok := status(t, s3, p2)
	if !ok || st2.State != precisebucket.Ready {
		t.Fatalf("c2: %+v, %v", st2, ok)
	}

	// c2 pushed again with the same file (a push that changed nothing
	// else): its late message still converts, being current.
	p3 := pushPrecise(t, s3, "c3", dir, goIndex, scip)
	published(t, ix)
	pending := preciseJobs(t, q)
	again := pushPrecise(t, s3, "c3", dir, goIndex, scip)
	if again.Seq <= p3.Seq || again.Precise[0].Key != p3.Precise[0].Key {
		t.Fatalf("c3 pushed again: %+v after %+v", again, p3)
	}
	deliver(t, ix, pending[0])
	if st, ok := status(t, s3, again); !ok || st.State != precisebucket.Ready {
		t.Errorf("c3's conversion after c3 was pushed again with the same file: %+v, %v", st, ok)
	}
	if st, _ := status(t, s3, p2); st.Converted != st2.Converted || st.Store != st2.Store {
		t.Errorf("c2's status changed: %+v", st)
	}
	var m preciseMessage
	if err := json.Unmarshal(late[0], &m); err != nil || m.Precise.SnapshotSeq != p1.Seq {
		t.Errorf("the message names the snapshot it is of: %s", late[0])
	}
}

func sha256Of(b []byte) [32]byte { return sha256.Sum256(b) }
