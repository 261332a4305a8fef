package contextindex_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// liveView serves dir as a live local view for the test.
func liveView(t *testing.T, dir string) *repo.Local {
	t.Helper()
	v, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// search returns the ids of the live documents matching query.
func search(st *contextindex.LiveState, query string) []string {
	c := contextindex.NewPartsCorpus("", st.Parts)
	hits, _ := c.Search(contextindex.Query{Text: query, Limit: 50})
	var out []string
	for _, h := range hits {
		out = append(out, h.Doc.ID)
	}
	return out
}

// settled waits for the index to show the view.
func settled(t *testing.T, l *contextindex.Live) *contextindex.LiveState {
	t.Helper()
	done := make(chan struct{})
	go func() { l.Settle(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the index did not settle")
	}
	return l.State()
}

func TestLiveBuildsInBatchesAndFollowsChanges(t *testing.T) {
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("pkg%02d/f%04d.go", i%20, i)] = fmt.Sprintf("package pkg\n\n// Func%d does thing number %d.\nfunc Func%d() {}\n", i, i, i)
	}
	files["pkg00/special.go"] = "package pkg\n\n// Walrus counts the tusks.\nfunc Walrus() {}\n"
	dir := repotest.WriteDir(t, files)
	view := liveView(t, dir)
	l := contextindex.NewLive(view, contextindex.LiveOptions{})
	defer l.Close()

	// While it builds, what it has is searchable and it says how far it is.
	var seen []contextindex.Progress
	for st := l.State(); st.Progress.State != contextindex.StateReady; st = l.State() {
		if len(seen) == 0 || seen[len(seen)-1] != st.Progress {
			seen = append(seen, st.Progress)
		}
		time.Sleep(time.Millisecond)
	}
	st := settled(t, l)
	if st.Progress.FilesIndexed != 1001 || st.Progress.FilesTotal != 1001 || st.Progress.Chunks != 1001 {
		t.Errorf("ready: %+v, want 1001 files of one chunk each", st.Progress)
	}
	if len(st.Parts) != 1 {
		t.Errorf("ready with %d parts, want them merged into one", len(st.Parts))
	}
	for _, p := range seen {
		if p.State != contextindex.StateBuilding || p.FilesIndexed > p.FilesTotal {
			t.Errorf("while building: %+v", p)
		}
	}
	if got := search(st, "walrus tusks"); len(got) == 0 || got[0] != "pkg00/special.go:3-4" {
		t.Errorf("walrus: %v", got)
	}
	if n := l.Builds.Load(); n != 1001 {
		t.Errorf("cut %d files, want each of the 1001 once", n)
	}

	// Changes: only the changed files are cut again.
	os.WriteFile(filepath.Join(dir, "pkg00/special.go"), []byte("package pkg\n\n// Narwhal has one tusk.\nfunc Narwhal() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg01/new.go"), []byte("package pkg\n\n// Walrus moved here.\nfunc Walrus() {}\n"), 0o644)
	os.Remove(filepath.Join(dir, "pkg02/f0002.go"))
	waitUntil(t, l, func(st *contextindex.LiveState) bool {
		return slices.Equal(search(st, "narwhal"), []string{"pkg00/special.go:3-4"}) &&
			slices.Equal(search(st, "walrus"), []string{"pkg01/new.go:3-4"}) && !holds(st, "pkg02/f0002.go")
	})
	if n := l.Builds.Load(); n != 1003 {
		t.Errorf("cut %d files in all, want 1001 + the 2 that changed", n)
	}
	st = settled(t, l)
	if st.Progress.FilesTotal != 1001 || st.Progress.Chunks != 1001 {
		t.Errorf("after the changes: %+v", st.Progress)
	}

	// Idle: no change, no work.
	builds, loads := l.Builds.Load(), l.Loads.Load()
	time.Sleep(200 * time.Millisecond)
	if l.Builds.Load() != builds || l.Loads.Load() != loads {
		t.Errorf("idle, the index cut %d files and read %d stored indexes", l.Builds.Load()-builds, l.Loads.Load()-loads)
	}
}

// holds reports whether a live document of the state comes from path.
func holds(st *contextindex.LiveState, path string) bool {
	for _, p := range st.Parts {
		for _, d := range contextindex.LiveDocs(p) {
			if d.Path == path {
				return true
			}
		}
	}
	return false
}

