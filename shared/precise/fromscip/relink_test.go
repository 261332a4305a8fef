package fromscip_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
)

// TestTypeScriptRelinked: on a small project indexed by the real
// scip-typescript, the store answers as the TypeScript compiler does
// where scip-typescript's symbols differ: `new Point` is a reference to
// the class Point (and still a call of its constructor), and each
// overload of moved has its own parameters and type parameters.
func TestTypeScriptRelinked(t *testing.T) {
	ix := precisetest.TypeScript(t, "testdata/ts", "", "c1").Index
	const file = "src/points.ts"
	tests := []struct {
		name      string
		line, col int
		nth       int      // which symbol at the place (0: the one questions are about)
		defs      []string // the symbol's definitions
		refs      []string // its other occurrences
	}{
		{"new Point is the class", 9, 27, 0, []string{"2:14"}, []string{"9:27", "12:33", "13:33", "14:33", "14:55", "15:14"}},
		{"and a call of its constructor", 9, 27, 1, []string{"4:3"}, []string{"9:27", "15:14"}},
		{"the first overload's type parameter", 12, 47, 0, []string{"12:23"}, []string{"12:43", "12:47"}},
		{"the second overload's type parameter", 13, 59, 0, []string{"13:23"}, []string{"13:43", "13:59"}},
		{"the implementation's type parameter", 14, 43, 0, []string{"14:23"}, []string{"14:43"}},
		{"the second overload's parameter", 13, 46, 0, []string{"13:46"}, nil},
		{"the implementation's parameters", 15, 26, 0, []string{"14:46"}, []string{"15:26"}},
		{"and the other", 15, 20, 0, []string{"14:40"}, []string{"15:20"}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			occs, err := ix.At(ctx, file, tc.line, tc.col)
			if err != nil || len(occs) <= tc.nth {
				t.Fatalf("At(%d:%d) = %v, %v; want %d symbols at least", tc.line, tc.col, occs, err, tc.nth+1)
			}
			sym := occs[tc.nth].Symbol
			info, ok, err := ix.Symbol(ctx, sym)
			if err != nil || !ok {
				t.Fatalf("Symbol(%s) = %v, %v", sym, ok, err)
			}
			refs, _, err := ix.References(ctx, sym, precise.Location{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			var defs, others []string
			for _, d := range info.Definitions {
				defs = append(defs, fmt.Sprintf("%d:%d", d.Line, d.Column))
			}
			for _, r := range refs {
				if r.Roles&precise.Definition == 0 {
					others = append(others, fmt.Sprintf("%d:%d", r.Line, r.Column))
				}
			}
			if !slices.Equal(defs, tc.defs) || !slices.Equal(others, tc.refs) {
				t.Errorf("%s: definitions %v, references %v; want %v and %v", sym, defs, others, tc.defs, tc.refs)
			}
		})
	}
}
