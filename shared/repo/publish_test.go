package repo_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// testInterruptedPublish publishes a zip that moves in parts, through a
// proxy, and interrupts it: during the upload it leaves no zip and no
// upload in progress; between the zip and the pointer it leaves the zip,
// listed and not current; either way the pointer stays, and publishing
// the same commit again works.
func testInterruptedPublish(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	proxy := emulator.StartProxy(t, s.Moto.Endpoint)
	b := objects.NewParts(emulator.S3Client(proxy.URL()), s.Bucket, objects.Parts{Threshold: 8 << 10, Size: 4 << 10, Concurrency: 2})
	dir := repotest.WriteDir(t, nil)
	for _, name := range []string{"a.bin", "b.bin", "c.bin"} {
		data := make([]byte, 8<<10)
		rand.Read(data) // a zip of about 24 KiB: six parts
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(ctx context.Context, commit string) error {
		_, err := repo.Publish(ctx, b, repo.PublishInput{Repo: reposcope.DefaultOf("stopped"), Commit: commit, Dir: dir,
			Paths: repotest.Files(t, dir), MaxBytes: 1 << 20, Now: time.Now()})
		return err
	}
	// interrupt makes publish fail as the first request match picks is on
	// its way: its context ends.
	interrupt := func(commit string, match func(*http.Request) bool) error {
		stopped, stop := context.WithCancel(ctx)
		defer stop()
		proxy.Hold(1, func(r *http.Request) bool {
			if match(r) {
				stop()
				return true
			}
			return false
		}, emulator.Forever)
		defer proxy.Pass()
		return publish(stopped, commit)
	}
	state := func(wantCurrent string, wantZips ...string) {
		t.Helper()
		if p, _, err := repo.ReadPointer(ctx, b, reposcope.DefaultOf("stopped")); err != nil || p.Commit != wantCurrent {
			t.Errorf("the pointer names %q (%v), want %q", p.Commit, err, wantCurrent)
		}
		list, err := repo.List(ctx, b, reposcope.DefaultOf("stopped"))
		var zips []string
		for _, z := range list {
			zips = append(zips, z.Commit)
		}
		if err != nil || strings.Join(zips, ",") != strings.Join(wantZips, ",") {
			t.Errorf("zips %v (%v), want %v", zips, err, wantZips)
		}
		uploads, err := s.Moto.S3().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.Bucket})
		if err != nil || len(uploads.Uploads) != 0 {
			t.Errorf("uploads in progress: %d, %v", len(uploads.Uploads), err)
		}
	}
	if err := publish(ctx, "c1"); err != nil {
		t.Fatal(err)
	}

	secondPart := func(r *http.Request) bool { return r.URL.Query().Get("partNumber") == "2" }
	if err := interrupt("c2", secondPart); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted during the upload: %v, want context.Canceled", err)
	}
	state("c1", "c1")

	pointer := func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+repo.PointerKey(reposcope.DefaultOf("stopped")))
	}
	err := interrupt("c3", pointer)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "c3.zip is uploaded, but moving") {
		t.Errorf("interrupted before the pointer: %v, want context.Canceled, saying the zip is there", err)
	}
	state("c1", "c3", "c1")

	for _, commit := range []string{"c3", "c2"} {
		if err := publish(ctx, commit); err != nil {
			t.Fatalf("publishing %s again: %v", commit, err)
		}
	}
	state("c2", "c2", "c3", "c1")
	snap, err := repo.NewS3(b, repo.S3Options{}).Open(ctx, reposcope.DefaultOf("stopped"))
	if err != nil || snap.Commit() != "c2" {
		t.Fatalf("open after the pushes: %v", err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "b.bin"))
	if got, err := fs.ReadFile(snap, "b.bin"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("b.bin in the snapshot: %d bytes, %v; want the file", len(got), err)
	}
}

