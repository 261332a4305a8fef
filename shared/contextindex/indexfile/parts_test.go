package indexfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// testParts stores an index built in two batches, resumes a part from
// its checkpoint, publishes it, and ranks the parts together exactly as
// the same files indexed whole.
func testParts(t *testing.T, blobs Blobs) {
	ctx := context.Background()
	s := NewStore(blobs)
	dir := snapshot(t, repotest.GoPackages(t, "container/list", "container/ring"), "")
	slices.SortFunc(dir.Files, func(a, b contextindex.File) int { return strings.Compare(a.Path, b.Path) })
	half := len(dir.Files) / 2
	batches := [][]contextindex.File{dir.Files[:half], dir.Files[half:]}
	_, emb := embedtest.Start(t)

	if _, err := s.Checkpoint(ctx, "acme", "c1", PartName(0)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no checkpoint yet: %v, want fs.ErrNotExist", err)
	}
	var parts []*contextindex.CodeIndex
	var infos []PartInfo
	for n, files := range batches {
		ix, _, err := contextindex.BuildCode(ctx, nil, contextindex.Snapshot{FS: dir.FS, Commit: "c1", Files: files}, emb, day(1))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			// A checkpoint of some vectors, read back as a retry would.
			var three []string
			for i := range 3 {
				three = append(three, contextindex.TextHash(ix.Segment.Doc(i).EmbedText()))
			}
			some := ix.Vectors.Subset(three)
			if err := s.SaveCheckpoint(ctx, "acme", "c1", PartName(n), some); err != nil {
				t.Fatal(err)
			}
			back, err := s.Checkpoint(ctx, "acme", "c1", PartName(n))
			if err != nil || back.Len() != 3 || back.Model != emb.Model() {
				t.Fatalf("checkpoint: %v, %v", back, err)
			}
			if _, err := s.PartVectors(ctx, "acme", "c1", PartName(n)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a checkpoint taken for the part's vectors: %v", err)
			}
		}
		if err := s.SavePart(ctx, "acme", "c1", PartName(n), ix); err != nil {
			t.Fatal(err)
		}
		back, err := s.LoadPart(ctx, "acme", "c1", PartName(n), true)
		if err != nil || back.Segment.Len() != ix.Segment.Len() || back.Vectors.Len() != ix.Vectors.Len() {
			t.Fatalf("part %d read back: %v", n, err)
		}
		if lexical, err := s.LoadPart(ctx, "acme", "c1", PartName(n), false); err != nil || lexical.Vectors != nil ||
			lexical.Segment.Len() != ix.Segment.Len() {
			t.Fatalf("part %d read back without its vectors: %v", n, err)
		}
		if v, err := s.PartVectors(ctx, "acme", "c1", PartName(n)); err != nil || v.Len() != ix.Vectors.Len() {
			t.Fatalf("part %d's vectors: %v", n, err)
		}
		parts = append(parts, back)
		infos = append(infos, PartInfo{Name: PartName(n), First: files[0].Path, Last: files[len(files)-1].Path,
			Files: len(files), Chunks: ix.Segment.Len(), Vectors: ix.Vectors.Len()})
	}
	if _, _, err := s.Pointer(ctx, "acme", ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a pointer before publishing: %v", err)
	}
	if _, err := s.Publish(ctx, "acme", Manifest{Commit: "c1"}); err == nil {
		t.Error("an index of no parts was published")
	}
	m := Manifest{Commit: "c1", BuiltAt: day(2), Model: emb.Model(), Parts: infos}
	if ok, err := s.Publish(ctx, "acme", m); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// A build that started before the one published never moves the
	// pointer back.
	if ok, err := s.Publish(ctx, "acme", Manifest{Commit: "c0", BuiltAt: day(1), Parts: infos}); ok || err != nil {
		t.Errorf("an older build was published: %v, %v", ok, err)
	}
	p, _, err := s.Pointer(ctx, "acme", "")
	if err != nil || p.Commit != "c1" || p.Parts != 2 || p.Chunks != Totals(infos).Chunks || p.Model != emb.Model() {
		t.Fatalf("pointer %+v, %v", p, err)
	}
	back, err := s.Manifest(ctx, "acme", "c1")
	if err != nil || len(back.Parts) != 2 || back.Parts[1] != infos[1] || !back.BuiltAt.Equal(m.BuiltAt) {
		t.Fatalf("manifest %+v, %v", back, err)
	}
	if _, err := s.Manifest(ctx, "acme", "c2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("manifest of an unbuilt commit: %v", err)
	}
	if err := s.SavePart(ctx, "acme", "c1", "../x", parts[0]); err == nil {
		t.Error("a part name that is not one key segment was accepted")
	}

	// The parts rank as the whole: same statistics, same vectors.
	whole, _, err := contextindex.BuildCode(ctx, nil, contextindex.Snapshot{FS: dir.FS, Commit: "c1", Files: dir.Files}, emb, day(1))
	if err != nil {
		t.Fatal(err)
	}
	split := contextindex.Join(contextindex.NewCodeCollection(emb.Model(), parts))
	one := contextindex.Join(contextindex.NewCollection(emb.Model(), []contextindex.Part{{Seg: whole.Segment}}, whole.Vectors))
	if split.Vectors() != one.Vectors() || split.Len() != one.Len() {
		t.Fatalf("parts: %d docs, %d vectors; whole: %d, %d", split.Len(), split.Vectors(), one.Len(), one.Vectors())
	}
	for _, q := range []string{"ring of elements", "doubly linked list", "MoveToFront"} {
		qv, err := contextindex.EmbedQuery(ctx, emb, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, vec := range [][]float32{nil, qv} {
			a, modeA := split.Search(contextindex.Query{Text: q, Vector: vec, Limit: 10})
			b, modeB := one.Search(contextindex.Query{Text: q, Vector: vec, Limit: 10})
			if len(a) == 0 || fmt.Sprint(withScores(a)) != fmt.Sprint(withScores(b)) || modeA != modeB {
				t.Errorf("%q (%s): parts rank %v, the whole %v", q, modeA, withScores(a), withScores(b))
			}
		}
	}
	if n := contextindex.Join(contextindex.NewCodeCollection("another-model", parts)).Vectors(); n != 0 {
		t.Errorf("vectors of another model were used: %d", n)
	}
}

