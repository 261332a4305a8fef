package symbols_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// tableOf returns the symbol table of a live view of dir, not built yet.
func tableOf(t *testing.T, dir string) (*symbols.Table, *repo.Local) {
	t.Helper()
	v, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	table := symbols.NewTable(v, nil, nil)
	t.Cleanup(table.Close)
	return table, v
}

// settled builds the table (a few seconds at most) until it shows the view.
func settled(t *testing.T, table *symbols.Table) *symbols.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := table.Build(ctx, 0)
	if !st.Progress.Ready {
		t.Fatalf("the table is not ready: %+v", st.Progress)
	}
	return st
}

// requireTreeSitter skips a test whose files are not all Go in a build
// without tree-sitter.
func requireTreeSitter(t *testing.T) {
	t.Helper()
	if missing := symbols.Missing(); len(missing) > 0 {
		t.Skipf("built without cgo: no symbols in %v", missing)
	}
}

// names returns "path:container.name" of each hit.
func names(hits []symbols.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%s.%s", h.File.Path, h.Symbol.Container, h.Symbol.Name))
	}
	return out
}

var tableFiles = map[string]string{
	"a/reader.go":  "package a\n\n// Reader reads.\ntype Reader struct{ buf []byte }\n\nfunc (r *Reader) ReadLine() string { return \"\" }\n\nfunc NewReader() *Reader { return nil }\n\nvar reader Reader\n",
	"b/reader.py":  "class Reader:\n    def read_line(self):\n        pass\n\ndef readAll():\n    pass\n",
	"web/app.ts":   "export class ReaderView {}\nexport function readerOf(x: number) { return x; }\n",
	"README.md":    "# Reader\n",
	"gen/.ignored": "",
}

func TestFind(t *testing.T) {
	requireTreeSitter(t)
	table, _ := tableOf(t, repotest.WriteDir(t, tableFiles))
	st := settled(t, table)
	if st.Progress.FilesTotal != 3 || st.Progress.FilesParsed != 3 {
		t.Errorf("progress %+v, want 3 files of 3", st.Progress)
	}
	goOnly := func(p string) bool { return filepath.Ext(p) == ".go" }
	tests := []struct {
		name string
		q    symbols.Query
		want []string
	}{
		{"exact", symbols.Query{Name: "Reader", Match: symbols.Exact, CaseSensitive: true},
			[]string{"a/reader.go:.Reader", "b/reader.py:.Reader"}},
		{"exact, any case, the same case first", symbols.Query{Name: "Reader", Match: symbols.Exact},
			[]string{"a/reader.go:.Reader", "b/reader.py:.Reader", "a/reader.go:.reader"}},
		{"prefix", symbols.Query{Name: "Read", Match: symbols.Prefix, CaseSensitive: true},
			[]string{"a/reader.go:.Reader", "a/reader.go:Reader.ReadLine", "b/reader.py:.Reader", "web/app.ts:.ReaderView"}},
		{"prefix, any case", symbols.Query{Name: "readl", Match: symbols.Prefix},
			[]string{"a/reader.go:Reader.ReadLine"}},
		{"substring, kinds", symbols.Query{Name: "reader", Match: symbols.Substring, Kinds: []symbols.Kind{symbols.Function}},
			[]string{"web/app.ts:.readerOf", "a/reader.go:.NewReader"}},
		{"substring, one language", symbols.Query{Name: "read", Match: symbols.Substring, Keep: goOnly},
			[]string{"a/reader.go:.Reader", "a/reader.go:Reader.ReadLine", "a/reader.go:.reader", "a/reader.go:.NewReader"}},
		{"nothing", symbols.Query{Name: "Writer", Match: symbols.Exact}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := st.Find(context.Background(), tt.q)
			if got := names(hits); err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v (%v), want %v", got, err, tt.want)
			}
		})
	}
	if f := st.File("b/reader.py"); f == nil || len(f.Symbols) != 3 || f.Symbols[1].Kind != symbols.Method {
		t.Errorf("outline of b/reader.py: %+v", f)
	}
	// A table's file reads its text from the view's file, with or without
	// holding it.
	f := st.File("a/reader.go")
	for _, g := range []*symbols.File{f, f.WithText()} {
		if g.Text() != tableFiles["a/reader.go"] || g.Signature(g.Symbols[0]) != "type Reader struct{ buf []byte }" || g.Doc(g.Symbols[0]) != "Reader reads." {
			t.Errorf("a/reader.go: text %q, signature %q, doc %q", g.Text(), g.Signature(g.Symbols[0]), g.Doc(g.Symbols[0]))
		}
	}
}

// TestFollowsTheView: a change is parsed again, nothing else is; a new
// file is found, a removed one is gone.
func TestFollowsTheView(t *testing.T) {
	requireTreeSitter(t)
	dir := repotest.WriteDir(t, tableFiles)
	table, view := tableOf(t, dir)
	settled(t, table)
	if n := table.Parses.Load(); n != 3 {
		t.Fatalf("%d parses, want 3", n)
	}
	write := func(p, text string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("web/app.ts", "export class WriterView {}\n")
	write("a/new.rs", "pub fn write_all() {}\n")
	if err := os.Remove(filepath.Join(dir, "b/reader.py")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := settled(t, table)
		hits, _ := st.Find(context.Background(), symbols.Query{Name: "write", Match: symbols.Substring})
		gone, _ := st.Find(context.Background(), symbols.Query{Name: "read_line", Match: symbols.Exact})
		if got := names(hits); slices.Equal(got, []string{"a/new.rs:.write_all", "web/app.ts:.WriterView"}) && len(gone) == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after the changes (view version %d): %v; read_line %v", view.Version(), got, names(gone))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := table.Parses.Load(); n != 5 {
		t.Errorf("%d parses, want 5: the two changed files parsed again, no other", n)
	}
}

// snapshots publishes snapshots to a moto_server bucket, served by an S3
// source whose clock the test moves.
type snapshots struct {
	s3  *repotest.S3
	src *repo.S3
	now time.Time
}

func newSnapshots(t *testing.T, cacheBytes int64) *snapshots {
	s := &snapshots{s3: repotest.StartS3(t), now: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)}
	s.src = s.s3.Source(repo.S3Options{Refresh: time.Second, CacheBytes: cacheBytes, Now: func() time.Time { return s.now }})
	return s
}

