package navigate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// TestFindDefinitionGo: what is at positions of the Go fixture is defined
// where go/types says, with its signature, doc, line range and container;
// a standard-library symbol (not indexed) without a place.
func TestFindDefinitionGo(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	mapGet := place{Symbol: gosym("store", "Map#Get()."), Name: "Get", Kind: "method", Path: "store/store.go", Line: 17, Column: 15,
		StartLine: 17, EndLine: 20, Container: "Map", Signature: "func (*Map).Get(key string) (string, bool)", Doc: "Get returns the value of key in s."}
	tests := []struct {
		name string
		args map[string]any
		want []place
	}{
		{"a method call", pos("api/api.go", 13, 16), []place{mapGet}},
		{"inside the name", pos("api/api.go", 13, 18), []place{mapGet}},
		{"just after the name", pos("api/api.go", 13, 19), []place{mapGet}},
		{"the definition itself", pos("store/store.go", 17, 16), []place{mapGet}},
		{"by symbol", map[string]any{"symbol": gosym("store", "Map#Get().")}, []place{mapGet}},
		{"through the interface", pos("api/api.go", 28, 12), []place{{Symbol: gosym("store", "Getter#Get."), Name: "Get", Kind: "methodSpecification",
			Path: "store/store.go", Line: 7, Column: 2, StartLine: 7, EndLine: 7, Container: "Getter",
			Signature: "func (Getter).Get(key string) (string, bool)", Doc: "Get returns the value of key."}}},
		{"across packages", pos("cmd/app/main.go", 14, 20), []place{{Symbol: gosym("api", "Lookup()."), Name: "Lookup", Kind: "function",
			Path: "api/api.go", Line: 12, Column: 6, StartLine: 12, EndLine: 17, Signature: "func Lookup(s *Map, key string) string",
			Doc: `Lookup answers the value of key in s, or "none".`}}},
		{"a local", pos("api/api.go", 14, 10), []place{{Symbol: "local 2 api/api.go", Name: "v", Kind: "variable", Path: "api/api.go",
			Line: 13, Column: 5, StartLine: 13, EndLine: 13, Container: "Lookup", Signature: "var v string"}}},
		{"the standard library", pos("api/api.go", 29, 14), []place{{Symbol: "scip-go gomod github.com/golang/go/src go1.22 fmt/Sprint().",
			Name: "Sprint", External: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, h, navigate.FindDefinitionTool, tt.args)
			if got.Precision != "precise" || got.IndexedCommit != goCommit || got.Reason != "" {
				t.Errorf("precision %q, commit %q, reason %q; want precise at %s", got.Precision, got.IndexedCommit, got.Reason, goCommit)
			}
			if !reflect.DeepEqual(got.Definitions, tt.want) || got.Total != len(tt.want) {
				t.Errorf("definitions (total %d):\n%+v\nwant\n%+v", got.Total, got.Definitions, tt.want)
			}
			if got.Symbol != tt.want[0].Symbol {
				t.Errorf("symbol %q, want %q", got.Symbol, tt.want[0].Symbol)
			}
		})
	}
}

// TestFindDefinitionChangedFile: a file changed since it was indexed is
// answered by search (the definitions of the name the symbol table
// finds); a definition in it, reached from an unchanged file, is found
// there by name, and every other answer stays precise.
func TestFindDefinitionChangedFile(t *testing.T) {
	h := preciseHarness(t, goModule, edited(t))
	got := call(t, h, navigate.FindDefinitionTool, pos("api/api.go", 14, 16)) // s.Get, a line lower now
	if got.Precision != "search" || got.Reason != "the file changed since it was indexed" || got.Symbol != "" {
		t.Errorf("in the changed file: %q, %q, %q; want search because it changed", got.Precision, got.Reason, got.Symbol)
	}
	var found []string
	for _, d := range got.Definitions {
		found = append(found, d.Container+"."+d.Name+" "+d.at())
	}
	if want := []string{"Getter.Get store/store.go:7:2", "Map.Get store/store.go:17:15", "Fixed.Get store/store.go:29:16"}; !slices.Equal(found, want) {
		t.Errorf("by name: %q, want %q", found, want)
	}

	got = call(t, h, navigate.FindDefinitionTool, pos("cmd/app/main.go", 14, 20)) // api.Lookup
	if got.Precision != "precise" || len(got.Definitions) != 1 {
		t.Fatalf("from an unchanged file: %+v", got)
	}
	if d := got.Definitions[0]; d.at() != "api/api.go:13:6" || d.Precision != "search" || d.Reason == "" || d.StartLine != 13 || d.EndLine != 18 {
		t.Errorf("the definition in the changed file: %+v; want found by name at its new line 13", d)
	}
	if !strings.Contains(got.Message, "api/api.go changed since it was indexed") {
		t.Errorf("message %q does not say the definition's file changed", got.Message)
	}
}

// TestFindDefinitionTypeScript: scip-typescript's index of the
// TypeScript fixture; columns are bytes, after a non-ASCII literal too;
// `new Circle` is the class and its constructor, as the language service
// answers.
func TestFindDefinitionTypeScript(t *testing.T) {
	h := preciseHarness(t, tsProject, nil)
	tests := []struct {
		name string
		args map[string]any
		want []string // each definition's symbol path:line:column container signature
	}{
		{"an interface method", pos("src/main.ts", 8, 15), []string{tssym("shape.ts", "Shape#area().") + " src/shape.ts:4:3 Shape (method) area() => number"}},
		{"after a non-ASCII literal", pos("src/main.ts", 15, 20), []string{tssym("circle.ts", "Circle#area().") + " src/circle.ts:7:3 Circle (method) area(): number"}},
		{"a function", pos("src/main.ts", 15, 28), []string{tssym("main.ts", "totalArea().") + " src/main.ts:5:17  function totalArea(shapes: Shape[]): number"}},
		{"a constructor", pos("src/main.ts", 14, 17), []string{
			tssym("circle.ts", "Circle#") + " src/circle.ts:4:14  class Circle",
			tssym("circle.ts", "Circle#`<constructor>`().") + " src/circle.ts:5:3 Circle constructor(r: number): Circle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := call(t, h, navigate.FindDefinitionTool, tt.args)
			if got.Precision != "precise" || got.IndexedCommit != tsCommit {
				t.Fatalf("%+v", got)
			}
			var defs []string
			for _, d := range got.Definitions {
				defs = append(defs, d.Symbol+" "+d.at()+" "+d.Container+" "+d.Signature)
			}
			if !slices.Equal(defs, tt.want) {
				t.Errorf("got  %q\nwant %q", defs, tt.want)
			}
		})
	}
	got := call(t, h, navigate.FindDefinitionTool, pos("src/main.ts", 8, 15))
	if got.Definitions[0].Doc != "Its area." {
		t.Errorf("the doc comment: %q", got.Definitions[0].Doc)
	}
}
