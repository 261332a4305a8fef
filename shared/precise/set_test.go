package precise_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

const (
	iface = "scip-go gomod example.com/m v1 `example.com/m/p`/Reader#"
	impl  = "scip-go gomod example.com/m v1 `example.com/m/p`/File#"
	read  = "scip-go gomod example.com/m v1 `example.com/m/p`/Read()."
)

// repoV1 is a repository's first index: p/a.go defines Reader, File
// (which implements it) and Read; p/b.go uses them.
func repoV1() *scip.Index {
	return &scip.Index{
		Metadata: meta("scip-go"),
		Documents: []*scip.Document{
			{RelativePath: "p/a.go", Language: "go", Occurrences: []*scip.Occurrence{
				occ(iface, 1, 2, 5, 11), occ(impl, 1, 6, 5, 9), occ(read, 1, 10, 5, 9),
			}, Symbols: []*scip.SymbolInformation{
				{Symbol: iface, Documentation: []string{"```go\ntype Reader interface\n```", "Reader reads."}},
				{Symbol: impl, Relationships: []*scip.Relationship{{Symbol: iface, IsImplementation: true}}},
				{Symbol: read, Documentation: []string{"```go\nfunc Read()\n```"}},
			}},
			goDoc("p/b.go", occ(read, 0, 3, 1, 5), occ(iface, 0, 4, 7, 13), occ(read, 0, 8, 1, 5)),
		},
	}
}

// TestOverlay re-indexes p/b.go, which no longer calls Read, and p/c.go,
// new: the overlay's documents hide the first index's.
func TestOverlay(t *testing.T) {
	base := index(t, repoV1(), fromscip.Options{Commit: "c1"})
	overlay := index(t, &scip.Index{Metadata: meta("scip-go"), Documents: []*scip.Document{
		goDoc("p/b.go", occ(iface, 0, 4, 7, 13)),
		goDoc("p/c.go", occ(read, 0, 2, 1, 5)),
	}}, fromscip.Options{Commit: "c2"})
	set, err := precise.NewSet("t1", precise.Repository{Name: "r", Indexes: []*precise.Index{base, overlay}})
	if err != nil {
		t.Fatal(err)
	}
	if got := allReferences(t, set, read, 1); !slices.Equal(got, []string{"p/a.go:11:6", "p/c.go:3:2"}) {
		t.Errorf("references of Read: %q", got)
	}
	if got := allReferences(t, set, iface, 0); !slices.Equal(got, []string{"p/a.go:3:6", "p/b.go:5:8"}) {
		t.Errorf("references of Reader: %q", got)
	}
	if d, ok := set.Document("p/b.go"); !ok || d.Commit != "c2" {
		t.Errorf("p/b.go is the overlay's: %+v", d)
	}
	if d, ok := set.Document("p/a.go"); !ok || d.Commit != "c1" {
		t.Errorf("p/a.go is the base's: %+v", d)
	}
	occs, err := set.At(context.Background(), "p/b.go", 9, 2)
	if err != nil || len(occs) != 0 {
		t.Errorf("the overlay's p/b.go has nothing at 9:2 (the base had Read): %v, %v", occs, err)
	}
	occs, _ = set.At(context.Background(), "p/a.go", 7, 7)
	if len(occs) != 1 || occs[0].Symbol != impl || occs[0].Repo != "r" {
		t.Errorf("the base's p/a.go at 7:7: %+v", occs)
	}
	info, ok, err := set.Symbol(context.Background(), iface)
	if err != nil || !ok || info.Signature != "type Reader interface" || info.Doc != "Reader reads." || !slices.Equal(ats(info.Definitions), []string{"p/a.go:3:6"}) {
		t.Errorf("Reader: %+v, %v, %v", info, ok, err)
	}
	by, _, err := set.Implementations(context.Background(), iface)
	if err != nil || !slices.Equal(by, []string{impl}) {
		t.Errorf("implementations of Reader: %q, %v", by, err)
	}

	// An overlay that re-indexes p/a.go, where File no longer implements
	// Reader, and no longer defines Read.
	again := index(t, &scip.Index{Metadata: meta("scip-go"), Documents: []*scip.Document{
		goDoc("p/a.go", occ(iface, 1, 2, 5, 11), occ(impl, 1, 6, 5, 9)),
	}}, fromscip.Options{Commit: "c3"})
	set, _ = precise.NewSet("t1", precise.Repository{Name: "r", Indexes: []*precise.Index{base, overlay, again}})
	if by, _, _ := set.Implementations(context.Background(), iface); len(by) != 0 {
		t.Errorf("a relationship of a hidden document: %q", by)
	}
	if info, ok, _ := set.Symbol(context.Background(), read); !ok || len(info.Definitions) != 0 || info.Signature != "" {
		t.Errorf("a definition in a hidden document: %+v", info)
	}
}

