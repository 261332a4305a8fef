package precisebucket

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// Symbols of the fixtures: Parse is defined in the lib repository and
// used in the app repository.
const (
	parse = "scip-go gomod example.com/lib v1 `example.com/lib`/Parse()."
	run   = "scip-go gomod example.com/app v1 `example.com/app`/Run()."
)

// goSCIP is a SCIP index of Go documents, each defining or using syms.
func goSCIP(t *testing.T, docs map[string][]*scip.Occurrence) []byte {
	t.Helper()
	x := &scip.Index{Metadata: &scip.Metadata{ToolInfo: &scip.ToolInfo{Name: "goscip"}}}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range docs {
			if !yield(p) {
				return
			}
		}
	}) {
		x.Documents = append(x.Documents, &scip.Document{RelativePath: p, Language: "go", Occurrences: docs[p]})
	}
	b, err := proto.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func def(sym string, line int32) *scip.Occurrence {
	return &scip.Occurrence{Range: []int32{line, 5, 10}, Symbol: sym, SymbolRoles: int32(scip.SymbolRole_Definition)}
}

func use(sym string, line int32) *scip.Occurrence {
	return &scip.Occurrence{Range: []int32{line, 1, 6}, Symbol: sym}
}

// index is one precise index to push: how push records it, and its SCIP
// (nil for a project push could not index).
type index struct {
	x    repo.PreciseIndex
	scip []byte
}