// push publishes files as tenant's commit, and returns the view the
// source serves once the push is seen.
func (s *snapshots) push(t *testing.T, tenant, commit string, files map[string]string) repo.View {
	t.Helper()
	s.s3.Publish(t, tenant, commit, repotest.WriteDir(t, files))
	s.now = s.now.Add(time.Second)
	v := s.open(t, tenant)
	if v.Commit() != commit {
		t.Fatalf("%s shows %s after the push of %s", tenant, v.Commit(), commit)
	}
	return v
}

// open returns the view of tenant's repository.
func (s *snapshots) open(t *testing.T, tenant string) repo.View {
	t.Helper()
	v, err := s.src.Open(context.Background(), reposcope.DefaultOf(tenant))
	if err != nil {
		t.Fatalf("open %s: %v", tenant, err)
	}
	return v
}

// TestTablesLetReplacedViewsGo: one table per view, whoever asks; once a
// push replaces the view, its table stops and lets it go (the view is
// garbage), and the new view gets a table of its own.
func TestTablesLetReplacedViewsGo(t *testing.T) {
	s := newSnapshots(t, 0)
	ts := symbols.NewTables(nil, nil)
	t.Cleanup(ts.Close)
	old := s.push(t, "acme", "c1", map[string]string{"a.go": "package a\n\nfunc Old() {}\n"})
	table := ts.For(old)
	if ts.For(old) != table {
		t.Error("a second caller got another table")
	}
	settled(t, table)

	v2 := s.push(t, "acme", "c2", map[string]string{"a.go": "package a\n\nfunc New() {}\n"})
	st := settled(t, ts.For(v2))
	if hits, _ := st.Find(context.Background(), symbols.Query{Name: "New"}); len(hits) != 1 {
		t.Errorf("the new view's table finds %v", names(hits))
	}
	// The test holds neither the old view nor its table from here.
	gone := make(chan struct{})
	runtime.SetFinalizer(old, func(repo.View) { close(gone) })
	for range 100 {
		runtime.GC()
		select {
		case <-gone:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Error("the replaced view is still held")
}

// TestTablesCountAgainstTheBudget: what a table holds counts with the
// snapshots against the source's memory budget: two snapshots fit in it,
// but not with one's table, so the other snapshot, least recently used,
// is dropped (and read again when next opened).
func TestTablesCountAgainstTheBudget(t *testing.T) {
	// Many short declarations: a table takes several times the bytes of
	// the files it is made from.
	var src strings.Builder
	src.WriteString("package a\n\nconst (\n")
	for i := range 2000 {
		fmt.Fprintf(&src, "\tC%d = %d\n", i, i)
	}
	src.WriteString(")\n")
	files := map[string]string{"a.go": src.String()}
	// Two snapshots take at most twice their files each (the files, their
	// trigram filters and the zip, which is smaller than the files).
	budget := 5 * int64(src.Len())
	s := newSnapshots(t, budget)
	ts := symbols.NewTables(nil, nil)
	t.Cleanup(ts.Close)

	other := s.push(t, "other", "o1", files)
	acme := s.push(t, "acme", "c1", files)
	if s.open(t, "other") != other {
		t.Fatal("two snapshots without tables are over the budget: make it larger")
	}
	settled(t, ts.For(acme))
	if s.open(t, "other") == other {
		t.Errorf("with acme's table, over the budget of %d bytes, the other snapshot was kept", budget)
	}
}

// TestTableUnread: the table counts the files of code it has no symbols
// of, by language, with why; a lookup's filter narrows them; files that
// are not code (Markdown) are not counted.
func TestTableUnread(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"main.go":         "package main\n\nfunc main() {}\n",
		"ios/App.swift":   "class App {}\n",
		"ios/View.swift":  "struct V {}\n",
		"jvm/Main.scala":  "object Main\n",
		"app/Main.kt":     "class Main\n",
		"README.md":       "# read me\n",
		"ios/README.md":   "# ios\n",
		"build/script.sh": "echo hi\n",
	})
	table, _ := tableOf(t, dir)
	st := settled(t, table)
	want := []symbols.UnreadFiles{
		{Language: "swift", Reason: symbols.NoParser, Files: 2},
		{Language: "scala", Reason: symbols.NoParser, Files: 1},
	}
	if missing := symbols.Missing(); len(missing) > 0 { // Kotlin is read with tree-sitter
		want = slices.Insert(want, 1, symbols.UnreadFiles{Language: "kotlin", Reason: symbols.NoTreeSitter, Files: 1})
	}
	if got := st.Unread(nil); !slices.Equal(got, want) {
		t.Errorf("Unread(all) = %+v, want %+v", got, want)
	}
	ios := func(p string) bool { return filepath.Dir(p) == "ios" }
	if got := st.Unread(ios); !slices.Equal(got, want[:1]) {
		t.Errorf("Unread(ios) = %+v, want %+v", got, want[:1])
	}
}
