package contextindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// dirSnapshot lists every regular file under root as a snapshot (the
// repository walker's job in production; test directories hold only
// source files).
func dirSnapshot(t *testing.T, root string) Snapshot {
	t.Helper()
	fsys := os.DirFS(root)
	var files []File
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, File{Path: p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return Snapshot{FS: fsys, Files: files}
}

func TestBuildCodeMapFS(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":            {Data: []byte("# Toolshed\n\nTools for agents.\n\n## Auth\n\nKeys are hashed.\n")},
		"src/auth/token.go":    {Data: []byte("package auth\n\n// Sign signs a token.\nfunc Sign() {}\n\n// Verify checks a token signature.\nfunc Verify() {}\n")},
		"scripts/deploy.sh":    {Data: []byte("#!/bin/sh\nset -e\nmake deploy\n")},
		"src/auth/empty.go":    {Data: []byte("  \n")},
		"src/auth/notindexed":  {Data: []byte("the walker did not list this file")},
		"src/billing/plans.go": {Data: []byte("package billing\n\n// Plan is a subscription plan.\ntype Plan struct{}\n")},
	}
	snap := Snapshot{FS: fsys, Commit: "abc123", Files: []File{
		{Path: "README.md"}, {Path: "src/auth/token.go"}, {Path: "scripts/deploy.sh"},
		{Path: "src/auth/empty.go"}, {Path: "src/billing/plans.go", Content: []byte("package billing\n\n// Plan is a plan.\ntype Plan struct{}\n")},
	}}
	ix, st, err := BuildCode(context.Background(), nil, snap, nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range Docs(ix.Segment) {
		got = append(got, d.ID+" "+d.Type+" "+d.Module)
	}
	want := []string{
		"README.md:1-3 section ", "README.md:5-7 section ",
		"scripts/deploy.sh:1-3 block scripts",
		"src/auth/token.go:3-4 function src/auth", "src/auth/token.go:6-7 function src/auth",
		"src/billing/plans.go:3-4 class src/billing",
	}
	if !slices.Equal(got, want) {
		t.Errorf("chunks:\n%q\nwant\n%q", got, want)
	}
	if st != (BuildStats{Files: 5, Rechunked: 5, Chunks: 6}) || ix.Commit != "abc123" || ix.Vectors != nil {
		t.Errorf("stats %+v commit %s", st, ix.Commit)
	}
	// Given content wins over the file system's.
	if d := ix.Segment.Doc(5); !strings.Contains(d.Content, "Plan is a plan.") {
		t.Errorf("content of plans.go read from the FS: %q", d.Content)
	}
	hits, _ := NewCorpus("", []*Segment{ix.Segment}).Search(Query{Text: "verify signature"})
	if len(hits) == 0 || hits[0].Doc.ID != "src/auth/token.go:6-7" {
		t.Errorf("search: %v", ids(hits))
	}
	if _, _, err := BuildCode(context.Background(), nil, Snapshot{FS: fsys, Files: []File{{Path: "missing.go"}}}, nil, day(1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestBuildCodeIncremental builds a real directory (packages of the Go
// tree), changes one file and adds another, and checks that only those
// are cut and embedded again, and that the rebuilt index equals a fresh
// build.
func TestBuildCodeIncremental(t *testing.T) {
	dir := repotest.GoPackages(t, "strings", "bytes", "unicode/utf8", "container/list")
	ctx := context.Background()
	emb := &wordEmbedder{}
	first, st, err := BuildCode(ctx, nil, dirSnapshot(t, dir), emb, day(1))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != st.Files || st.Chunks < 200 || st.Embedded != emb.count() || first.Vectors.Len() == 0 {
		t.Fatalf("first build: %+v, %d vectors", st, first.Vectors.Len())
	}
	if !strings.HasPrefix(first.Commit, "tree-") {
		t.Errorf("working tree version %q", first.Commit)
	}

	// Unchanged: nothing is cut or embedded.
	before := emb.count()
	same, st, err := BuildCode(ctx, first, dirSnapshot(t, dir), emb, day(2))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != 0 || st.Embedded != 0 || emb.count() != before || same.Commit != first.Commit {
		t.Errorf("unchanged tree: %+v, commit %s → %s", st, first.Commit, same.Commit)
	}

	// One changed declaration, one new file.
	p := filepath.Join(dir, "container", "list", "list.go")
	data, _ := os.ReadFile(p)
	changed := strings.Replace(string(data), "// Len returns the number of elements", "// Len counts the elements", 1)
	if changed == string(data) {
		t.Fatal("list.go has no Len comment to change")
	}
	os.WriteFile(p, []byte(changed), 0o644)
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# Notes\n\nLinked lists are doubly linked.\n"), 0o644)
	next, st, err := BuildCode(ctx, same, dirSnapshot(t, dir), emb, day(3))
	if err != nil {
		t.Fatal(err)
	}
	if st.Rechunked != 2 || st.Embedded != 2 {
		t.Errorf("after changing one declaration and adding a file: %+v; want 2 files cut, 2 chunks embedded", st)
	}
	if next.Commit == first.Commit {
		t.Error("the version did not change with the files")
	}
	fresh, _, err := BuildCode(ctx, nil, dirSnapshot(t, dir), &wordEmbedder{}, day(3))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(Docs(next.Segment), Docs(fresh.Segment), func(a, b Doc) bool { return a.ID == b.ID && a.Content == b.Content }) {
		t.Error("the incremental build differs from a fresh one")
	}
	if next.Vectors.Len() != fresh.Vectors.Len() {
		t.Errorf("incremental build has %d vectors, a fresh one %d", next.Vectors.Len(), fresh.Vectors.Len())
	}
}

// TestEncodeRoundTrip stores an index of real packages and reads it
// back: the same chunks (lines, byte offsets, kinds, dates, text) and the
// same answers.
func TestEncodeRoundTrip(t *testing.T) {
	dir := repotest.GoPackages(t, "strings", "container/list")
	// Names longer than the tokenizer takes.
	long := "package list\n\n// Long has long names.\ntype " + strings.Repeat("L", 3*maxTokenBytes) + " struct{}\n\nfunc (" + strings.Repeat("L", 3*maxTokenBytes) + ") " + strings.Repeat("M", 3*maxTokenBytes) + "() {}\n"
	os.WriteFile(filepath.Join(dir, "container/list/long.go"), []byte(long), 0o644)
	snap := dirSnapshot(t, dir)
	for i := range snap.Files {
		snap.Files[i].ModTime = day(i%28 + 1)
	}
	ix, _, err := BuildCode(context.Background(), nil, snap, nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	files, err := encode(ix)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSegment(files[ChunksFile], files[LexicalFile])
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back.code.hashes(), ix.Files) {
		t.Errorf("read back %d files, want %d", len(back.code.hashes()), len(ix.Files))
	}
	if !slices.Equal(Docs(back), Docs(ix.Segment)) {
		t.Errorf("the chunks differ after decoding")
	}
	for _, q := range []string{"split a string around separators", "doubly linked list", "Builder Grow"} {
		a, _ := NewCorpus("", []*Segment{ix.Segment}).Search(Query{Text: q})
		b, _ := NewCorpus("", []*Segment{back}).Search(Query{Text: q})
		if !slices.EqualFunc(a, b, func(x, y Hit) bool {
			return x.Doc.ID == y.Doc.ID && x.Score == y.Score && x.Doc.Content == y.Doc.Content
		}) {
			t.Errorf("%q: %v after decoding, %v before", q, ids(b), ids(a))
		}
	}
	for name, data := range files {
		if name == VectorsFile {
			continue
		}
		for _, cut := range []int{len(data) / 2, len(data) - 1, len(data) - 9} {
			bad := maps.Clone(files)
			bad[name] = data[:cut]
			if _, err := DecodeSegment(bad[ChunksFile], bad[LexicalFile]); err == nil {
				t.Errorf("%s cut at %d of %d bytes was accepted", name, cut, len(data))
			}
		}
	}
}

// encode returns the encodings of a code index, by the name of the file
// each is stored in.
func encode(ix *CodeIndex) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range ix.Encodings() {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			return nil, err
		}
		out[f.Name] = b.Bytes()
	}
	return out, nil
}

// TestBuildCodeSameOnAnyCores: the index of a tree is the same byte for
// byte whether one core or several cut it, and as a segment made at once
// of the same files.
func TestBuildCodeSameOnAnyCores(t *testing.T) {
	snap := dirSnapshot(t, repotest.GoPackages(t, "strings", "bytes", "container/list", "bufio", "sort"))
	snap.Commit = "c1"
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda")
	for i := range 3*buildBatch + 17 { // several batches, the last one short
		text := fmt.Sprintf("package p%d\n\n// F%d: %s and %s.\nfunc F%d() {}\n", i%7, i, words[i%11], words[i*7%11], i)
		if i%5 == 0 {
			text = fmt.Sprintf("# Note %d\n\n%s %s\n", i, words[i%11], words[(i+3)%11])
		}
		snap.Files = append(snap.Files, File{Path: fmt.Sprintf("gen/%03d/f%d.go", i%13, i), Content: []byte(text), ModTime: day(i%28 + 1)})
	}
	build := func(cores int) map[string][]byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores))
		ix, _, err := BuildCode(t.Context(), nil, snap, nil, day(1))
		if err != nil {
			t.Fatal(err)
		}
		files, err := encode(ix)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	one, four := build(1), build(4)
	for name := range one {
		if !bytes.Equal(one[name], four[name]) {
			t.Errorf("%s differs between 1 and 4 cores", name)
		}
	}
	b := newCodeBuilder()
	sorted := slices.SortedFunc(slices.Values(snap.Files), func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range sorted {
		content, err := readContent(snap, f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(content)
		b.addFile(f.Path, sha256.Sum256(content), f.ModTime, textSource{plain: text}, cutFile(f.Path, text))
	}
	whole, err := encode(&CodeIndex{Segment: b.segment()})
	if err != nil {
		t.Fatal(err)
	}
	for name := range whole {
		if !bytes.Equal(one[name], whole[name]) {
			t.Errorf("%s differs from a segment made at once", name)
		}
	}
}

func TestMergeFrom(t *testing.T) {
	tests := []struct {
		sizes     []int
		maxChunks int
		want      int
	}{
		{nil, 100, 0},
		{[]int{10}, 100, 1},
		{[]int{10, 10}, 100, 0},         // the last holds half of the one before, and more
		{[]int{10, 4}, 100, 2},          // less than half
		{[]int{40, 20, 10, 10}, 100, 0}, // the last two hold half of 20, the last three half of 40
		{[]int{40, 20, 10, 10}, 50, 1},  // but all of them would be too many
		{[]int{100, 10, 10}, 1000, 1},
		{[]int{0, 0}, 100, 0},
	}
	for _, tt := range tests {
		var parts []Part
		for _, n := range tt.sizes {
			parts = append(parts, Part{Seg: &Segment{docs: make([]Doc, n)}})
		}
		if got := mergeFrom(parts, tt.maxChunks); got != tt.want {
			t.Errorf("mergeFrom(%v, %d) = %d, want %d", tt.sizes, tt.maxChunks, got, tt.want)
		}
	}
}