// waitUntil waits up to the promised freshness (2 s) for ok.
func waitUntil(t *testing.T, l *contextindex.Live, ok func(*contextindex.LiveState) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !ok(l.State()) {
		if time.Now().After(deadline) {
			t.Fatalf("not seen within 2 s (state %+v)", l.State().Progress)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLiveRestartsFromTheStoredIndex(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	store := indexfile.NewStore(&indexfile.DirBlobs{Root: t.TempDir()})
	view := liveView(t, dir)
	l := contextindex.NewLive(view, contextindex.LiveOptions{Store: store, Key: "repo"})
	settled(t, l)
	l.Close() // saves

	// Unchanged files: the next run cuts nothing.
	l2 := contextindex.NewLive(view, contextindex.LiveOptions{Store: store, Key: "repo"})
	st := settled(t, l2)
	if l2.Loads.Load() != 1 || l2.Builds.Load() != 0 {
		t.Errorf("restart: %d loads, %d files cut; want the stored index and nothing cut", l2.Loads.Load(), l2.Builds.Load())
	}
	if got := search(st, "doubly linked list"); len(got) == 0 {
		t.Error("the restarted index finds nothing")
	}
	// The chunks loaded have the text of the view's files.
	files, err := view.Searchable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*repo.File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	for _, p := range st.Parts {
		for _, d := range contextindex.LiveDocs(p) {
			f := byPath[d.Path]
			if f == nil || !strings.Contains(f.Text(), d.Content) {
				t.Fatalf("chunk %s: its text is not its file's after the restart", d.ID)
			}
		}
	}
	l2.Close()

	// A file changed while nothing ran: only it is cut.
	os.WriteFile(filepath.Join(dir, "container/ring/ring.go"), []byte("package ring\n\n// Hoop is round.\nfunc Hoop() {}\n"), 0o644)
	l3 := contextindex.NewLive(liveView(t, dir), contextindex.LiveOptions{Store: store, Key: "repo"})
	defer l3.Close()
	st = settled(t, l3)
	if l3.Builds.Load() != 1 {
		t.Errorf("cut %d files, want the one that changed", l3.Builds.Load())
	}
	if got := search(st, "hoop round"); len(got) == 0 || got[0] != "container/ring/ring.go:3-4" {
		t.Errorf("hoop: %v", got)
	}
}

// TestMergeSegments: merging parts without their dead documents ranks
// exactly as one segment built from the live documents.
func TestMergeSegments(t *testing.T) {
	docs := func(words ...string) []contextindex.Doc {
		var out []contextindex.Doc
		for i, w := range words {
			out = append(out, contextindex.Doc{ID: fmt.Sprintf("%s-%d", w, i), Source: contextindex.SourceCode, Content: w + " common text", Path: w + ".go"})
		}
		return out
	}
	a := contextindex.NewSegment(docs("alpha", "beta", "gamma", "delta"))
	b := contextindex.NewSegment(docs("beta", "epsilon"))
	parts := []contextindex.Part{{Seg: a, Dead: []bool{false, true, false, false}}, {Seg: b}}
	merged := contextindex.MergeSegments(parts)
	live := contextindex.LiveDocs(parts[0])
	fresh := contextindex.NewSegment(append(live, contextindex.Docs(b)...))
	var mergedLexical, freshLexical bytes.Buffer
	if err := merged.EncodeLexical(&mergedLexical); err != nil {
		t.Fatal(err)
	}
	if err := fresh.EncodeLexical(&freshLexical); err != nil {
		t.Fatal(err)
	}
	if mergedLexical.String() != freshLexical.String() {
		t.Error("merged statistics differ from a segment built from the live documents")
	}
	for _, q := range []string{"beta", "common", "alpha text", "epsilon"} {
		m, _ := contextindex.NewCorpus("", []*contextindex.Segment{merged}).Search(contextindex.Query{Text: q, Limit: 10})
		f, _ := contextindex.NewCorpus("", []*contextindex.Segment{fresh}).Search(contextindex.Query{Text: q, Limit: 10})
		if fmt.Sprint(hitIDs(m)) != fmt.Sprint(hitIDs(f)) {
			t.Errorf("%q: merged %v, fresh %v", q, hitIDs(m), hitIDs(f))
		}
	}
	// The parts themselves never find a dead document.
	hits, _ := contextindex.NewPartsCorpus("", parts).Search(contextindex.Query{Text: "beta", Limit: 10})
	if got := hitIDs(hits); !slices.Equal(got, []string{"beta-0"}) {
		t.Errorf("parts corpus: %v, want only the live beta", got)
	}
}

func hitIDs(hits []contextindex.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Doc.ID)
	}
	return out
}

// TestLiveRebuildsAnIndexOfAnOlderFormat starts over a store holding an
// index an earlier version wrote (indexfile/testdata/index-v1): it builds
// the index anew, saves it in the current format and removes the old one.
func TestLiveRebuildsAnIndexOfAnOlderFormat(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"README.md":            "# Toolshed\n\nTools for agents.\n\n## Auth\n\nKeys are hashed.\n",
		"src/auth/token.go":    "package auth\n\n// Sign signs a token.\nfunc Sign() {}\n\n// Verify checks a token signature.\nfunc Verify() {}\n",
		"scripts/deploy.sh":    "#!/bin/sh\nset -e\nmake deploy\n",
		"src/billing/plans.go": "package billing\n\n// Plan is a subscription plan.\ntype Plan struct{}\n",
	})
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "repo", "abc123"), 0o755)
	for _, name := range []string{"chunks.json.gz", contextindex.LexicalFile} {
		data, err := os.ReadFile(filepath.Join("indexfile/testdata/index-v1", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "repo", "abc123", name), data, 0o644)
	}
	os.WriteFile(filepath.Join(root, "repo", indexfile.PointerFile), []byte(`{"commit":"abc123","builtAt":"2025-01-01T10:00:00Z","chunks":6}`), 0o644)
	store := indexfile.NewStore(&indexfile.DirBlobs{Root: root})

	l := contextindex.NewLive(liveView(t, dir), contextindex.LiveOptions{Store: store, Key: "repo"})
	st := settled(t, l)
	if l.Loads.Load() != 0 || l.Builds.Load() != 4 {
		t.Errorf("%d loads, %d files cut; want every file cut", l.Loads.Load(), l.Builds.Load())
	}
	if got := search(st, "verify signature"); len(got) == 0 || got[0] != "src/auth/token.go:6-7" {
		t.Errorf("verify signature: %v", got)
	}
	l.Close() // saves

	ix, err := store.CurrentCode(t.Context(), "repo")
	if err != nil {
		t.Fatal(err)
	}
	if ix.Commit == "abc123" || ix.Segment.Len() != 6 {
		t.Errorf("after the run the store holds %s, %d chunks", ix.Commit, ix.Segment.Len())
	}
	if _, err := os.Stat(filepath.Join(root, "repo", "abc123")); !os.IsNotExist(err) {
		t.Errorf("the index of the older format is still there: %v", err)
	}
}

