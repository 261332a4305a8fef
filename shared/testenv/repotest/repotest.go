// Package repotest builds repositories for tests: a fixture written to a
// directory, and the same files published as a zip snapshot to an S3
// emulator, so a test can run on both sources.
package repotest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// ModTime is the modification time WriteDir gives every file.
var ModTime = time.Date(2025, 1, 15, 9, 0, 0, 0, time.UTC)

// WriteDir writes files (slash path → content) under a new temporary
// directory, each modified at ModTime, and returns the directory.
func WriteDir(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chtimes(p, ModTime, ModTime); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// GoPackages copies the non-test .go files of some packages of the Go
// source tree (import paths such as "container/list") under a new
// temporary directory and returns it: real code, of a known shape, for
// tests that index or search a repository.
func GoPackages(tb testing.TB, pkgs ...string) string {
	tb.Helper()
	dst := tb.TempDir()
	for _, pkg := range pkgs {
		src := filepath.Join(runtime.GOROOT(), "src", filepath.FromSlash(pkg))
		entries, err := os.ReadDir(src)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				tb.Fatal(err)
			}
			to := filepath.Join(dst, filepath.FromSlash(pkg), e.Name())
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(to, data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dst
}

// Files lists every regular file and symbolic link under dir, as slash
// paths (what a push of an untracked checkout would offer to Pack).
func Files(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// S3 is a bucket on a running moto_server.
type S3 struct {
	Moto   *emulator.Moto
	Bucket string
}

// StartS3 runs moto_server for the test and makes a bucket. Start it once
// per package (in its one top-level test, or TestMain) and share it
// between subtests.
func StartS3(tb testing.TB) *S3 {
	tb.Helper()
	m := emulator.StartMoto(tb)
	return &S3{Moto: m, Bucket: m.NewBucket(tb)}
}

// Objects is the bucket, for the objects package.
func (s *S3) Objects() *objects.Bucket { return objects.New(s.Moto.S3(), s.Bucket) }

// Publish packs every file of dir and makes it the current snapshot of
// tenant's default repository.
func (s *S3) Publish(tb testing.TB, tenant, commit, dir string) repo.Pointer {
	tb.Helper()
	return s.PublishRepo(tb, reposcope.DefaultOf(tenant), commit, dir)
}

// PublishRepo packs every file of dir and makes it the current snapshot
// of the repository r.
func (s *S3) PublishRepo(tb testing.TB, r reposcope.Ref, commit, dir string) repo.Pointer {
	tb.Helper()
	out, err := repo.Publish(context.Background(), s.Objects(), repo.PublishInput{
		Repo: r, Commit: commit, Dir: dir,
		Paths: Files(tb, dir), MaxBytes: repo.DefaultMaxBytes, Now: ModTime,
	})
	if err != nil {
		tb.Fatalf("publish %s for %s: %v", commit, r, err)
	}
	return out.Pointer
}

// Source returns an S3 source over the bucket.
func (s *S3) Source(o repo.S3Options) *repo.S3 {
	return repo.NewS3(s.Objects(), o)
}

// Local serves dir as a live local view to every tenant, closed when tb
// ends.
func Local(tb testing.TB, dir string) repo.Shared {
	tb.Helper()
	local, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { local.Close() })
	return repo.Shared{View: local}
}

// Named is a source with a name for subtests.
type Named struct {
	Name   string
	Source repo.Source
}

// Sources returns the same files twice: the directory dir through a Local
// source, and dir published as tenant's snapshot (commit "fixture") through
// an S3 source.
func (s *S3) Sources(tb testing.TB, tenant, dir string) []Named {
	tb.Helper()
	s.Publish(tb, tenant, "fixture", dir)
	return []Named{{"local", Local(tb, dir)}, {"s3", s.Source(repo.S3Options{})}}
}
