package precise_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

// The expected answers below are what go/types says of testdata/fixture
// (types.Info.Defs and Uses for each identifier, types.Implements for
// each named type and interface), written as SCIP symbols.

func sym(pkg, descriptors string) string {
	return "scip-go gomod example.com/fixture v1.0.0 `example.com/fixture/" + pkg + "`/" + descriptors
}

// at is an occurrence as the tests write it: "path:line:col".
func at(o precise.Occurrence) string { return fmt.Sprintf("%s:%d:%d", o.Path, o.Line, o.Column) }

func ats(occs []precise.Occurrence) []string {
	var out []string
	for _, o := range occs {
		out = append(out, at(o))
	}
	return out
}

// fixtureIndex is the fixture's store, with the snapshot's hashes.
func fixtureIndex(t *testing.T) *precise.Index {
	docs, text := precisetest.Snapshot(t, "testdata/fixture")
	return open(t, build(t, fixture(t), fromscip.Options{Commit: "c1", Docs: docs, SkipOutside: true, Text: text}))
}

// TestFixtureAt asks what is at positions of the fixture.
func TestFixtureAt(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		path      string
		line, col int
		want      []string // symbols, innermost first
	}{
		{"render/render.go", 17, 22, []string{sym("shapes", "Shape#Name.")}},                             // s.Name(), after "é "
		{"render/render.go", 17, 21, []string{sym("shapes", "Shape#Name.")}},                             // its first byte
		{"render/render.go", 17, 25, nil},                                                                // just after it
		{"render/render.go", 26, 10, []string{sym("render", "Fancy#Square."), sym("shapes", "Square#")}}, // an embedded field
		{"cmd/app/main.go", 19, 16, []string{sym("shapes", "Square#Area().")}},                           // a promoted method
		{"shapes/shapes.go", 28, 2, []string{"local 5 shapes/shapes.go"}},                                // sum :=
		{"shapes/shapes.go", 3, 1, nil},
		{"no/such.go", 1, 1, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d:%d", tt.path, tt.line, tt.col), func(t *testing.T) {
			occs, err := ix.At(context.Background(), tt.path, tt.line, tt.col)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range occs {
				got = append(got, o.Symbol)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFixtureSymbol asks for hover and definitions.
func TestFixtureSymbol(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		symbol, kind, name, signature, doc string
		defs                               []string
		rels                               []precise.Relationship
	}{
		{sym("shapes", "Shape#Area."), "Term", "Area", "func (Shape).Area() float64", "", []string{"shapes/shapes.go:6:2"}, nil},
		{sym("shapes", "Square#Area()."), "Method", "Area", "func (Square).Area() float64", "Area is the side squared.",
			[]string{"shapes/shapes.go:14:17"}, []precise.Relationship{{Symbol: sym("shapes", "Shape#Area."), IsImplementation: true}}},
		{sym("render", "Describe()."), "Method", "Describe", "func Describe(s Shape) string", "Describe says what s is and how large.",
			[]string{"render/render.go:16:6"}, nil},
		{"local 5 shapes/shapes.go", "Local", "sum", "var sum float64", "", []string{"shapes/shapes.go:28:2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			got, ok, err := ix.Symbol(context.Background(), tt.symbol)
			if err != nil || !ok {
				t.Fatalf("%v, %v", ok, err)
			}
			if got.Kind != tt.kind || got.DisplayName != tt.name || got.Signature != tt.signature || got.Doc != tt.doc {
				t.Errorf("got %q %q %q %q, want %q %q %q %q", got.Kind, got.DisplayName, got.Signature, got.Doc, tt.kind, tt.name, tt.signature, tt.doc)
			}
			if defs := ats(got.Definitions); !slices.Equal(defs, tt.defs) {
				t.Errorf("definitions %q, want %q", defs, tt.defs)
			}
			if !slices.Equal(got.Relationships, tt.rels) {
				t.Errorf("relationships %+v, want %+v", got.Relationships, tt.rels)
			}
		})
	}
	// The square's doc comment, then its body as markdown.
	info, _, _ := ix.Symbol(context.Background(), sym("shapes", "Square#"))
	if info.Signature != "type Square struct" || !strings.HasPrefix(info.Doc, "Square is a Shape with four equal sides.\n\n```go\nstruct {") {
		t.Errorf("Square#: %q, %q", info.Signature, info.Doc)
	}
	if _, ok, err := ix.Symbol(context.Background(), sym("shapes", "Nothing#")); ok || err != nil {
		t.Errorf("an unknown symbol: %v, %v", ok, err)
	}
}

// TestFixtureReferences pages through references.
func TestFixtureReferences(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		symbol string
		want   []string
	}{
		{sym("shapes", "Shape#Area."), []string{"render/render.go:18:42", "shapes/shapes.go:6:2", "shapes/shapes.go:30:12"}},
		{sym("shapes", "Square#"), []string{"cmd/app/main.go:12:15", "render/render.go:26:9", "shapes/shapes.go:11:6", "shapes/shapes.go:14:9", "shapes/shapes.go:17:9"}},
		{sym("shapes", "Square#Side."), []string{"cmd/app/main.go:12:22", "cmd/app/main.go:19:33", "shapes/shapes.go:11:21", "shapes/shapes.go:14:43", "shapes/shapes.go:14:52"}},
		{sym("shapes", "Square#Area()."), []string{"cmd/app/main.go:19:16", "shapes/shapes.go:14:17"}},
		{"local 5 shapes/shapes.go", []string{"shapes/shapes.go:28:2", "shapes/shapes.go:30:3", "shapes/shapes.go:32:9"}},
		{sym("shapes", "Nothing#"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			for _, limit := range []int{0, 1, 2} {
				if got := allReferences(t, ix, tt.symbol, limit); !slices.Equal(got, tt.want) {
					t.Errorf("pages of %d: %q, want %q", limit, got, tt.want)
				}
			}
		})
	}
	refs, _, _ := ix.References(context.Background(), sym("shapes", "Shape#Area."), precise.Location{}, 0)
	if roles := []precise.Roles{refs[0].Roles, refs[1].Roles}; roles[0]&precise.Definition != 0 || roles[1]&precise.Definition == 0 {
		t.Errorf("roles %v: a reference, then the definition", roles)
	}
}

// allReferences reads every page of a symbol's references.
func allReferences(t *testing.T, q interface {
	References(context.Context, string, precise.Location, int) ([]precise.Occurrence, bool, error)
}, symbol string, limit int) []string {
	t.Helper()
	var got []string
	after := precise.Location{}
	for range 100 {
		page, more, err := q.References(context.Background(), symbol, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if limit > 0 && len(page) > limit {
			t.Fatalf("a page of %d over the limit %d", len(page), limit)
		}
		got = append(got, ats(page)...)
		if !more {
			return got
		}
		after = page[len(page)-1].Location()
	}
	t.Fatal("the pages do not end")
	return nil
}

// TestFixtureImplementations asks both ways, for types and methods.
func TestFixtureImplementations(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		symbol   string
		by, impl []string
	}{
		{sym("shapes", "Shape#"), []string{sym("render", "Fancy#"), sym("shapes", "Circle#"), sym("shapes", "Square#")}, nil},
		{sym("render", "Namer#"), []string{sym("render", "Fancy#"), sym("shapes", "Circle#"), sym("shapes", "Square#")}, nil},
		{sym("shapes", "Square#"), nil, []string{sym("render", "Namer#"), sym("shapes", "Shape#")}},
		{sym("shapes", "Shape#Name."), []string{sym("shapes", "Circle#Name()."), sym("shapes", "Square#Name().")}, nil},
		{sym("shapes", "Circle#Name()."), nil, []string{sym("render", "Namer#Name."), sym("shapes", "Shape#Name.")}},
		{sym("shapes", "Total()."), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			by, impl, err := ix.Implementations(context.Background(), tt.symbol)
			if err != nil || !slices.Equal(by, tt.by) || !slices.Equal(impl, tt.impl) {
				t.Errorf("got %q, %q, %v; want %q, %q", by, impl, err, tt.by, tt.impl)
			}
		})
	}
}

