package navigate_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// TestFindImplementations: both ways, for types and methods, in Go and
// TypeScript (where a class's method overrides its base class's), every
// page size.
func TestFindImplementations(t *testing.T) {
	goH, tsH := preciseHarness(t, goModule, nil), preciseHarness(t, tsProject, nil)
	tests := []struct {
		name     string
		h        *tooltest.Harness
		args     map[string]any
		by, impl []string // name path:line:column
	}{
		{"the types of an interface", goH, pos("store/store.go", 5, 7), []string{"Fixed store/store.go:26:6", "Map store/store.go:11:6"}, nil},
		{"the interfaces of a type", goH, pos("api/api.go", 12, 23), nil, []string{"Getter store/store.go:5:6"}},
		{"the methods of an interface method", goH, pos("api/api.go", 28, 12),
			[]string{"Get store/store.go:29:16", "Get store/store.go:17:15"}, nil},
		{"what a method implements", goH, map[string]any{"symbol": gosym("store", "Map#Get().")}, nil, []string{"Get store/store.go:7:2"}},
		{"nothing", goH, pos("api/api.go", 12, 7), nil, nil},
		{"a TypeScript interface", tsH, pos("src/shape.ts", 2, 18), []string{"Circle src/circle.ts:4:14", "Ring src/circle.ts:13:14"}, nil},
		{"an overriding method", tsH, pos("src/circle.ts", 14, 4), nil, []string{"area src/circle.ts:7:3", "area src/shape.ts:4:3"}},
		{"an overridden method", tsH, pos("src/circle.ts", 7, 4), []string{"area src/circle.ts:14:3"}, []string{"area src/shape.ts:4:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 50} {
				by, impl, last := allImpls(t, tt.h, tt.args, limit)
				if !slices.Equal(by, tt.by) || !slices.Equal(impl, tt.impl) || last.Total != len(tt.by)+len(tt.impl) {
					t.Errorf("pages of %d: implementedBy %q, implements %q (total %d); want %q, %q", limit, by, impl, last.Total, tt.by, tt.impl)
				}
				if last.Precision != "precise" {
					t.Errorf("precision %q", last.Precision)
				}
			}
		})
	}
	got := call(t, goH, navigate.FindImplementationsTool, pos("store/store.go", 5, 7))
	if m := got.ImplementedBy[1]; m.Symbol != gosym("store", "Map#") || m.Signature != "type Map struct" || m.Doc != "" {
		t.Errorf("an implementation: %+v; want its symbol and signature, no doc", m)
	}
}

// allImpls pages through find_implementations.
func allImpls(t *testing.T, h *tooltest.Harness, args map[string]any, limit int) (by, impl []string, last answer) {
	t.Helper()
	for c, pages := "", 0; pages < 20; pages++ {
		a := with(args, "limit", limit)
		if c != "" {
			a["cursor"] = c
		}
		last = call(t, h, navigate.FindImplementationsTool, a)
		if n := len(last.ImplementedBy) + len(last.Implements); n > limit {
			t.Fatalf("a page of %d over the limit %d", n, limit)
		}
		for _, p := range last.ImplementedBy {
			by = append(by, p.Name+" "+p.at())
		}
		for _, p := range last.Implements {
			impl = append(impl, p.Name+" "+p.at())
		}
		if last.NextCursor == nil {
			return by, impl, last
		}
		c = *last.NextCursor
	}
	t.Fatal("the pages do not end")
	return
}

// TestFindImplementationsChangedFile: asked from an unchanged file, the
// implementations defined in a file changed since indexing are found
// there by name (a line lower now) and say so; asked from the changed
// file, the answer is made by search, and is empty.
func TestFindImplementationsChangedFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(goModule, "store/store.go"))
	if err != nil {
		t.Fatal(err)
	}
	h := preciseHarness(t, goModule, map[string]string{"store/store.go": "// Edited.\n" + string(b)})
	got := call(t, h, navigate.FindImplementationsTool, pos("api/api.go", 28, 12))
	var by []string
	for _, p := range got.ImplementedBy {
		by = append(by, p.Container+"."+p.Name+" "+p.at()+" "+p.Precision)
	}
	if want := []string{"Fixed.Get store/store.go:30:16 search", "Map.Get store/store.go:18:15 search"}; got.Precision != "precise" || !slices.Equal(by, want) {
		t.Errorf("%s: %q, want %q", got.Precision, by, want)
	}
	got = call(t, h, navigate.FindImplementationsTool, pos("store/store.go", 6, 7))
	if got.Precision != "search" || got.Reason != "the file changed since it was indexed" || got.Total != 0 {
		t.Errorf("from the changed file: %s %q %d", got.Precision, got.Reason, got.Total)
	}
}
