package goscip_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// vendoredFixture is a module whose dependency example.com/dep is only in
// its vendor folder (vendor/modules.txt), never in the module cache.
const vendoredFixture = "testdata/vendored"

// vendoredText is the symbol prefix of the vendored package: the
// dependency's module and version, as scip-go names it.
const vendoredText = "scip-go gomod example.com/dep v1.2.0 `example.com/dep/text`/"

// TestVendoredDefinitions: indexing a whole module writes the packages of
// its vendor folder too (./... leaves them out), so each use of a vendored
// package's declaration has its definition in the vendored file, under
// the symbol the use has; an index of some packages (patterns) leaves the
// vendored ones out.
func TestVendoredDefinitions(t *testing.T) {
	idx, _ := emit(t, vendoredFixture, nil, goscip.Options{Tests: true})
	want := []string{"app/app.go", "app/app_test.go", "vendor/example.com/dep/text/text.go"}
	if got := documentPaths(idx); !slices.Equal(got, want) {
		t.Errorf("documents %v, want %v", got, want)
	}
	defs := definitions(idx)
	occ := occurrences(idx, everything)
	uses := []struct{ at, symbol, def string }{
		{"app/app.go:8:14-21", vendoredText + "Builder#", "vendor/example.com/dep/text/text.go:6:6-13"},
		{"app/app.go:8:29-32", vendoredText + "New().", "vendor/example.com/dep/text/text.go:11:6-9"},
		{"app/app.go:9:11-14", vendoredText + "Builder#Add().", "vendor/example.com/dep/text/text.go:14:19-22"},
		{"app/app.go:9:37-40", vendoredText + "Builder#Len().", "vendor/example.com/dep/text/text.go:20:19-22"},
	}
	for _, u := range uses {
		if got := occ[u.at]; got != u.symbol+" 8" {
			t.Errorf("the use at %s is %q, want %q", u.at, got, u.symbol+" 8")
		}
		if got := defs[u.symbol]; got != u.def {
			t.Errorf("%s is defined at %q, want %s", u.symbol, got, u.def)
		}
	}
	idx, _ = emit(t, vendoredFixture, []string{"./app"}, goscip.Options{})
	if got := documentPaths(idx); !slices.Equal(got, []string{"app/app.go"}) {
		t.Errorf("with patterns, documents %v; want app/app.go only", got)
	}
}

// TestInconsistentVendor: a vendor folder go list refuses (go.mod requires
// another version than vendor/modules.txt records, which go build refuses
// too) is ignored: the module is indexed as one without it, its own code
// resolved, the dependency's uses unresolved (it is not in the module
// cache), and the vendored files not written.
func TestInconsistentVendor(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/vendored\n\ngo 1.22\n\nrequire example.com/dep v1.3.0\n"}
	for _, name := range []string{"app/app.go", "vendor/modules.txt", "vendor/example.com/dep/text/text.go"} {
		data, err := os.ReadFile(filepath.Join(vendoredFixture, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(data)
	}
	idx, stats := emit(t, repotest.WriteDir(t, files), nil, goscip.Options{})
	if got := documentPaths(idx); !slices.Equal(got, []string{"app/app.go"}) || stats.Modules != 1 || len(stats.Skipped) != 0 {
		t.Errorf("documents %v, %d modules, skipped %q; want app/app.go in one module", got, stats.Modules, stats.Skipped)
	}
	occ := occurrences(idx, everything)
	if got, want := occ["app/app.go:7:6-14"], "scip-go gomod example.com/vendored . `example.com/vendored/app`/Greeting(). 1"; got != want {
		t.Errorf("Greeting is %q, want %q", got, want)
	}
	if got := occ["app/app.go:8:29-32"]; got != "" {
		t.Errorf("text.New, not in the module cache, resolved to %q", got)
	}
}

// definitions maps each non-local symbol to the place of its definition
// ("path:line:column-end").
func definitions(idx *scip.Index) map[string]string {
	defs := map[string]string{}
	for _, doc := range idx.Documents {
		for _, o := range doc.Occurrences {
			if !isLocal(o.Symbol) && o.SymbolRoles&int32(scip.SymbolRole_Definition) != 0 {
				defs[o.Symbol] = at(doc, o)
			}
		}
	}
	return defs
}