// TestFixtureOccurrences lists what a function's lines use.
func TestFixtureOccurrences(t *testing.T) {
	ix := fixtureIndex(t)
	occs, err := ix.Occurrences(context.Background(), "render/render.go", 16, 19)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, o := range occs {
		if strings.HasSuffix(o.Symbol, ").") && o.Roles&precise.Definition == 0 {
			calls = append(calls, o.Symbol)
		}
	}
	want := []string{"scip-go gomod github.com/golang/go/src go1.22 fmt/Sprintf()."}
	if !slices.Equal(calls, want) {
		t.Errorf("calls of Describe: %q, want %q", calls, want)
	}
	if d, ok := ix.Document("render/render.go"); !ok || d.Language != "go" || d.Commit != "c1" || d.Stale || d.Hash == [32]byte{} {
		t.Errorf("document: %+v, %v", d, ok)
	}
}

// TestSpillsChangeNothing builds the fixture with budgets that spill at
// every record (more runs than are merged at once) or every few, and
// with one that holds all: the stores are the same bytes.
func TestSpillsChangeNothing(t *testing.T) {
	data := fixture(t)
	whole := build(t, data, fromscip.Options{Commit: "c"})
	for _, budget := range []int64{100, 4 << 10} {
		spilled := build(t, data, fromscip.Options{Commit: "c", MemoryBytes: budget})
		if !bytes.Equal(whole, spilled) {
			t.Errorf("a budget of %d bytes makes another store", budget)
		}
	}
	var out bytes.Buffer
	st, err := fromscip.Build(context.Background(), bytes.NewReader(data), &out, fromscip.Options{MemoryBytes: 100, TempDir: t.TempDir()})
	if err != nil || st.Spills <= 64 {
		t.Errorf("a budget of 100 bytes: %d spills (more than are merged at once wanted), %v", st.Spills, err)
	}
	if len(whole) >= len(data) {
		t.Errorf("the store (%d bytes) is not smaller than the SCIP (%d)", len(whole), len(data))
	}
}