// TestAcrossRepositories links a symbol defined in one repository of a
// tenant and used in another; local symbols stay in their document.
func TestAcrossRepositories(t *testing.T) {
	lib := index(t, repoV1(), fromscip.Options{Commit: "lib1", Tenant: "t1"})
	app := index(t, &scip.Index{Metadata: meta("scip-go"), Documents: []*scip.Document{
		goDoc("main.go", occ(read, 0, 4, 1, 5), occ("local 0", 1, 5, 1, 2), occ("local 0", 0, 6, 1, 2)),
	}}, fromscip.Options{Commit: "app1", Tenant: "t1"})
	set, err := precise.NewSet("t1", precise.Repository{Name: "app", Indexes: []*precise.Index{app}},
		precise.Repository{Name: "lib", Indexes: []*precise.Index{lib}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	after := precise.Location{}
	for {
		page, more, err := set.References(context.Background(), read, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page {
			got = append(got, o.Repo+":"+at(o))
		}
		if !more {
			break
		}
		after = page[len(page)-1].Location()
	}
	want := []string{"app:main.go:5:2", "lib:p/a.go:11:6", "lib:p/b.go:4:2", "lib:p/b.go:9:2"}
	if !slices.Equal(got, want) {
		t.Errorf("references across repositories: %q, want %q", got, want)
	}
	info, ok, _ := set.Symbol(context.Background(), read)
	if !ok || len(info.Definitions) != 1 || info.Definitions[0].Repo != "lib" || info.Signature != "func Read()" {
		t.Errorf("the definition is the library's: %+v", info)
	}
	local := precise.LocalSymbol("local 0", "main.go")
	if got := allReferences(t, set, local, 0); !slices.Equal(got, []string{"main.go:6:2", "main.go:7:2"}) {
		t.Errorf("a local symbol: %q", got)
	}
	if got := allReferences(t, set, precise.LocalSymbol("local 0", "p/a.go"), 0); len(got) != 0 {
		t.Errorf("a local symbol of another repository: %q", got)
	}
}

// TestTenants: a Set takes the caller's tenant and refuses another
// tenant's index; an index for every tenant ("") goes in any.
func TestTenants(t *testing.T) {
	mine := index(t, repoV1(), fromscip.Options{Tenant: "t1"})
	shared := index(t, repoV1(), fromscip.Options{})
	theirs := index(t, repoV1(), fromscip.Options{Tenant: "t2"})
	home := precise.Repository{Name: "home", Indexes: []*precise.Index{mine, shared}}
	if _, err := precise.NewSet("t1", home); err != nil {
		t.Errorf("own and shared indexes: %v", err)
	}
	if _, err := precise.NewSet("t1", home, precise.Repository{Name: "x", Indexes: []*precise.Index{theirs}}); !errors.Is(err, precise.ErrTenant) {
		t.Errorf("another tenant's index: %v, want ErrTenant", err)
	}
	if _, err := precise.NewSet("t2", home); !errors.Is(err, precise.ErrTenant) {
		t.Errorf("a Set of another tenant: %v, want ErrTenant", err)
	}
	if _, err := precise.NewSet("", precise.Repository{Indexes: []*precise.Index{shared}}); err == nil {
		t.Error("a Set without a tenant")
	}
	if _, err := precise.NewSet("t1", home, home); err == nil {
		t.Error("a repository twice")
	}
}

// TestDuplicatesAndExternals: a document given twice is one (its
// occurrences merged, repeats once); what a document says of a symbol
// wins over the external symbols', which answer for symbols defined
// elsewhere.
func TestDuplicatesAndExternals(t *testing.T) {
	ext := "scip-go gomod github.com/golang/go/src go1.26 io/Reader#"
	x := repoV1()
	x.Documents = append(x.Documents, goDoc("p/b.go", occ(read, 0, 3, 1, 5), occ(ext, 0, 12, 1, 7)))
	x.ExternalSymbols = []*scip.SymbolInformation{
		{Symbol: ext, Documentation: []string{"```go\ntype Reader interface\n```", "Reader is the interface that wraps the basic Read method."}},
		{Symbol: read, Documentation: []string{"```go\nfunc Read() // external\n```"}},
	}
	ix := index(t, x, fromscip.Options{})
	if got := allReferences(t, ix, read, 0); !slices.Equal(got, []string{"p/a.go:11:6", "p/b.go:4:2", "p/b.go:9:2"}) {
		t.Errorf("references with a document given twice: %q", got)
	}
	occs, _ := ix.At(context.Background(), "p/b.go", 13, 3)
	if len(occs) != 1 || occs[0].Symbol != ext {
		t.Errorf("the second part of p/b.go: %+v", occs)
	}
	if st := ix.Stats(); st.Documents != 2 || st.External != 2 {
		t.Errorf("stats: %+v", st)
	}
	info, ok, _ := ix.Symbol(context.Background(), ext)
	if !ok || !info.External || info.Signature != "type Reader interface" || info.DisplayName != "Reader" || info.Kind != "Type" {
		t.Errorf("an external symbol: %+v", info)
	}
	if info, _, _ := ix.Symbol(context.Background(), read); info.External || info.Signature != "func Read()" {
		t.Errorf("the document's information wins: %+v", info)
	}
}

// TestRanges: multi-line ranges, nesting (innermost first), empty
// ranges, and ranges that are not ranges (dropped).
func TestRanges(t *testing.T) {
	outer, inner := "scip-typescript npm p 1 `a.ts`/f().", "scip-typescript npm p 1 `a.ts`/x."
	ix := index(t, &scip.Index{Metadata: meta("scip-go"), Documents: []*scip.Document{goDoc("a.go",
		occ(outer, 0, 1, 4, 3, 1), // lines 2 to 4
		occ(inner, 1, 2, 2, 3),
		occ("local 1", 0, 5, 0, 0), // empty
		occ(inner, 0, 1, 2),        // two numbers
		occ(inner, 0, 3, 5, 2, 1),  // ends before it starts
		occ(inner, 0, -1, 2, 3),    // negative
		occ("", 0, 7, 1, 2),        // no symbol
	)}}, fromscip.Options{})
	tests := []struct {
		line, col int
		want      []string
	}{
		{3, 3, []string{inner, outer}},
		{3, 5, []string{outer}},
		{4, 1, []string{outer}},
		{4, 2, nil}, // the end is exclusive
		{6, 1, []string{"local 1 a.go"}},
		{2, 1, nil},
	}
	for _, tt := range tests {
		occs, err := ix.At(context.Background(), "a.go", tt.line, tt.col)
		var got []string
		for _, o := range occs {
			got = append(got, o.Symbol)
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("at %d:%d: %q, %v; want %q", tt.line, tt.col, got, err, tt.want)
		}
	}
	if st := ix.Stats(); st.Dropped != 4 || st.Occurrences != 3 {
		t.Errorf("stats: %+v", st)
	}
	occs, _ := ix.Occurrences(context.Background(), "a.go", 3, 3)
	if len(occs) != 1 || occs[0].Range != (precise.Range{Line: 3, Column: 3, EndLine: 3, EndColumn: 4}) {
		t.Errorf("occurrences of line 3: %+v", occs)
	}
}