// TestLiveTakesChangesDuringABuild: a file written while the index is
// built is searchable once a batch is cut, not when the build ends.
func TestLiveTakesChangesDuringABuild(t *testing.T) {
	files := map[string]string{}
	for i := range 4000 {
		files[fmt.Sprintf("pkg%02d/f%04d.go", i%20, i)] = fmt.Sprintf("package pkg\n\n// Func%d does thing number %d.\nfunc Func%d() {}\n", i, i, i)
	}
	dir := repotest.WriteDir(t, files)
	contextindex.SlowBuilds(t, 100*time.Millisecond) // 10 batches: a build of a second at least
	l := contextindex.NewLive(liveView(t, dir), contextindex.LiveOptions{})
	defer l.Close()
	waitFor(t, func() bool { return l.State().Progress.FilesIndexed > 0 })
	os.WriteFile(filepath.Join(dir, "zebra.go"), []byte("package pkg\n\n// Zebra has stripes.\nfunc Zebra() {}\n"), 0o644)
	waitFor(t, func() bool { return len(search(l.State(), "zebra stripes")) > 0 })
	if p := l.State().Progress; p.State != contextindex.StateBuilding || l.Builds.Load() >= 4001 {
		t.Errorf("the new file was found once %d files were cut (%+v), want it before the build ends", l.Builds.Load(), p)
	}
	st := settled(t, l)
	if st.Progress.FilesIndexed != 4001 || st.Progress.Chunks != 4001 || l.Builds.Load() != 4001 {
		t.Errorf("settled: %+v, %d files cut; want 4001 files, each cut once", st.Progress, l.Builds.Load())
	}
}

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// TestLiveSavesWhatChanged: after an edit, a save writes a segment of the
// changed file and a set of its new vectors, leaves every file it saved
// before as it was, and a restart answers from the segments, cutting
// nothing.
func TestLiveSavesWhatChanged(t *testing.T) {
	dir := repotest.GoPackages(t, "strings", "bytes", "container/list")
	root := t.TempDir()
	store := indexfile.NewStore(&indexfile.DirBlobs{Root: root})
	srv, emb := embedtest.Start(t)
	run := func() *contextindex.Live {
		l := contextindex.NewLive(liveView(t, dir), contextindex.LiveOptions{Store: store, Key: "repo", Embedder: emb})
		settled(t, l)
		return l
	}
	l := run()
	l.Close() // saves
	before := storedFiles(t, root)
	embedded := srv.Texts.Load()

	p := filepath.Join(dir, "container", "list", "list.go")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, append(data, "\n// Walrus counts the tusks.\nfunc Walrus() {}\n"...), 0o644)
	l = run()
	if l.Builds.Load() != 1 || srv.Texts.Load()-embedded != 1 {
		t.Errorf("after one edit: %d files cut, %d texts embedded; want the file and its new chunk", l.Builds.Load(), srv.Texts.Load()-embedded)
	}
	l.Close()
	after := storedFiles(t, root)
	written, total := int64(0), int64(0)
	for name, f := range after {
		total += f.Size()
		if old, ok := before[name]; ok && name != "repo/"+indexfile.PointerFile {
			if !old.ModTime().Equal(f.ModTime()) || old.Size() != f.Size() {
				t.Errorf("%s was written again", name)
			}
			continue
		}
		written += f.Size()
	}
	if written == 0 || written > total/10 {
		t.Errorf("the save after one edit wrote %d of the index's %d bytes", written, total)
	}
	ptr, _, err := store.Pointer(t.Context(), "repo", "")
	if err != nil || len(ptr.Segments) != 2 || len(ptr.Segments[0].Dead) != 1 || len(ptr.Vectors) != 2 {
		t.Errorf("pointer %+v, %v; want two segments, the first with the edited file dead, and two sets of vectors", ptr, err)
	}

	l = run()
	defer l.Close()
	if l.Loads.Load() != 1 || l.Builds.Load() != 0 || srv.Texts.Load()-embedded != 1 {
		t.Errorf("restart: %d loads, %d files cut, %d texts embedded; want the stored index alone", l.Loads.Load(), l.Builds.Load(), srv.Texts.Load()-embedded-1)
	}
	if got := search(l.State(), "walrus tusks"); len(got) == 0 || !strings.HasPrefix(got[0], "container/list/list.go:") {
		t.Errorf("walrus after the restart: %v", got)
	}
}

