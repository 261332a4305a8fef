//go:build unix

package repo_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// TestLocalRefusesSpecialFiles: a named pipe in a working tree (at a file's
// place, as git's HEAD, or put in place of a file after the walk) is never
// opened: every operation that would read it fails at once with
// INVALID_INPUT saying it is not a regular file, and no call is left
// waiting for a writer (each such call held an OS thread for good).
func TestLocalRefusesSpecialFiles(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n", "later.go": "package a\n", ".git/refs/heads/main": "x\n"})
	pipes := []string{"pipe.go", "sub/go.mod", ".git/HEAD"}
	for _, p := range pipes {
		mkfifo(t, filepath.Join(dir, filepath.FromSlash(p)))
	}
	view, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { view.Close() })
	if got := searchPaths(t, view); !slices.Equal(got, []string{"a.go", "later.go"}) {
		t.Errorf("searchable %q, want a.go and later.go", got)
	}
	// A file replaced by a pipe after the walk.
	later := filepath.Join(dir, "later.go")
	if err := os.Remove(later); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, later)
	pipes = append(pipes, "later.go")

	for _, name := range []string{"pipe.go", "sub/go.mod", "later.go"} {
		errs := returns(t, filepath.Join(dir, filepath.FromSlash(name)), func() map[string]error {
			errs := operations(view, name)
			delete(errs, "Stat") // describing a pipe opens nothing
			delete(errs, "Lstat")
			delete(errs, "ReadLink")
			return errs
		})
		for op, err := range errs {
			te := toolerr.From(errors.Unwrap(err))
			if _, ok := errors.AsType[*fs.PathError](err); !ok || te.Code != toolerr.InvalidInput ||
				!strings.Contains(te.Message, name+" is not a regular file but a named pipe") {
				t.Errorf("%s(%s): %v, want a *fs.PathError with INVALID_INPUT saying it is not a regular file", op, name, err)
			}
		}
	}
	if got := returns(t, filepath.Join(dir, ".git", "HEAD"), view.Commit); got != "" {
		t.Errorf("Commit() = %q with a pipe as HEAD", got)
	}
	for _, p := range pipes {
		if waiting(t, filepath.Join(dir, filepath.FromSlash(p))) {
			t.Errorf("a reader is left waiting on the pipe %s", p)
		}
	}
}

// mkfifo makes a named pipe at p.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// returns runs fn and returns what it returns. Until fn returns, it looks
// for fn waiting on the pipe at fifo: if it is (waiting says so, and lets
// it go), the test fails. No timer decides: fn is given whatever time it
// takes, and a wait is seen whenever it comes.
func returns[T any](t *testing.T, fifo string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	for {
		select {
		case got := <-done:
			return got
		case <-time.After(10 * time.Millisecond): // how often to look
		}
		if waiting(t, fifo) {
			t.Fatalf("reading %s waits for a writer", fifo)
		}
	}
}

// waiting reports whether some reader holds the pipe at p open, or waits
// to: a writer may then open it without waiting (ENXIO otherwise). Such a
// writer lets a waiting reader go, and closes at once.
func waiting(t *testing.T, p string) bool {
	t.Helper()
	w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return false
	}
	if err != nil {
		t.Fatalf("open %s for writing: %v", p, err)
	}
	w.Close()
	return true
}
