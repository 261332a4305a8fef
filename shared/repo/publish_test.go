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
