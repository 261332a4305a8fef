package navcheck

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/goscip"
)

// answers is a Navigator that answers from tables.
type answers struct {
	defs, refs map[Location][]Location
}

func (a answers) Definitions(_ context.Context, at Location) ([]Location, error) {
	return a.defs[at], nil
}
func (a answers) References(_ context.Context, at Location) ([]Location, error) {
	return a.refs[at], nil
}

// TestCompare counts each kind of difference once, where it is.
func TestCompare(t *testing.T) {
	l := func(path string, line int) Location { return Location{Path: path, Line: line, Column: 2} }
	truth := &Truth{
		Files: map[string]bool{"a.go": true, "b.go": true},
		Uses: []Use{
			{At: l("a.go", 1), Name: "F", Definitions: []Location{l("b.go", 1)}},
			{At: l("a.go", 2), Name: "G", Definitions: []Location{l("b.go", 2)}},
		},
		Symbols: []Symbol{
			{Name: "F", At: l("a.go", 1), Uses: []Location{l("a.go", 1), l("a.go", 3)}},
			{Name: "(T).Close", Group: "Close", At: l("b.go", 2), Uses: []Location{l("a.go", 2)}},
		},
	}
	right := answers{
		defs: map[Location][]Location{l("a.go", 1): {l("b.go", 1)}, l("a.go", 2): {l("b.go", 2), l("b.go", 9)}},
		refs: map[Location][]Location{l("a.go", 1): {l("a.go", 1), l("a.go", 3)}, l("b.go", 2): {l("a.go", 2)}},
	}
	tests := []struct {
		name               string
		change             func(a answers)
		defsRight, matched int
		answered, outside  int
		misses             int
	}{
		{"every answer right", func(answers) {}, 2, 3, 3, 0, 0},
		{"a wrong definition", func(a answers) { a.defs[l("a.go", 1)] = []Location{l("b.go", 5)} }, 1, 3, 3, 0, 1},
		{"no definition", func(a answers) { delete(a.defs, l("a.go", 2)) }, 1, 3, 3, 0, 1},
		{"a reference too many", func(a answers) { a.refs[l("a.go", 1)] = append(a.refs[l("a.go", 1)], l("b.go", 7)) }, 2, 3, 4, 0, 1},
		{"a reference missing", func(a answers) { a.refs[l("b.go", 2)] = nil }, 2, 2, 2, 0, 1},
		{"a reference twice", func(a answers) { a.refs[l("b.go", 2)] = []Location{l("a.go", 2), l("a.go", 2)} }, 2, 3, 3, 0, 0},
		{"a reference in a test file", func(a answers) { a.refs[l("b.go", 2)] = []Location{l("a.go", 2), l("a_test.go", 1)} }, 2, 3, 3, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nav := answers{defs: map[Location][]Location{}, refs: map[Location][]Location{}}
			for k, v := range right.defs {
				nav.defs[k] = slices.Clone(v)
			}
			for k, v := range right.refs {
				nav.refs[k] = slices.Clone(v)
			}
			tc.change(nav)
			r, err := Compare(context.Background(), truth, nav)
			if err != nil {
				t.Fatal(err)
			}
			got := []int{r.Uses, r.DefinitionsRight, r.Symbols, r.TruthRefs, r.Matched, r.Answered, r.Outside, len(r.DefinitionMisses) + len(r.ReferenceMisses)}
			want := []int{2, tc.defsRight, 2, 3, tc.matched, tc.answered, tc.outside, tc.misses}
			if !slices.Equal(got, want) {
				t.Errorf("uses, right, symbols, truth, matched, answered, outside, misses = %v, want %v\n%v %v", got, want, r.DefinitionMisses, r.ReferenceMisses)
			}
			if g := r.Groups["Close"]; g == nil || g.Symbols != 1 || g.TruthRefs != 1 {
				t.Errorf("group Close: %+v, want its one symbol", g)
			}
		})
	}
}

// agrees fails t unless every answer of nav agrees with truth, and the
// comparison saw references in the files left out (test files).
func agrees(t *testing.T, truth *Truth, nav Navigator, minUses int) *Result {
	t.Helper()
	r, err := Compare(context.Background(), truth, nav)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r.Summary())
	for _, m := range append(r.DefinitionMisses, r.ReferenceMisses...) {
		t.Error(m)
	}
	if r.DefinitionRate() != 1 || r.Precision() != 1 || r.Recall() != 1 || r.Uses < minUses {
		t.Errorf("%s; want all right, over %d uses at least", r.Summary(), minUses)
	}
	if r.Outside == 0 {
		t.Error("no reference in a test file was left out: the fixture has some")
	}
	return r
}

// TestGoFixture: on a small module (an interface and its
// implementations, an embedded field, generics, a multi-byte rune before a
// use, references in a test file), every answer agrees with go/types':
// the precise store's, made by goscip, and the tools' (find_definition
// and find_references at each position) over it.
func TestGoFixture(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	scipFile := filepath.Join(dir, "go.scip")
	f, err := os.Create(scipFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := goscip.Emit(ctx, "testdata/go", nil, f, goscip.Options{Tests: true}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err := Convert(ctx, scipFile, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store, err := NewStore(c)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := GoTruth(ctx, "testdata/go", Sample{All: true, Names: []string{"Get", "Set"}})
	if err != nil {
		t.Fatal(err)
	}
	navigators := map[string]Navigator{
		"store": store,
		"tools": Serve(t, "testdata/go", c.Served("go", "goscip")),
	}
	for name, nav := range navigators {
		t.Run(name, func(t *testing.T) {
			r := agrees(t, truth, nav, 50)
			// Get: the interface's method, Map's and Cached's; Set: Map's.
			if g, s := r.Groups["Get"], r.Groups["Set"]; g == nil || g.Symbols != 3 || s == nil || s.Symbols != 1 {
				t.Errorf("groups Get %+v and Set %+v, want 3 and 1 symbols", g, s)
			}
		})
	}
	if search := navigators["tools"].(*Tools).Search(); len(search) > 0 {
		t.Errorf("answers made by search: %v; want every one precise", search)
	}
}

// TestTSFixture: on a small TypeScript project (an interface and a class
// implementing it, imports through a re-export and under another name, a
// character of two UTF-16 units before a use, references in a spec
// file), every answer agrees with the TypeScript language service's: the
// precise store's, made by scip-typescript, and the tools' over it.
func TestTSFixture(t *testing.T) {
	ctx := context.Background()
	nodeModules, err := filepath.Abs("../../../node_modules")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/ts")); err != nil {
		t.Fatal(err)
	}
	c, _, err := IndexTS(ctx, nodeModules, dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store, err := NewStore(c)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := TSTruth(ctx, "node", filepath.Join(nodeModules, "typescript"), dir, Sample{All: true})
	if err != nil {
		t.Fatal(err)
	}
	tools := Serve(t, dir, c.Served("typescript", "scip-typescript"))
	t.Run("store", func(t *testing.T) { agrees(t, truth, store, 30) })
	t.Run("tools", func(t *testing.T) { agrees(t, truth, tools, 30) })
	if search := tools.Search(); len(search) > 0 {
		t.Errorf("answers made by search: %v; want every one precise", search)
	}
}