// storedFiles lists the files under root, by slash path.
func storedFiles(t *testing.T, root string) map[string]os.FileInfo {
	t.Helper()
	out := map[string]os.FileInfo{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = info
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLiveCutsAtTheTablesParse: with the view's symbol table, the index
// cuts each file at the table's parse of it, never parsing it again: each
// file is parsed once (as the build, then an edit, needs it), and the
// chunks are those of the index's own parse.
func TestLiveCutsAtTheTablesParse(t *testing.T) {
	files := map[string]string{"README.md": "# Tusks\n\nWalruses have two.\n"}
	for i := range 30 {
		files[fmt.Sprintf("pkg/f%02d.go", i)] = fmt.Sprintf("package pkg\n\n// Func%d does thing %d.\nfunc Func%d() {}\n\ntype T%d struct{}\n", i, i, i, i)
	}
	dir := repotest.WriteDir(t, files)
	view := liveView(t, dir)
	table := symbols.NewTable(view, nil, nil)
	t.Cleanup(table.Close)
	l := contextindex.NewLive(view, contextindex.LiveOptions{Parses: table})
	t.Cleanup(l.Close)
	own := contextindex.NewLive(view, contextindex.LiveOptions{})
	t.Cleanup(own.Close)
	if got, want := docs(settled(t, l)), docs(settled(t, own)); !slices.Equal(got, want) || len(got) != 61 {
		t.Errorf("cut at the table's parse: %v\nwant %v", got, want)
	}
	if n := table.Parses.Load(); n != 30 || l.Parses.Load() != 0 || own.Parses.Load() != 30 {
		t.Errorf("%d parses of 30 Go files by the table, %d by the index that takes them, %d by the one that parses its own",
			n, l.Parses.Load(), own.Parses.Load())
	}
	os.WriteFile(filepath.Join(dir, "pkg/f00.go"), []byte("package pkg\n\n// Narwhal has one tusk.\nfunc Narwhal() {}\n"), 0o644)
	waitUntil(t, l, func(st *contextindex.LiveState) bool {
		return slices.Equal(search(st, "narwhal"), []string{"pkg/f00.go:3-4"})
	})
	if n := table.Parses.Load(); n != 31 {
		t.Errorf("after an edit: %d parses, want 31", n)
	}
}

// docs returns "id type name" of each live document of st, sorted.
func docs(st *contextindex.LiveState) []string {
	var out []string
	for _, p := range st.Parts {
		for _, d := range contextindex.LiveDocs(p) {
			out = append(out, d.ID+" "+d.Type+" "+d.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestLiveCutsNothingWithoutItsParses: when the parses of its files do
// not come before it closes, the index cuts nothing (and closes).
func TestLiveCutsNothingWithoutItsParses(t *testing.T) {
	view := liveView(t, repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"}))
	l := contextindex.NewLive(view, contextindex.LiveOptions{Parses: never{}})
	for l.State().Progress.FilesTotal == 0 { // the build has begun
		time.Sleep(time.Millisecond)
	}
	l.Close()
	if st := l.State(); l.Builds.Load() != 0 || st.Progress.Chunks != 0 {
		t.Errorf("cut %d files without their parses: %+v", l.Builds.Load(), st.Progress)
	}
}

// never gives no parse.
type never struct{}

func (never) Parsed(ctx context.Context, _ *repo.File, _ uint64) (*symbols.File, bool) {
	<-ctx.Done()
	return nil, false
}