// fixture pushes the files as r's commit with the indexes, and converts
// those whose state is Ready or Failed as the indexer does (a store, then
// its status); the others stay under way.
func fixture(t *testing.T, s3 *repotest.S3, r reposcope.Ref, commit string, files map[string]string, indexes []index, states ...string) repo.Pointer {
	t.Helper()
	ctx := context.Background()
	dir := repotest.WriteDir(t, files)
	var pf []repo.PreciseFile
	for _, ix := range indexes {
		f := repo.PreciseFile{Index: ix.x}
		if ix.scip != nil {
			f.File = filepath.Join(t.TempDir(), "index.scip")
			os.WriteFile(f.File, ix.scip, 0o600)
		}
		pf = append(pf, f)
	}
	var docs map[string][32]byte
	out, err := repo.Publish(ctx, s3.Objects(), repo.PublishInput{Repo: r, Commit: commit, Dir: dir, Paths: repotest.Files(t, dir),
		MaxBytes: 1 << 20, Now: time.Now(), Precise: func(ctx context.Context, v repo.View) ([]repo.PreciseFile, error) {
			var err error
			docs, err = repo.Hashes(ctx, v, nil)
			return pf, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	p := out.Pointer
	for i, state := range states {
		x := p.Precise[i]
		st := Status{State: state, Reason: "not a SCIP index: it is gzip-compressed", Converted: time.Now()}
		if state == Ready {
			var store bytes.Buffer
			if _, err := fromscip.Build(ctx, bytes.NewReader(indexes[i].scip), &store, fromscip.Options{Commit: commit, Tenant: r.Tenant,
				Root: x.Root, Docs: docs, SkipOutside: true}); err != nil {
				t.Fatal(err)
			}
			st = Status{State: Ready, Store: StoreKey(r.Key(), commit, x), Bytes: int64(store.Len()), Converted: time.Now()}
			if st.ETag, err = s3.Objects().Put(ctx, st.Store, store.Bytes(), objects.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if state != "" {
			if err := WriteStatus(ctx, s3.Objects(), StatusKey(r.Key(), commit, x), st); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

// clock is a test's clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestReader runs the Reader's tests on one moto_server.
func TestReader(t *testing.T) {
	m := repotest.StartS3(t)
	bucket := func(t *testing.T) *repotest.S3 { return &repotest.S3{Moto: m.Moto, Bucket: m.Moto.NewBucket(t)} }
	t.Run("states", func(t *testing.T) { testStates(t, bucket(t)) })
	t.Run("none pushed", func(t *testing.T) { testNonePushed(t, bucket(t)) })
	t.Run("other repositories", func(t *testing.T) { testOthers(t, bucket(t)) })
	t.Run("fallback", func(t *testing.T) { testFallback(t, bucket(t)) })
	t.Run("memory", func(t *testing.T) { testMemory(t, bucket(t)) })
	t.Run("damaged store", func(t *testing.T) { testDamaged(t, bucket(t)) })
}

// testDamaged: a store that is not one is its project's failure, and its
// files are answered by search; the call goes on.
func testDamaged(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	r := reposcope.DefaultOf("acme")
	p := fixture(t, s3, r, "c1", map[string]string{"a.go": "package a\n"},
		[]index{{repo.PreciseIndex{Root: ".", Language: "go", Indexer: "goscip"}, goSCIP(t, map[string][]*scip.Occurrence{"a.go": {def(run, 0)}})}})
	x := p.Precise[0]
	damaged := []byte("not a store, but long enough to have a trailer where one would be: 0123456789")
	etag, err := s3.Objects().Put(ctx, StoreKey("acme", "c1", x), damaged, objects.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := Status{State: Ready, Store: StoreKey("acme", "c1", x), Bytes: int64(len(damaged)), ETag: etag, Converted: time.Now()}
	if err := WriteStatus(ctx, s3.Objects(), StatusKey("acme", "c1", x), st); err != nil {
		t.Fatal(err)
	}
	src := s3.Source(repo.S3Options{})
	_, state := read(t, NewReader(s3.Objects(), src, Options{}), src, r, nil)
	if got := state.Why("a.go", false); got != "the go index is failed: its converted index is damaged" {
		t.Errorf("Why(a.go) = %q", got)
	}
}

// read opens r through src and answers its indexes.
func read(t *testing.T, rd *Reader, src repo.Source, r reposcope.Ref, allowed []string) (*precise.Set, precise.State) {
	t.Helper()
	view, err := src.Open(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	set, state, err := rd.Indexes(context.Background(), r, view, allowed)
	if err != nil {
		t.Fatal(err)
	}
	return set, state
}

// testStates: each project's state and why a file is answered by search,
// from the pointer and the statuses; a conversion under way is read again
// after Refresh, and its store opened once it is ready.
func testStates(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	r := reposcope.DefaultOf("acme")
	files := map[string]string{"go.mod": "module example.com/app\n", "app.go": "package app\n", "gone.go": "package app\n",
		"web/package.json": "{}", "web/a.ts": "export const a = 1\n", "tool.py": "x = 1\n", "README.md": "# app\n", "ci/x.go": "package x\n",
		"vendor/modules.txt": "# example.com/lib v1\n", "vendor/example.com/lib/lib.go": "package lib\n"}
	goSrc := goSCIP(t, map[string][]*scip.Occurrence{"app.go": {def(run, 2)}, "vendor/example.com/lib/lib.go": {def(parse, 0)}})
	upload := goSCIP(t, map[string][]*scip.Occurrence{"x.go": {def(run, 1)}})
	p := fixture(t, s3, r, "c1", files, []index{
		{repo.PreciseIndex{Root: ".", Language: "go", Indexer: "goscip", Nested: []string{"ci"}, Vendored: []string{"vendor"}}, goSrc},
		{repo.PreciseIndex{Root: "web", Language: "typescript", Indexer: "scip-typescript"}, []byte("a TypeScript index")},
		{repo.PreciseIndex{Root: ".", Language: "python", Indexer: "scip-python", Reason: "node is not installed", Unavailable: true}, nil},
		{repo.PreciseIndex{Root: "ci", Indexer: repo.Uploaded, Languages: []string{"go"}}, upload},
	}, Ready, "", "", Failed)
	clk := &clock{now: time.Now()}
	src := s3.Source(repo.S3Options{})
	rd := NewReader(s3.Objects(), src, Options{Now: clk.Now})
	set, state := read(t, rd, src, r, nil)
	want := []precise.ProjectState{
		{Root: ".", Language: "go", Indexer: "goscip", Status: precise.Ready, Commit: "c1"},
		{Root: "web", Language: "typescript", Indexer: "scip-typescript", Status: precise.Running},
		{Root: ".", Language: "python", Indexer: "scip-python", Status: precise.Unavailable, Reason: "node is not installed"},
		{Root: "ci", Language: "go", Indexer: repo.Uploaded, Status: precise.Failed, Reason: "not a SCIP index: it is gzip-compressed"},
	}
	checkProjects(t, "Indexes", state, want)
	listed, err := rd.State(ctx, r) // list_repos': the statuses alone
	if err != nil {
		t.Fatal(err)
	}
	checkProjects(t, "State", listed, want)
	if got := listed.Why("web/a.ts", false); got != "the typescript index is running" {
		t.Errorf("State: Why(web/a.ts) = %q", got)
	}
	whys := map[string]string{
		"app.go":                        "",
		"vendor/example.com/lib/lib.go": "",
		"gone.go":                       "the go index has no document for it",
		"web/a.ts":                      "the typescript index is running",
		"tool.py":                       "the python index is unavailable: node is not installed",
		"ci/x.go":                       "the go index is failed: not a SCIP index",
		"README.md":                     "no precise index: no SCIP indexer for markdown files",
	}
	for path, why := range whys {
		if got := state.Why(path, false); why == "" && got != "" || !strings.HasPrefix(got, why) {
			t.Errorf("Why(%s) = %q, want %q", path, got, why)
		}
	}
	if !state.Unchanged {
		t.Error("the snapshot's own indexes, none stale: not Unchanged")
	}
	if occs, err := set.At(ctx, "app.go", 3, 6); err != nil || len(occs) != 1 || occs[0].Symbol != run {
		t.Errorf("At app.go:3:6: %+v, %v", occs, err)
	}
	if occs, err := set.At(ctx, "vendor/example.com/lib/lib.go", 1, 6); err != nil || len(occs) != 1 || occs[0].Symbol != parse {
		t.Errorf("At the vendored lib.go:1:6: %+v, %v", occs, err)
	}

	// The TypeScript index is refused meanwhile: read again after Refresh.
	if err := WriteStatus(ctx, s3.Objects(), StatusKey("acme", "c1", p.Precise[1]), Status{State: Failed, Reason: "not a SCIP index"}); err != nil {
		t.Fatal(err)
	}
	if _, state = read(t, rd, src, r, nil); state.Projects[1].Status != precise.Running {
		t.Errorf("before Refresh: %+v", state.Projects[1])
	}
	clk.Add(DefaultRefresh)
	if _, state = read(t, rd, src, r, nil); state.Projects[1].Status != precise.Failed || state.Projects[1].Reason != "not a SCIP index" {
		t.Errorf("after Refresh: %+v", state.Projects[1])
	}
}

// checkProjects checks the projects of a State, whatever their Since.
func checkProjects(t *testing.T, what string, st precise.State, want []precise.ProjectState) {
	t.Helper()
	if len(st.Projects) != len(want) {
		t.Fatalf("%s: projects %+v, want %+v", what, st.Projects, want)
	}
	for i := range want {
		got := st.Projects[i]
		got.Since = time.Time{}
		if got != want[i] {
			t.Errorf("%s: project %d: %+v, want %+v", what, i, got, want[i])
		}
	}
}

// testNonePushed: a snapshot pushed with no precise index says so, for
// every file; a view that is not a pushed snapshot has no index.
func testNonePushed(t *testing.T, s3 *repotest.S3) {
	r := reposcope.DefaultOf("plain")
	s3.Publish(t, "plain", "c1", repotest.WriteDir(t, map[string]string{"a.go": "package a\n"}))
	src := s3.Source(repo.S3Options{})
	rd := NewReader(s3.Objects(), src, Options{})
	set, state := read(t, rd, src, r, nil)
	if got := state.Why("a.go", false); got != NonePushed || len(state.Projects) != 0 || set.Tenant() != "plain" {
		t.Errorf("Why: %q; %d projects; tenant %q", got, len(state.Projects), set.Tenant())
	}
	if st, err := rd.State(context.Background(), reposcope.DefaultOf("nobody")); err != nil || len(st.Projects) != 0 {
		t.Errorf("State of a repository never pushed: %+v, %v", st, err)
	}
	local := repotest.Local(t, repotest.WriteDir(t, map[string]string{"a.go": "package a\n"}))
	_, state = read(t, rd, local, r, nil)
	if got := state.Why("a.go", false); got != "no precise index covers this repository" {
		t.Errorf("a local view: %q", got)
	}
}

// testOthers: a global symbol's definitions and references include the
// tenant's other repositories the call may read, never another tenant's.
func testOthers(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	app, lib := reposcope.DefaultOf("acme"), reposcope.Ref{Tenant: "acme", Name: "lib"}
	goIndex := repo.PreciseIndex{Root: ".", Language: "go", Indexer: "goscip"}
	fixture(t, s3, app, "a1", map[string]string{"main.go": "package main\n"},
		[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"main.go": {use(parse, 4)}})}}, Ready)
	fixture(t, s3, lib, "l1", map[string]string{"lib.go": "package lib\n"},
		[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"lib.go": {def(parse, 2)}})}}, Ready)
	fixture(t, s3, reposcope.DefaultOf("rival"), "r1", map[string]string{"lib.go": "package lib\n"},
		[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"lib.go": {def(parse, 7)}})}}, Ready)
	src := s3.Source(repo.S3Options{})
	rd := NewReader(s3.Objects(), src, Options{})
	defs := func(allowed []string) []string {
		set, _ := read(t, rd, src, app, allowed)
		info, _, err := set.Symbol(ctx, parse)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range info.Definitions {
			out = append(out, d.Repo+":"+d.Path)
		}
		return out
	}
	if got := defs(nil); !slices.Equal(got, []string{"lib:lib.go"}) {
		t.Errorf("Parse's definitions for a caller of every repository: %v, want lib's only", got)
	}
	if got := defs([]string{"default"}); len(got) != 0 {
		t.Errorf("Parse's definitions for a caller limited to its default repository: %v", got)
	}
}

// testFallback: a tenant without a default repository reads the
// deployment's: its Set is that repository's tenant's, without the
// calling tenant's own repositories.
func testFallback(t *testing.T, s3 *repotest.S3) {
	ctx := context.Background()
	goIndex := repo.PreciseIndex{Root: ".", Language: "go", Indexer: "goscip"}
	fixture(t, s3, reposcope.DefaultOf("deploy"), "d1", map[string]string{"lib.go": "package lib\n"},
		[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"lib.go": {def(parse, 2)}})}}, Ready)
	fixture(t, s3, reposcope.Ref{Tenant: "newcomer", Name: "tools"}, "t1", map[string]string{"t.go": "package t\n"},
		[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"t.go": {def(parse, 9)}})}}, Ready)
	src := s3.Source(repo.S3Options{DefaultRepo: "deploy"})
	rd := NewReader(s3.Objects(), src, Options{})
	set, state := read(t, rd, src, reposcope.DefaultOf("newcomer"), nil)
	info, _, err := set.Symbol(ctx, parse)
	if err != nil || set.Tenant() != "deploy" || len(info.Definitions) != 1 || info.Definitions[0].Path != "lib.go" || state.Why("lib.go", false) != "" {
		t.Errorf("the deployment's repository for newcomer: tenant %q, %+v, %v, %q", set.Tenant(), info.Definitions, err, state.Why("lib.go", false))
	}
}

