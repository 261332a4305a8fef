// Package precisetest makes real precise indexes of fixture projects for
// tests, and serves them as the wiring would: the Go indexer (goscip) or
// scip-typescript (through sciprun, from the checkout's node_modules,
// which make test installs), converted by fromscip, opened with precise,
// and answered per repository by a wiring.PreciseIndexes.
package precisetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Index is a precise index of one project with the language it covers.
type Index struct {
	*precise.Index
	Language string // as shared/language names it
	Indexer  string
}

// Go indexes the Go module at dir (tests included) for tenant ("" for
// every tenant) at commit, the commit also being the module's version in
// its symbols.
func Go(tb testing.TB, dir, tenant, commit string) Index {
	tb.Helper()
	var scip bytes.Buffer
	if _, err := goscip.Emit(context.Background(), dir, nil, &scip, goscip.Options{Tests: true, ModuleVersion: commit}); err != nil {
		tb.Fatalf("index %s: %v", dir, err)
	}
	return Index{Index: build(tb, scip.Bytes(), dir, tenant, commit), Language: "go", Indexer: "goscip"}
}

// TypeScript indexes the TypeScript project at dir with scip-typescript
// (run on a copy of dir, as a separate process) for tenant at commit.
func TypeScript(tb testing.TB, dir, tenant, commit string) Index {
	tb.Helper()
	work := tb.TempDir()
	if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
		tb.Fatal(err)
	}
	projects, err := sciprun.Projects(context.Background(), os.DirFS(work))
	i := slices.IndexFunc(projects, func(p sciprun.Project) bool { return p.Language == sciprun.TypeScript })
	if err != nil || i < 0 {
		tb.Fatalf("no TypeScript project in %s: %+v, %v", dir, projects, err)
	}
	out := filepath.Join(tb.TempDir(), "index.scip")
	runner := sciprun.Runner{NodeModules: NodeModules(tb)}
	if _, err := runner.Run(context.Background(), projects[i], work, out, sciprun.Limits{}); err != nil {
		tb.Fatalf("scip-typescript on %s: %v", dir, err)
	}
	scip, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return Index{Index: build(tb, scip, dir, tenant, commit), Language: "typescript", Indexer: "scip-typescript"}
}

// NodeModules finds the checkout's node_modules (the first above the
// working directory that holds scip-typescript), failing tb without one.
func NodeModules(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	for err == nil {
		nm := filepath.Join(dir, "node_modules")
		if _, serr := os.Stat(filepath.Join(nm, "@sourcegraph", "scip-typescript", "package.json")); serr == nil {
			return nm
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
			continue
		}
		break
	}
	tb.Fatal("@sourcegraph/scip-typescript is not installed: run `npm ci` at the top of the checkout")
	return ""
}

// build converts SCIP into a store of dir's files as they are now, and
// opens it.
func build(tb testing.TB, scip []byte, dir, tenant, commit string) *precise.Index {
	tb.Helper()
	docs, text := Snapshot(tb, dir)
	var store bytes.Buffer
	o := fromscip.Options{Commit: commit, Tenant: tenant, Docs: docs, SkipOutside: true, TempDir: tb.TempDir(),
		Text: text}
	if _, err := fromscip.Build(context.Background(), bytes.NewReader(scip), &store, o); err != nil {
		tb.Fatalf("convert the index of %s: %v", dir, err)
	}
	ix, err := precise.Open(context.Background(), bytes.NewReader(store.Bytes()), int64(store.Len()))
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// Repos serves indexes by repository name: what wiring.PreciseIndexes
// answers for a call reading one of them (with the tenant's others the
// call may read, for global symbols), every index ready and covering the
// files of its language. An index made for another tenant than the
// caller's is left out, as the wiring never gives it. A repository
// without indexes answers an empty Set and no State, as the wiring does.
type Repos map[string][]Index

// Indexes is r as the wiring's PreciseIndexes.
func (r Repos) Indexes(ctx context.Context, ref reposcope.Ref, _ repo.View, allowed []string) (*precise.Set, precise.State, error) {
	home := precise.Repository{Name: ref.Name}
	var st precise.State
	for _, ix := range r.of(ref.Name, ref.Tenant) {
		home.Indexes = append(home.Indexes, ix.Index)
		st.Projects = append(st.Projects, precise.ProjectState{Language: ix.Language, Indexer: ix.Indexer, Status: precise.Ready, Commit: ix.Commit()})
	}
	if len(st.Projects) > 0 {
		st.Cover = func(path string) (int, string) {
			lang := language.Of(path)
			i := slices.IndexFunc(st.Projects, func(p precise.ProjectState) bool { return p.Language == lang })
			if i < 0 {
				return -1, "no indexer here reads " + lang
			}
			return i, ""
		}
	}
	var others []precise.Repository
	for _, name := range sortedNames(r) {
		if name != ref.Name && reposcope.Allows(allowed, name) {
			other := precise.Repository{Name: name}
			for _, ix := range r.of(name, ref.Tenant) {
				other.Indexes = append(other.Indexes, ix.Index)
			}
			others = append(others, other)
		}
	}
	set, err := precise.NewSet(ref.Tenant, home, others...)
	return set, st, err
}

// of returns the indexes of repository name that tenant may read.
func (r Repos) of(name, tenant string) []Index {
	var out []Index
	for _, ix := range r[name] {
		if t := ix.Tenant(); t == "" || t == tenant {
			out = append(out, ix)
		}
	}
	return out
}

// sortedNames lists r's repositories by name.
func sortedNames(r Repos) []string {
	var names []string
	for name := range r {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

var _ wiring.PreciseIndexes = Repos(nil).Indexes

// Snapshot gives the files under dir with their content hashes (as a
// snapshot's documents), and a Text reading them.
func Snapshot(tb testing.TB, dir string) (map[string][32]byte, func(string) ([]byte, error)) {
	tb.Helper()
	docs := map[string][32]byte{}
	root := os.DirFS(dir)
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root, p)
		docs[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return docs, func(p string) ([]byte, error) { return fs.ReadFile(root, p) }
}
