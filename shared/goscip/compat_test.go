package goscip_test

import (
	"fmt"
	"go/ast"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"github.com/toolshed/toolshed/shared/goscip"
	"golang.org/x/tools/go/packages"
)

// TestSymbolsMatchScipGo indexes the fixture modules, tests included,
// with scip-go v0.1.26 (built from go.mod's tool directive) and with Emit:
// every non-local occurrence must have the same symbol and roles at the
// same range in both, both must write the same documents, and each symbol
// the same implementation relationships (order aside).
//
// The deliberate differences: scip-go also writes a document for the
// test main that go test generates in the build cache (its path leaves the
// module: ../../…/go-build/…); Emit writes only the module's files, and
// those of its vendor folder too, which scip-go leaves out (their symbols
// are the ones scip-go gives their uses: TestVendoredDefinitions).
// Documentation differs too (kinds, display names, doc comments of
// fields, grouped declarations), and is not compared.
func TestSymbolsMatchScipGo(t *testing.T) {
	bin := buildScipGo(t)
	tests := []struct {
		dir string
		min int // non-local occurrences scip-go writes at least, so that a broken load shows
	}{
		{fixture, 250},
		{vendoredFixture, 8},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.dir), func(t *testing.T) {
			dir, err := filepath.Abs(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			theirs := scipGoIndex(t, bin, dir)
			ours, _ := emit(t, dir, nil, goscip.Options{Tests: true, ModuleVersion: "v1.0.0"})
			compareScipGo(t, theirs, ours, tt.min)
		})
	}
}

// compareScipGo holds our index of a module to scip-go's: the same
// occurrences, documents and relationships, outside scip-go's build-cache
// documents and our vendored ones.
func compareScipGo(t *testing.T, theirs, ours *scip.Index, min int) {
	t.Helper()
	inModule := func(path string) bool { return !strings.HasPrefix(path, "../") }
	notVendored := func(path string) bool { return !strings.HasPrefix(path, "vendor/") }
	want, got := occurrences(theirs, inModule), occurrences(ours, notVendored)
	if len(want) < min {
		t.Fatalf("scip-go wrote %d non-local occurrences, fewer than the fixture has", len(want))
	}
	for pos, symbols := range want {
		if got[pos] != symbols {
			t.Errorf("at %s: scip-go %q, we %q", pos, symbols, got[pos])
		}
	}
	for pos, symbols := range got {
		if _, ok := want[pos]; !ok {
			t.Errorf("at %s: we %q, scip-go nothing", pos, symbols)
		}
	}
	wantDocs := slices.DeleteFunc(documentPaths(theirs), func(p string) bool { return !inModule(p) })
	if got := slices.DeleteFunc(documentPaths(ours), func(p string) bool { return !notVendored(p) }); !slices.Equal(got, wantDocs) {
		t.Errorf("documents %v, scip-go %v", got, wantDocs)
	}
	wantRels, gotRels := relationships(theirs, inModule), relationships(ours, notVendored)
	for symbol, rels := range wantRels {
		if gotRels[symbol] != rels {
			t.Errorf("%s implements\n%s\nfor scip-go, for us\n%s", symbol, rels, gotRels[symbol])
		}
	}
	if len(gotRels) != len(wantRels) {
		t.Errorf("%d symbols with information, scip-go %d", len(gotRels), len(wantRels))
	}
}

// buildScipGo builds scip-go from go.mod's tool directive.
func buildScipGo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scip-go")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sourcegraph/scip-go/cmd/scip-go").CombinedOutput(); err != nil {
		t.Fatalf("building scip-go: %v\n%s", err, out)
	}
	return bin
}