// testMemory: what is open for a view is held against it, and let go with
// it when its source drops it.
func testMemory(t *testing.T, s3 *repotest.S3) {
	goIndex := repo.PreciseIndex{Root: ".", Language: "go", Indexer: "goscip"}
	for _, name := range []string{"one", "two"} {
		fixture(t, s3, reposcope.DefaultOf(name), "c1", map[string]string{"a.go": "package a\n"},
			[]index{{goIndex, goSCIP(t, map[string][]*scip.Occurrence{"a.go": {def(run, 0)}})}}, Ready)
	}
	// A budget of 12 MiB: one snapshot and its open store (an 8 MiB
	// block cache and its tables) fit, not two.
	src := s3.Source(repo.S3Options{CacheBytes: 12 << 20})
	rd := NewReader(s3.Objects(), src, Options{CacheBytes: 8 << 20})
	view, _ := src.Open(context.Background(), reposcope.DefaultOf("one"))
	read(t, rd, src, reposcope.DefaultOf("one"), nil)
	read(t, rd, src, reposcope.DefaultOf("two"), nil)
	select {
	case <-view.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("one's view was kept beyond its source's budget")
	}
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(time.Millisecond) {
		rd.mu.Lock()
		n := len(rd.views)
		rd.mu.Unlock()
		if n == 1 {
			return
		}
	}
	t.Error("the Reader kept what it opened for a view its source let go")
}
