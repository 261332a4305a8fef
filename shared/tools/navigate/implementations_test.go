package navigate_test

import (
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