// scipGoIndex indexes dir with scip-go (bin).
func scipGoIndex(t *testing.T, bin, dir string) *scip.Index {
	t.Helper()
	out := filepath.Join(t.TempDir(), "index.scip")
	cmd := exec.Command(bin, "--quiet", "--output", out, "--module-version", "v1.0.0",
		"--module-root", dir, "--repository-root", dir, "--project-root", dir, "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scip-go: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data)
}

// relationships maps each non-local symbol with information to its
// relationships, sorted.
func relationships(idx *scip.Index, keep func(string) bool) map[string]string {
	rels := map[string]string{}
	for _, doc := range idx.Documents {
		if !keep(doc.RelativePath) {
			continue
		}
		for _, info := range doc.Symbols {
			if isLocal(info.Symbol) {
				continue
			}
			var list []string
			for _, r := range info.Relationships {
				list = append(list, fmt.Sprintf("%s impl=%v ref=%v def=%v", r.Symbol, r.IsImplementation, r.IsReference, r.IsTypeDefinition))
			}
			slices.Sort(list)
			rels[info.Symbol] = strings.Join(list, "\n")
		}
	}
	return rels
}

// TestReferencesMatchGoTypes: for every non-local symbol of the fixture's
// index (other than packages), the places it occurs are exactly the
// identifiers go/types resolves to one object (its definition and its
// uses, generic instances counted as their origin), objects of the
// standard library included. The one exception is a scip-go quirk Emit
// keeps: a pointer embedded in a variable's anonymous struct
// (shapes.Holder's *Rect) is named at the star, so its uses are lost.
func TestReferencesMatchGoTypes(t *testing.T) {
	dir, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := emit(t, dir, nil, goscip.Options{Tests: true})
	ours := map[string][]string{} // symbol → positions
	for _, doc := range idx.Documents {
		for _, o := range doc.Occurrences {
			if !isLocal(o.Symbol) && !strings.HasSuffix(o.Symbol, "/") {
				ours[o.Symbol] = append(ours[o.Symbol], fmt.Sprintf("%s:%d:%d", doc.RelativePath, o.Range[0]+1, o.Range[1]+1))
			}
		}
	}
	byPositions := map[string]string{} // go/types: positions → object
	for obj, positions := range goTypesIdentifiers(t, dir) {
		byPositions[strings.Join(positions, " ")] = obj
	}
	quirks := []string{"`example.com/fixture/shapes`/Holder:Rect."}
	for symbol, positions := range ours {
		slices.Sort(positions)
		positions = slices.Compact(positions)
		if _, ok := byPositions[strings.Join(positions, " ")]; !ok && !slices.ContainsFunc(quirks, func(q string) bool { return strings.HasSuffix(symbol, q) }) {
			t.Errorf("%s occurs at %v, which is no object's identifiers for go/types", symbol, positions)
		}
	}
	for _, want := range []string{"`example.com/fixture/shapes`/Shape#Area.", "`example.com/fixture/shapes`/Rect#Area().",
		"`example.com/fixture/shapes`/Circle#Area().", "`example.com/fixture/shapes`/Named#Rect.",
		"`example.com/fixture/shapes`/Stack#items.", "`example.com/fixture/shapes`/Push().", "`example.com/fixture/shapes`/Map().",
		"`example.com/fixture/shapes`/Default.", "`example.com/fixture/shapes`/Pi.", "`example.com/fixture/server`/Handler#store.",
		"`example.com/fixture/shapes`/Total().", "`net/http`/ResponseWriter#", "`net/http`/Handler#", "fmt/Fprintf()."} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(ours)), func(s string) bool { return strings.HasSuffix(s, want) }) {
			t.Errorf("no symbol %s in the index", want)
		}
	}
}

// goTypesIdentifiers type-checks the module at dir (tests included) with
// go/packages and maps each object (by its declaration's position) to the
// sorted positions ("path:line:column", in dir) of the identifiers that
// define or use it; the blank identifier, labels, package names and the
// universe's objects are left out.
func goTypesIdentifiers(t *testing.T, dir string) map[string][]string {
	t.Helper()
	cfg := &packages.Config{Dir: dir, Tests: true, Env: append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"),
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]map[string]bool{}
	for _, pkg := range pkgs {
		record := func(id *ast.Ident, obj types.Object) {
			pos := pkg.Fset.Position(id.Pos())
			rel, err := filepath.Rel(dir, pos.Filename)
			if obj == nil || id.Name == "_" || obj.Pkg() == nil || err != nil || strings.HasPrefix(rel, "..") {
				return
			}
			switch obj.(type) {
			case *types.Label, *types.PkgName:
				return
			}
			key := pkg.Fset.Position(origin(obj).Pos()).String()
			if found[key] == nil {
				found[key] = map[string]bool{}
			}
			found[key][fmt.Sprintf("%s:%d:%d", filepath.ToSlash(rel), pos.Line, pos.Column)] = true
		}
		for id, obj := range pkg.TypesInfo.Defs {
			record(id, obj)
		}
		for id, obj := range pkg.TypesInfo.Uses {
			record(id, obj)
		}
	}
	objects := map[string][]string{}
	for key, positions := range found {
		for p := range positions {
			objects[key] = append(objects[key], p)
		}
		slices.Sort(objects[key])
	}
	return objects
}

func origin(obj types.Object) types.Object {
	switch obj := obj.(type) {
	case *types.Var:
		return obj.Origin()
	case *types.Func:
		return obj.Origin()
	}
	return obj
}
