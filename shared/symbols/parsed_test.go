package symbols_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestParsedIsTheTablesParse: another reader of a view's symbols (a code
// index) gets the table's own parse of each file, waiting for the table
// to come to it, so that every file is parsed once; a file the table will
// not have (of an older version of the view, or once the table is
// closed) is parsed on the spot; a file without symbols is nil at once.
func TestParsedIsTheTablesParse(t *testing.T) {
	requireTreeSitter(t)
	dir := repotest.WriteDir(t, tableFiles)
	v, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	table := symbols.NewTable(v, nil, nil)
	t.Cleanup(table.Close)
	ctx := context.Background()
	version := v.Version()
	files, err := v.Searchable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*symbols.File{}
	for _, f := range files { // while the table is built
		p, ok := table.Parsed(ctx, f, version)
		if !ok || (p == nil) == symbols.Supports(f.Path) || p != nil && !p.Of(f) {
			t.Errorf("%s: %+v, %v", f.Path, p, ok)
		}
		parsed[f.Path] = p
	}
	st := settled(t, table)
	for path, p := range parsed {
		if p != nil && p != st.File(path) {
			t.Errorf("%s: not the table's parse", path)
		}
	}
	if n := table.Parses.Load(); n != 3 || len(parsed) != 4 {
		t.Errorf("%d parses of %d files, want 3 (README.md has no symbols)", n, len(parsed))
	}

	// A file the view has moved past is parsed on the spot.
	old := fileAt(t, files, "a/reader.go")
	if err := os.WriteFile(filepath.Join(dir, old.Path), []byte("package a\n\nfunc Changed() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); v.Version() == version; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view never saw the change")
		}
	}
	settled(t, table)
	before := table.Parses.Load()
	if p, ok := table.Parsed(ctx, old, version); !ok || p == nil || !p.Of(old) || table.Parses.Load() != before+1 {
		t.Errorf("a file of an older version: %+v, %v; %d parses, want %d", p, ok, table.Parses.Load(), before+1)
	}

	// Once closed, the table gives what it holds, and a file it never
	// came to is parsed on the spot.
	table.Close()
	version = v.Version()
	if err := os.WriteFile(filepath.Join(dir, "c.go"), []byte("package a\n\nfunc C() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); v.Version() == version; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view never saw the new file")
		}
	}
	now, _ := v.Searchable(ctx)
	if p, ok := table.Parsed(ctx, fileAt(t, now, "b/reader.py"), v.Version()); !ok || p != parsed["b/reader.py"] || table.Parses.Load() != before+1 {
		t.Errorf("once the table is closed, a file it holds: %+v, %v", p, ok)
	}
	if p, ok := table.Parsed(ctx, fileAt(t, now, "c.go"), v.Version()); !ok || p == nil || len(p.Symbols) != 1 || table.Parses.Load() != before+2 {
		t.Errorf("once the table is closed, a new file: %+v, %v", p, ok)
	}
}

// fileAt returns the file of files at p.
func fileAt(t *testing.T, files []*repo.File, p string) *repo.File {
	t.Helper()
	i := slices.IndexFunc(files, func(f *repo.File) bool { return f.Path == p })
	if i < 0 {
		t.Fatalf("no file %s", p)
	}
	return files[i]
}

// TestParsedWaitsForTheTable: while the table has not come to a file, a
// reader waits for it, until its context ends.
func TestParsedWaitsForTheTable(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	v, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	store := &blockingStore{release: make(chan struct{})}
	table := symbols.NewTable(v, store, nil) // reads its stored table until released
	t.Cleanup(table.Close)
	files, err := v.Searchable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, ok := table.Parsed(ctx, files[0], v.Version()); ok || p != nil || table.Parses.Load() != 0 {
		t.Errorf("before the table came to the file: %+v, %v", p, ok)
	}
	close(store.release)
	if p, ok := table.Parsed(context.Background(), files[0], v.Version()); !ok || p == nil || table.Parses.Load() != 1 {
		t.Errorf("once it did: %+v, %v; %d parses", p, ok, table.Parses.Load())
	}
}

// blockingStore holds nothing, and answers no Load until released.
type blockingStore struct{ release chan struct{} }

func (b *blockingStore) Load(ctx context.Context) ([]byte, error) {
	select {
	case <-b.release:
		return nil, fs.ErrNotExist
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (*blockingStore) Save(context.Context, []byte) error { return nil }
