package symbols_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// tableOf builds the symbol table of a live view of dir and waits for it.
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

// settled waits (a few seconds at most) until the table shows the view.
func settled(t *testing.T, table *symbols.Table) *symbols.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := table.Wait(ctx)
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

// TestTablesShareAndEvict: one table per view, whoever asks; beyond four
// views the least recently used goes.
func TestTablesShareAndEvict(t *testing.T) {
	ts := symbols.NewTables(nil, nil)
	t.Cleanup(ts.Close)
	dir := repotest.WriteDir(t, tableFiles)
	var views []repo.View
	for range 5 {
		v, err := repo.NewLocal(dir, repo.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		views = append(views, v)
	}
	first := ts.For(views[0])
	if ts.For(views[0]) != first {
		t.Error("a second caller got another table")
	}
	for _, v := range views[1:] {
		ts.For(v)
	}
	if ts.For(views[0]) == first {
		t.Error("the least recently used table was kept beyond four")
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
