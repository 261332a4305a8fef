package preciselocal_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/preciselocal"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// The test binary doubles as the local server's subcommands: run as
// "index-go ARGS" it is the Go indexer, as "precise-convert ARGS" the
// converter; as "crash ARGS", an indexer that crashes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		command := map[string]func(context.Context, string, []string, io.Writer, io.Writer) error{
			"index-go": goscip.Command, preciselocal.ConvertName: preciselocal.ConvertCommand}[os.Args[1]]
		if command != nil {
			if err := command(context.Background(), os.Args[1], os.Args[2:], os.Stdout, os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		switch os.Args[1] {
		case "crash":
			panic("the indexer crashed on " + strings.Join(os.Args[2:], " ")) // what it prints quotes the repository
		}
	}
	os.Exit(m.Run())
}

// runner returns the Runner of the tests: this binary as the Go indexer
// (mode: index-go or crash), the checkout's node_modules.
func runner(t *testing.T, mode string) sciprun.Runner {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	modules, err := filepath.Abs(filepath.Join("..", "..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "@sourcegraph", "scip-typescript", "package.json")); err != nil {
		t.Fatalf("the npm indexers are not installed: run `npm ci` at the top of the checkout (%v)", err)
	}
	return sciprun.Runner{GoIndexer: []string{self, mode}, NodeModules: modules}
}

// copyRepo copies the fixture repository (a Go module, a TypeScript
// project in web/, a Python package in py/) into a folder of its own.
func copyRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "repo"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openView opens the local view of dir, closed with the test.
func openView(t *testing.T, dir string) *repo.Local {
	t.Helper()
	v, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// converter is this binary as the converter.
func converter(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self, preciselocal.ConvertName}
}

// start returns a keeper of the stores in data following views by name,
// closed with the test.
func start(t *testing.T, data string, r sciprun.Runner, views map[string]repo.View) *preciselocal.Keeper {
	t.Helper()
	k, err := preciselocal.New(preciselocal.Options{Dir: data, Runner: r, Converter: converter(t), Quiet: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	for name, v := range views {
		k.Follow(name, v)
	}
	return k
}

var home = reposcope.Ref{Tenant: "acme", Name: "shapes"}

// waitFor waits until ok holds of the Set and State of view, or fails
// with the keeper's status after a long while (an indexer that hangs).
func waitFor(t *testing.T, k *preciselocal.Keeper, view repo.View, what string, ok func(*precise.Set, precise.State) bool) *precise.Set {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		set, st, err := k.Indexes(context.Background(), home, view, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok(set, st) {
			return set
		}
		if time.Now().After(deadline) {
			status, _ := json.MarshalIndent(k.Status(nil), "", "  ")
			t.Fatalf("%s: not after 3 minutes; status:\n%s", what, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settled reports whether every project is ready, or failed or
// unavailable.
func settled(st precise.State) bool {
	return len(st.Projects) > 0 && !slices.ContainsFunc(st.Projects, func(p precise.ProjectState) bool {
		return p.Status == precise.Queued || p.Status == precise.Running
	})
}

// symbolAt is the innermost symbol at a position, or "".
func symbolAt(t *testing.T, set *precise.Set, path string, line, col int) string {
	t.Helper()
	occs, err := set.At(context.Background(), path, line, col)
	if err != nil {
		t.Fatal(err)
	}
	if len(occs) == 0 {
		return ""
	}
	return occs[0].Symbol
}

// statuses are the projects' statuses, by language.
func statuses(st precise.State) map[string]precise.Status {
	out := map[string]precise.Status{}
	for _, p := range st.Projects {
		out[p.Language] = p.Status
	}
	return out
}

// column is the 1-based byte column of the first what on line (1-based)
// of the file at path in dir.
func column(t *testing.T, dir, path string, line int, what string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Split(string(data), "\n")[line-1]
	i := strings.Index(text, what)
	if i < 0 {
		t.Fatalf("%s:%d has no %q", path, line, what)
	}
	return i + 1
}

// TestKeeper indexes the fixture's three projects with the real indexers
// and answers from their stores (TypeScript's columns converted from
// UTF-16, nested projects' paths from the repository's root); an edit of
// a Go file is an overlay of its package alone; a restart reopens the
// stores and indexes nothing; a damaged store is made again.
func TestKeeper(t *testing.T) {
	dir, data := copyRepo(t), t.TempDir()
	view := openView(t, dir)
	r := runner(t, "index-go")
	k := start(t, data, r, map[string]repo.View{"shapes": view})
	set := waitFor(t, k, view, "every project ready", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	_, st, _ := k.Indexes(context.Background(), home, view, nil)
	want := map[string]precise.Status{"go": precise.Ready, "typescript": precise.Ready, "python": precise.Ready}
	if got := statuses(st); !maps.Equal(got, want) || k.Runs.Load() != 3 {
		t.Fatalf("statuses %v after %d runs, want %v after 3", got, k.Runs.Load(), want)
	}
	checkSymbols(t, set, dir)
	for path, want := range map[string]string{"circle/circle.go": "", "notes.kt": "no SCIP indexer for kotlin files", "testdata/x.go": "testdata/ holds no project's own code"} {
		if got := st.Why(path, false); got != want {
			t.Errorf("Why(%s) = %q, want %q", path, got, want)
		}
	}

	checkSymbols(t, editCircle(t, k, view, dir), dir)
	if k.Runs.Load() != 4 {
		t.Errorf("after the edit: %d runs, want 4 (the Go project's overlay alone)", k.Runs.Load())
	}

	k.Close()
	k = start(t, data, r, map[string]repo.View{"shapes": view})
	set = waitFor(t, k, view, "reopened", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	if k.Runs.Load() != 0 || k.Reused.Load() != 4 {
		t.Errorf("after a restart: %d runs, %d stores reused; want 0 and 4", k.Runs.Load(), k.Reused.Load())
	}
	checkSymbols(t, set, dir)

	k.Close()
	damage(t, data, "typescript-")
	k = start(t, data, r, map[string]repo.View{"shapes": view})
	set = waitFor(t, k, view, "the damaged store made again", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	if k.Runs.Load() != 1 || k.Reused.Load() != 3 {
		t.Errorf("after a damaged store: %d runs, %d stores reused; want 1 and 3", k.Runs.Load(), k.Reused.Load())
	}
	checkSymbols(t, set, dir)
}

// checkSymbols checks the symbols at a place of each project's files
// (circle.go's Area is found on the line it is on, before or after
// editCircle).
func checkSymbols(t *testing.T, set *precise.Set, dir string) {
	t.Helper()
	areaLine := 10
	if d, _ := set.Document("circle/circle.go"); d.Hash == sha256.Sum256([]byte(editedCircle)) {
		areaLine = 8
	}
	tests := []struct {
		path   string
		line   int
		what   string
		symbol string
	}{
		{"circle/circle.go", areaLine, "Area", "`example.com/shapes/circle`/Circle#Area()."},
		{"shapes.go", 6, "Area", "`example.com/shapes`/Shape#Area."}, // scip-go names an interface's methods so
		{"web/src/main.ts", 3, "totalArea", "`shape.ts`/totalArea()."},
		{"py/zoo/keeper.py", 6, "Animal", "`zoo.animals`/Animal#"},
	}
	for _, tc := range tests {
		if got := symbolAt(t, set, tc.path, tc.line, column(t, dir, tc.path, tc.line, tc.what)); !strings.HasSuffix(got, tc.symbol) {
			t.Errorf("at %s:%d %s: %q, want a symbol ending %s", tc.path, tc.line, tc.what, got, tc.symbol)
		}
	}
}

// editedCircle is circle.go as editCircle writes it.
const editedCircle = "// Package circle is the round shape.\npackage circle\n\n// Circle is a shape of a radius.\ntype Circle struct{ R float64 }\n\n" +
	"// Area is about πr².\nfunc (c Circle) Area() float64 { return 3 * c.R * c.R }\n\n// Diameter is twice the radius.\nfunc (c Circle) Diameter() float64 { return 2 * c.R }\n"

// editCircle edits circle/circle.go and waits until an overlay of its
// package answers for it.
func editCircle(t *testing.T, k *preciselocal.Keeper, view repo.View, dir string) *precise.Set {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "circle", "circle.go"), []byte(editedCircle), 0o644); err != nil {
		t.Fatal(err)
	}
	set := waitFor(t, k, view, "the edit indexed", func(set *precise.Set, _ precise.State) bool {
		d, ok := set.Document("circle/circle.go")
		return ok && d.Hash == sha256.Sum256([]byte(editedCircle))
	})
	if got := symbolAt(t, set, "circle/circle.go", 11, 17); !strings.HasSuffix(got, "Circle#Diameter().") {
		t.Errorf("the new method is %q", got)
	}
	goStores := k.Status(nil)[0].Projects[0].Stores
	if len(goStores) != 2 || !slices.Equal(goStores[1].Packages, []string{"./circle"}) || goStores[1].Documents != 1 {
		t.Errorf("after the edit, Go stores %+v; want an overlay of ./circle's one file", goStores)
	}
	return set
}

// damage cuts in half the store whose name starts with prefix.
func damage(t *testing.T, data, prefix string) {
	t.Helper()
	stores, _ := filepath.Glob(filepath.Join(data, "*", prefix+"*.idx"))
	if len(stores) != 1 {
		t.Fatalf("stores %q: %v", prefix, stores)
	}
	info, err := os.Stat(stores[0])
	if err == nil {
		err = os.Truncate(stores[0], info.Size()/2)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestFailures: an indexer that crashes fails its project with a reason
// that names how and quotes nothing it printed; indexers that are not
// installed leave their projects unavailable, saying what to install.
// Nothing answers for them, and a change of the failed project's files
// tries it again.
func TestFailures(t *testing.T) {
	dir := copyRepo(t)
	view := openView(t, dir)
	r := runner(t, "crash")
	r.NodeModules = ""
	k := start(t, t.TempDir(), r, map[string]repo.View{"shapes": view})
	set := waitFor(t, k, view, "every project settled", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	_, st, _ := k.Indexes(context.Background(), home, view, nil)
	want := map[string]precise.Status{"go": precise.Failed, "typescript": precise.Unavailable, "python": precise.Unavailable}
	if got := statuses(st); !maps.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	for _, p := range st.Projects {
		if strings.Contains(p.Reason, "crashed") || p.Language == "go" && p.Reason != "exit status 2" ||
			p.Language != "go" && !strings.Contains(p.Reason, "npm ci") {
			t.Errorf("%s: reason %q", p.Language, p.Reason)
		}
	}
	if got := st.Why("circle/circle.go", false); got != "the go index is failed: exit status 2" {
		t.Errorf("Why = %q", got)
	}
	if d, ok := set.Document("circle/circle.go"); ok {
		t.Errorf("a failed project answers: %+v", d)
	}
	runs := k.Runs.Load()
	if err := os.WriteFile(filepath.Join(dir, "circle", "more.go"), []byte("package circle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, k, view, "the Go project tried again", func(*precise.Set, precise.State) bool {
		s := k.Status(nil)[0].Projects[0]
		return s.LastRun != nil && s.LastRun.Error != "" && k.Runs.Load() > runs
	})
}

// TestOtherRepositories: a call's Set has, for global symbols, the other
// followed repositories it may read, and no others.
func TestOtherRepositories(t *testing.T) {
	a := openView(t, repotest.WriteDir(t, map[string]string{"go.mod": "module example.com/a\n\ngo 1.22\n", "a.go": "package a\n\nfunc A() {}\n"}))
	b := openView(t, repotest.WriteDir(t, map[string]string{"go.mod": "module example.com/b\n\ngo 1.22\n", "b.go": "package b\n\nfunc B() {}\n"}))
	k := start(t, t.TempDir(), runner(t, "index-go"), map[string]repo.View{"a": a, "b": b})
	ready := func(_ *precise.Set, st precise.State) bool { return settled(st) }
	waitFor(t, k, a, "a indexed", ready)
	setB := waitFor(t, k, b, "b indexed", ready)
	symbol := symbolAt(t, setB, "b.go", 3, 6)
	for _, tc := range []struct {
		allowed []string
		want    bool
	}{{nil, true}, {[]string{"a", "b"}, true}, {[]string{"a"}, false}, {[]string{}, false}} {
		set, _, err := k.Indexes(context.Background(), reposcope.Ref{Tenant: "acme", Name: "a"}, a, tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		info, found, err := set.Symbol(context.Background(), symbol)
		if err != nil || found != tc.want || found && (len(info.Definitions) != 1 || info.Definitions[0].Repo != "b") {
			t.Errorf("allowed %q: %s found %v (%+v, %v), want %v", tc.allowed, symbol, found, info.Definitions, err, tc.want)
		}
	}
}

// TestNoConverter: a binary without the converter indexes nothing, and
// says so.
func TestNoConverter(t *testing.T) {
	view := openView(t, repotest.WriteDir(t, map[string]string{"go.mod": "module example.com/a\n\ngo 1.22\n", "a.go": "package a\n"}))
	k, err := preciselocal.New(preciselocal.Options{Dir: t.TempDir(), Runner: runner(t, "index-go")})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	k.Follow("a", view)
	waitFor(t, k, view, "settled", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	if p := k.State(view).Projects[0]; p.Status != precise.Unavailable || !strings.Contains(p.Reason, "precise-convert") {
		t.Errorf("without a converter: %+v", p)
	}
}

// TestRelativeDir: stores kept in a folder named from the server's working
// directory (make run's .toolshed) are made, although the indexers and the
// converter run in the repository's folder.
func TestRelativeDir(t *testing.T) {
	dir := copyRepo(t)
	view := openView(t, dir)
	r := runner(t, "index-go") // names node_modules from the checkout
	t.Chdir(t.TempDir())
	k := start(t, "data", r, map[string]repo.View{"shapes": view})
	waitFor(t, k, view, "every project settled", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	_, st, _ := k.Indexes(context.Background(), home, view, nil)
	if got := statuses(st); got["go"] != precise.Ready {
		status, _ := json.MarshalIndent(k.Status(nil), "", "  ")
		t.Fatalf("statuses %v; status:\n%s", got, status)
	}
}

// TestVendored: a Go module's own vendor folder is its project's, so a
// use of a vendored package goes to its definition in the vendor folder,
// before and after an edit there.
func TestVendored(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "goscip", "testdata", "vendored"))); err != nil {
		t.Fatal(err)
	}
	view := openView(t, dir)
	k := start(t, t.TempDir(), runner(t, "index-go"), map[string]repo.View{"vendored": view})
	set := waitFor(t, k, view, "indexed", func(_ *precise.Set, st precise.State) bool { return settled(st) })
	const text = "vendor/example.com/dep/text/text.go"
	if why := k.State(view).Why(text, false); why != "" {
		t.Errorf("Why(%s) = %q, want none", text, why)
	}
	checkNew(t, set, dir, text, 11)

	edited := "package text\n\n// Builder joins strings.\ntype Builder struct{}\n\n// New is a Builder.\nfunc New() *Builder { return nil }\n"
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(text)), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	set = waitFor(t, k, view, "the edit indexed", func(set *precise.Set, _ precise.State) bool {
		d, ok := set.Document(text)
		return ok && d.Hash == sha256.Sum256([]byte(edited))
	})
	checkNew(t, set, dir, text, 7)
}

// checkNew checks that the use of text.New in the vendored fixture's
// app.go goes to its definition on line of the vendored file text.
func checkNew(t *testing.T, set *precise.Set, dir, text string, line int) {
	t.Helper()
	symbol := symbolAt(t, set, "app/app.go", 8, column(t, dir, "app/app.go", 8, "New"))
	info, found, err := set.Symbol(context.Background(), symbol)
	if err != nil || !found || len(info.Definitions) != 1 || info.Definitions[0].Path != text || info.Definitions[0].Line != line {
		t.Fatalf("text.New (%q): %+v, %v, %v; want its definition at %s:%d", symbol, info.Definitions, found, err, text, line)
	}
}