// testPointerNumbers: each push and rollback numbers the pointer after the
// one it replaces, whatever the clock of the machine that writes it, and a
// push another one overtakes between reading the pointer and moving it
// reads it again: the later pointer always has the larger number.
func testPointerNumbers(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	r := reposcope.DefaultOf("numbered")
	dir := repotest.WriteDir(t, map[string]string{"a.txt": "a\n"})
	proxy := emulator.StartProxy(t, s.Moto.Endpoint)
	direct, viaProxy := s.Objects(), objects.New(emulator.S3Client(proxy.URL()), s.Bucket)
	publish := func(b *objects.Bucket, commit string, now time.Time) (repo.Pointer, error) {
		out, err := repo.Publish(ctx, b, repo.PublishInput{Repo: r, Commit: commit, Dir: dir,
			Paths: repotest.Files(t, dir), MaxBytes: 1 << 20, Now: now})
		return out.Pointer, err
	}
	clock := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var got []repo.Pointer
	for _, push := range []struct {
		commit string
		now    time.Time
	}{
		{"c1", clock},
		{"c2", clock.Add(-time.Hour)}, // a machine whose clock is an hour behind
	} {
		p, err := publish(direct, push.commit, push.now)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	rolled, err := repo.Rollback(ctx, direct, r, "c1", clock.Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rolled)

	// c3's push is overtaken by c4's, from a machine with the same clock,
	// between reading the pointer and writing it.
	var overtaking repo.Pointer
	proxy.Hold(1, func(req *http.Request) bool {
		if req.Method != http.MethodPut || !strings.HasSuffix(req.URL.Path, "/"+repo.PointerKey(r)) {
			return false
		}
		if overtaking, err = publish(direct, "c4", clock); err != nil {
			t.Errorf("the overtaking push: %v", err)
		}
		return true
	}, 0)
	last, err := publish(viaProxy, "c3", clock)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, overtaking, last)

	var seqs []int64
	for _, p := range got {
		seqs = append(seqs, p.Seq)
	}
	if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) || seqs[0] != clock.UnixMilli() {
		t.Errorf("pointer numbers %v (c1, c2, rollback to c1, c4, c3): want increasing from %d", seqs, clock.UnixMilli())
	}
	if cur, _, err := repo.ReadPointer(ctx, direct, r); err != nil || cur.Commit != "c3" || cur.Seq != last.Seq {
		t.Errorf("the pointer: %+v, %v; want c3's, numbered %d", cur, err, last.Seq)
	}
}

// testUnnumberedPointer: a pointer written without a number (by an
// earlier version) reads as numbered by its creation time, in
// milliseconds, and a push after it, from a machine whose clock is
// behind, is numbered after that.
func testUnnumberedPointer(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	r := reposcope.DefaultOf("unnumbered")
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	old := `{"commit":"c1","key":"` + repo.ZipKey(r, "c1") + `","files":1,"created":"` + created.Format(time.RFC3339Nano) + `"}`
	if _, err := s.Objects().Put(ctx, repo.PointerKey(r), []byte(old), objects.PutOptions{ContentType: "application/json"}); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := repo.ReadPointer(ctx, s.Objects(), r); err != nil || !ok || p.Seq != created.UnixMilli() {
		t.Fatalf("the unnumbered pointer reads as %+v, %v, %v; want it numbered %d", p, ok, err, created.UnixMilli())
	}
	dir := repotest.WriteDir(t, map[string]string{"a.txt": "a\n"})
	out, err := repo.Publish(ctx, s.Objects(), repo.PublishInput{Repo: r, Commit: "c2", Dir: dir,
		Paths: repotest.Files(t, dir), MaxBytes: 1 << 20, Now: created.Add(-time.Hour)})
	if err != nil || out.Pointer.Seq != created.UnixMilli()+1 {
		t.Errorf("the push after it: %+v, %v; want it numbered %d", out.Pointer, err, created.UnixMilli()+1)
	}
}
