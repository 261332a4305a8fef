package navigate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// TestFindCallers: one level of the call hierarchy both ways, from a
// definition, a call or a symbol, every page size, in Go and TypeScript.
func TestFindCallers(t *testing.T) {
	goH, tsH := preciseHarness(t, goModule, nil), preciseHarness(t, tsProject, nil)
	tests := []struct {
		name string
		h    *tooltest.Harness
		args map[string]any
		want []string // function path:line (symbol's last name) calls
	}{
		{"a method called from several functions", goH, pos("store/store.go", 17, 15), []string{
			"Lookup api/api.go:12 (Lookup) [13]", "Both api/api.go:20 (Both) [21 22]", "main cmd/app/main.go:11 (main) [16]"}},
		{"from a call", goH, pos("api/api.go", 22, 13), []string{
			"Lookup api/api.go:12 (Lookup) [13]", "Both api/api.go:20 (Both) [21 22]", "main cmd/app/main.go:11 (main) [16]"}},
		{"across packages", goH, map[string]any{"symbol": gosym("api", "Both().")}, []string{"main cmd/app/main.go:11 (main) [14]"}},
		{"what a function calls", goH, with(pos("api/api.go", 20, 6), "direction", "outgoing"), []string{
			"Get store/store.go:17 (Get) [21 22]", "Join :0 (Join) [23]"}},
		{"what main calls", goH, with(pos("cmd/app/main.go", 11, 6), "direction", "outgoing"), []string{
			"New store/store.go:14 (New) [12]", "Put store/store.go:23 (Put) [13]", "Println :0 (Println) [14 15 17]",
			"Lookup api/api.go:12 (Lookup) [14]", "Both api/api.go:20 (Both) [14]", "Any api/api.go:27 (Any) [15]",
			"Get store/store.go:17 (Get) [16]"}},
		{"a TypeScript function", tsH, pos("src/main.ts", 5, 20), []string{"report src/main.ts:13 (report) [15]"}},
		{"what it calls", tsH, with(pos("src/main.ts", 13, 17), "direction", "outgoing"), []string{
			"<constructor> src/circle.ts:5 (<constructor>) [14]", "area src/circle.ts:7 (area) [15]", "totalArea src/main.ts:5 (totalArea) [15]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 50} {
				got, last := allCallers(t, tt.h, tt.args, limit)
				if !slices.Equal(got, tt.want) || last.Total != len(tt.want) || last.Precision != "precise" {
					t.Errorf("pages of %d: %q (total %d, %s), want %q", limit, got, last.Total, last.Precision, tt.want)
				}
			}
		})
	}
}

// allCallers pages through find_callers and describes each function.
func allCallers(t *testing.T, h *tooltest.Harness, args map[string]any, limit int) ([]string, answer) {
	t.Helper()
	var out []string
	var last answer
	for c, pages := "", 0; pages < 20; pages++ {
		a := with(args, "limit", limit)
		if c != "" {
			a["cursor"] = c
		}
		last = call(t, h, navigate.FindCallersTool, a)
		list := append(last.Callers, last.Callees...)
		if len(list) > limit {
			t.Fatalf("a page of %d over the limit %d", len(list), limit)
		}
		for _, f := range list {
			var lines []string
			for _, c := range f.Calls {
				lines = append(lines, fmt.Sprint(c.Line))
			}
			name := f.Symbol
			if i := strings.LastIndexAny(strings.TrimSuffix(strings.TrimSuffix(name, "()."), "."), "/#"); i >= 0 {
				name = strings.Trim(strings.TrimSuffix(name[i+1:], "()."), "`")
			}
			out = append(out, fmt.Sprintf("%s %s:%d (%s) [%s]", f.Name, f.Path, f.StartLine, name, strings.Join(lines, " ")))
		}
		if last.NextCursor == nil {
			return out, last
		}
		c = *last.NextCursor
	}
	t.Fatal("the pages do not end")
	return nil, answer{}
}

// TestFindCallersChangedFile: the callers in the file changed since
// indexing are found by name (g.Get too), the others precisely.
func TestFindCallersChangedFile(t *testing.T) {
	h := preciseHarness(t, goModule, edited(t))
	got, last := allCallers(t, h, pos("cmd/app/main.go", 16, 13), 2)
	want := []string{"Lookup api/api.go:13 () [14]", "Both api/api.go:21 () [22 23]", "Any api/api.go:28 () [29]", "main cmd/app/main.go:11 (main) [16]"}
	if !slices.Equal(got, want) || last.Precision != "precise" {
		t.Errorf("%q (%s), want %q", got, last.Precision, want)
	}
	out := call(t, h, navigate.FindCallersTool, with(pos("api/api.go", 21, 6), "direction", "outgoing"))
	var callees []string
	for _, c := range out.Callees {
		callees = append(callees, c.Name)
	}
	if out.Precision != "search" || !slices.Equal(callees, []string{"Get", "Join"}) {
		t.Errorf("outgoing in the changed file: %s %q, want search: Get, Join", out.Precision, callees)
	}
}
