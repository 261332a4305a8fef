package repo_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// testPublishPrecise: the precise indexes Precise gives are uploaded
// beside the zip, named by the pointer and by the view the S3 source
// serves; a later push retires them, a rollback puts them back; pushing
// the commit again with another index names it, on the view in hand too.
func testPublishPrecise(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	r := reposcope.Ref{Tenant: "prec", Name: "web"}
	dir := repotest.WriteDir(t, fixture)
	scip := filepath.Join(t.TempDir(), "index.scip")
	os.WriteFile(scip, []byte("an index"), 0o600)
	var seen map[string][32]byte
	publish := func(commit string, files []repo.PreciseFile) repo.Pointer {
		t.Helper()
		out, err := repo.Publish(ctx, s.Objects(), repo.PublishInput{Repo: r, Commit: commit, Dir: dir, Paths: repotest.Files(t, dir),
			MaxBytes: 1 << 20, Now: time.Now(), Precise: func(ctx context.Context, snap repo.View) ([]repo.PreciseFile, error) {
				var err error
				seen, err = repo.Hashes(ctx, snap, nil)
				return files, err
			}})
		if err != nil || out.RetireErr != nil {
			t.Fatalf("publish %s: %v, %v", commit, err, out.RetireErr)
		}
		return out.Pointer
	}
	goIndex := repo.PreciseIndex{Root: "src", Language: "go", Indexer: "goscip"}
	web := repo.PreciseIndex{Root: "web", Language: "typescript", Indexer: "scip-typescript", Reason: "node is not installed", Unavailable: true}
	p1 := publish("c1", []repo.PreciseFile{{Index: goIndex, File: scip}, {Index: web}})

	sum := sha256.Sum256([]byte("an index"))
	sha := hex.EncodeToString(sum[:])
	want := []repo.PreciseIndex{goIndex, web}
	want[0].Key, want[0].SHA256, want[0].Bytes = "snapshots/prec/web/c1."+sha[:16]+".scip", sha, 8
	if !reflect.DeepEqual(p1.Precise, want) {
		t.Fatalf("the pointer names %+v, want %+v", p1.Precise, want)
	}
	if got := string(getObject(t, s, want[0].Key)); got != "an index" || tagOf(t, s, want[0].Key) != repo.Current {
		t.Errorf("the SCIP file: %q, tagged %q", got, tagOf(t, s, want[0].Key))
	}
	if len(seen) != len(searchablePaths) || seen["src/main.go"] != sha256.Sum256([]byte(fixture["src/main.go"])) {
		t.Errorf("Precise saw the hashes of %d files, want the %d searchable ones", len(seen), len(searchablePaths))
	}

	src := repo.NewS3(s.Objects(), repo.S3Options{Refresh: time.Nanosecond})
	view, err := src.Open(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, p, ok := repo.PointerOf(view); !ok || got != r || !reflect.DeepEqual(p.Precise, want) {
		t.Errorf("PointerOf: %v %+v %v", got, p, ok)
	}

	publish("c2", nil)
	if tagOf(t, s, want[0].Key) != repo.Retired {
		t.Errorf("c1's SCIP file is %q after c2's push, want retired", tagOf(t, s, want[0].Key))
	}
	rolled, err := repo.Rollback(ctx, s.Objects(), r, "c1", time.Now())
	if err != nil || !reflect.DeepEqual(rolled.Precise, want) || tagOf(t, s, want[0].Key) != repo.Current {
		t.Errorf("rolled back to c1: %+v, %v; its SCIP file %q", rolled.Precise, err, tagOf(t, s, want[0].Key))
	}

	list, err := repo.List(ctx, s.Objects(), r)
	if err != nil || len(list) != 2 || list[1].Commit != "c1" || len(list[1].SCIP) != 1 || list[1].SCIP[0].Key != want[0].Key || len(list[0].SCIP) != 0 {
		t.Errorf("List: %+v, %v", list, err)
	}

	// c1 again, with the web project's index: the zip is the same, and
	// the view in hand now names both.
	view, _ = src.Open(ctx, r)
	os.WriteFile(scip, []byte("another index"), 0o600)
	again := publish("c1", []repo.PreciseFile{{Index: goIndex, File: scip}, {Index: repo.PreciseIndex{Root: "web", Language: "typescript", Indexer: "scip-typescript"}, File: scip}})
	if tagOf(t, s, want[0].Key) != repo.Retired {
		t.Errorf("c1's first SCIP file is %q once c1 is pushed again without it, want retired", tagOf(t, s, want[0].Key))
	}
	for time.Sleep(time.Millisecond); ; time.Sleep(time.Millisecond) {
		v, err := src.Open(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, p, _ := repo.PointerOf(v); p.Seq == again.Seq {
			if v != view || !reflect.DeepEqual(p.Precise, again.Precise) {
				t.Errorf("the view of c1 pushed again: the same view %v, names %+v", v == view, p.Precise)
			}
			break
		}
	}
}

// TestHashes: Hashes of a snapshot whose files are not read yet (read one
// at a time, none kept) gives each searchable file's hash as Searchable's
// files do, of the files keep accepts; so does it once they are read.
func TestHashes(t *testing.T) {
	dir := repotest.WriteDir(t, fixture)
	zipPath := filepath.Join(t.TempDir(), "s.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Pack(f, dir, repotest.Files(t, dir), 1<<20); err != nil {
		t.Fatal(err)
	}
	size, _ := f.Seek(0, 1)
	snap, err := repo.OpenZipAt(f, size, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	inSrc := func(p string) bool { return strings.HasPrefix(p, "src/") }
	got, err := repo.Hashes(context.Background(), snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	unread, err := repo.Hashes(context.Background(), snap, inSrc)
	if err != nil {
		t.Fatal(err)
	}
	files, err := snap.Searchable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][32]byte{}
	for _, f := range files {
		want[f.Path] = f.Hash()
	}
	if !reflect.DeepEqual(got, want) || len(got) != len(searchablePaths) {
		t.Errorf("Hashes: %d files, Searchable %d", len(got), len(want))
	}
	read, err := repo.Hashes(context.Background(), snap, inSrc)
	if err != nil {
		t.Fatal(err)
	}
	maps.DeleteFunc(want, func(p string, _ [32]byte) bool { return !inSrc(p) })
	if !reflect.DeepEqual(unread, want) || !reflect.DeepEqual(read, want) || len(want) != 3 {
		t.Errorf("Hashes of src/: %v before the files are read, %v after; want %v", unread, read, want)
	}
}