// withScores lists hits as id@score.
func withScores(hits []contextindex.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s@%.6f", h.Doc.ID, h.Score)
	}
	return out
}

// testBuildRecord: the build record is created, updated conditionally by
// concurrent writers without losing one, and revalidated by ETag.
func testBuildRecord(t *testing.T, blobs Blobs) {
	ctx := context.Background()
	s := NewStore(blobs)
	if _, _, err := s.Build(ctx, "acme", ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no build yet: %v", err)
	}
	_, err := s.UpdateBuild(ctx, "acme", func(b *Build) bool {
		*b = Build{Commit: "c1", State: BuildRunning, Batches: 8, Started: day(1)}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for n := range 8 {
		wg.Go(func() {
			_, err := s.UpdateBuild(ctx, "acme", func(b *Build) bool { return b.AddDone(PartInfo{Name: PartName(n), Chunks: n}) })
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b, etag, err := s.Build(ctx, "acme", "")
	if err != nil || !b.Complete() || len(b.Done) != 8 || !b.IsDone(PartName(7)) || Totals(b.Done).Chunks != 28 {
		t.Fatalf("after 8 concurrent batches: %+v, %v", b, err)
	}
	if !slices.IsSortedFunc(b.Done, func(x, y PartInfo) int { return strings.Compare(x.Name, y.Name) }) {
		t.Errorf("done parts out of order: %+v", b.Done)
	}
	if b.AddDone(PartInfo{Name: PartName(3)}) {
		t.Error("a part was added twice")
	}
	if _, _, err := s.Build(ctx, "acme", etag); !errors.Is(err, ErrNotModified) {
		t.Errorf("revalidation: %v, want ErrNotModified", err)
	}
	left, err := s.UpdateBuild(ctx, "acme", func(*Build) bool { return false })
	if err != nil || left.Commit != "c1" {
		t.Errorf("a change that changes nothing: %+v, %v", left, err)
	}
}

// testPublishOrder: the pointer moves to the index of a later snapshot
// (by the snapshot pointer's number), whenever its build started, and
// never back to an earlier one; of the same snapshot, to the one built
// later. An index of another format is replaced.
func testPublishOrder(t *testing.T, blobs Blobs) {
	ctx := context.Background()
	s := NewStore(blobs)
	parts := []PartInfo{{Name: PartName(0), Files: 1, Chunks: 1}}
	old, _ := json.Marshal(Pointer{Commit: "c0", BuiltAt: day(9), Format: CodeFormat - 1, Parts: 1})
	if _, err := blobs.Put(ctx, "acme/"+PointerFile, old, ""); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name       string
		commit     string
		seq        int64
		builtAt    time.Time
		moved      bool
		wantCommit string
	}{
		{"over an index of another format", "c1", 10, day(1), true, "c1"},
		{"an earlier snapshot built later", "c0", 5, day(3), false, "c1"},
		{"a later snapshot whose build started earlier", "c2", 20, day(1), true, "c2"},
		{"the same snapshot, built earlier", "c2", 20, day(1).Add(-time.Hour), false, "c2"},
		{"the same snapshot, built later", "c2", 20, day(2), true, "c2"},
		{"a snapshot without a number", "c3", 0, day(5), false, "c2"},
	} {
		moved, err := s.Publish(ctx, "acme", Manifest{Commit: step.commit, SnapshotSeq: step.seq, BuiltAt: step.builtAt, Parts: parts})
		p, _, perr := s.Pointer(ctx, "acme", "")
		if err != nil || perr != nil || moved != step.moved || p.Commit != step.wantCommit {
			t.Errorf("%s: moved %v (%v), pointer %+v (%v); want moved %v, %s", step.name, moved, err, p, perr, step.moved, step.wantCommit)
		}
	}
	if p, _, _ := s.Pointer(ctx, "acme", ""); p.SnapshotSeq != 20 || !p.BuiltAt.Equal(day(2)) {
		t.Errorf("the pointer %+v, want snapshot 20 built on day 2", p)
	}
}