// TestFixtureRoundTrip: every occurrence of the SCIP is where At finds
// it, and each global symbol's references are exactly its occurrences.
func TestFixtureRoundTrip(t *testing.T) {
	data := fixture(t)
	ix := open(t, build(t, data, fromscip.Options{SkipOutside: true}))
	want := map[string][]string{}
	v := scip.IndexVisitor{VisitDocument: func(ctx context.Context, d *scip.Document) error {
		if !precise.ValidPath(d.RelativePath) {
			return nil
		}
		for _, o := range d.Occurrences {
			line, col := int(o.Range[0])+1, int(o.Range[1])+1
			sym := o.Symbol
			if strings.HasPrefix(sym, "local ") {
				sym = precise.LocalSymbol(sym, d.RelativePath)
			}
			occs, err := ix.At(ctx, d.RelativePath, line, col)
			if err != nil || !slices.ContainsFunc(occs, func(x precise.Occurrence) bool { return x.Symbol == sym && x.Roles == precise.Roles(o.SymbolRoles) }) {
				t.Errorf("%s:%d:%d: %s is not in %+v (%v)", d.RelativePath, line, col, sym, occs, err)
			}
			want[sym] = append(want[sym], fmt.Sprintf("%s:%d:%d", d.RelativePath, line, col))
		}
		return nil
	}}
	if err := v.ParseStreaming(context.Background(), bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for sym, occs := range want {
		slices.Sort(occs)
		got := allReferences(t, ix, sym, 0)
		slices.Sort(got)
		if !slices.Equal(got, occs) {
			t.Errorf("%s: %q, want %q", sym, got, occs)
		}
	}
}
