package navigate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"

	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// TestFindReferencesPrecise: the references of one symbol, whichever way
// it is named, every page size, each line with its role and function;
// the declaration only when asked for; a file the view denies never
// shown, though the index was made with it.
func TestFindReferencesPrecise(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	uses := []string{
		"api/api.go:13 reference in Lookup", "api/api.go:21 reference in Both", "api/api.go:22 reference in Both",
		"cmd/app/main.go:16 reference in main",
	}
	withDecl := append([]string{"store/store.go:17 definition in Map.Get"}, uses...)
	slices.Sort(withDecl)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"from its definition", pos("store/store.go", 17, 15), uses},
		{"from a use", pos("cmd/app/main.go", 16, 13), uses},
		{"by symbol", map[string]any{"symbol": gosym("store", "Map#Get().")}, uses},
		{"the declaration too", with(pos("api/api.go", 21, 12), "includeDeclaration", true), withDecl},
		{"only some files", with(pos("api/api.go", 21, 12), "patterns", []string{"cmd/**"}), uses[3:]},
		{"an interface method", pos("store/store.go", 7, 2), []string{"api/api.go:28 reference in Any"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 100} {
				lines, last := allRefs(t, h, tt.args, limit)
				if !slices.Equal(lines, tt.want) || last.TotalLines != len(tt.want) {
					t.Errorf("pages of %d: %q (total %d), want %q", limit, lines, last.TotalLines, tt.want)
				}
				if last.Precision != "precise" || last.IndexedCommit != goCommit || last.Name != "Get" {
					t.Errorf("pages of %d: %q %q %q", limit, last.Precision, last.IndexedCommit, last.Name)
				}
			}
		})
	}
	got := call(t, h, navigate.FindReferencesTool, pos("store/store.go", 17, 15))
	if l := got.Files[0].Lines[0]; l.Text != "\tif v, ok := s.Get(key); ok {" || !slices.Equal(l.Columns, []int{16}) {
		t.Errorf("a line: %+v", l)
	}
}

// allRefs pages through find_references with args, limit lines a page,
// and returns every line (see refLines) and the last page.
func allRefs(t *testing.T, h *tooltest.Harness, args map[string]any, limit int) ([]string, answer) {
	t.Helper()
	var lines []string
	var page answer
	for c, pages := "", 0; pages < 50; pages++ {
		a := with(args, "limit", limit)
		if c != "" {
			a["cursor"] = c
		}
		page = call(t, h, navigate.FindReferencesTool, a)
		if len(page.refLines()) > limit {
			t.Fatalf("a page of %d lines over the limit %d", len(page.refLines()), limit)
		}
		lines = append(lines, page.refLines()...)
		if page.NextCursor == nil {
			return lines, page
		}
		c = *page.NextCursor
	}
	t.Fatal("the pages do not end")
	return nil, answer{}
}

// TestFindReferencesChangedFile: the file changed since indexing is
// searched by name, for that file only, and says so; the other files'
// lines stay precise.
func TestFindReferencesChangedFile(t *testing.T) {
	h := preciseHarness(t, goModule, edited(t))
	for _, limit := range []int{1, 3, 100} {
		lines, last := allRefs(t, h, pos("cmd/app/main.go", 16, 13), limit)
		want := []string{ // api.go a line lower, its g.Get too: found by name
			"api/api.go:14  in Lookup", "api/api.go:22  in Both", "api/api.go:23  in Both", "api/api.go:29  in Any",
			"cmd/app/main.go:16 reference in main",
		}
		if !slices.Equal(lines, want) || last.TotalLines != len(want) || last.Precision != "precise" {
			t.Errorf("pages of %d: %q (total %d, %s), want %q", limit, lines, last.TotalLines, last.Precision, want)
		}
	}
	got := call(t, h, navigate.FindReferencesTool, pos("cmd/app/main.go", 16, 13))
	api, main := got.Files[0], got.Files[1]
	if api.Precision != "search" || api.Reason != "the file changed since it was indexed" || main.Precision != "" {
		t.Errorf("files: %+v", got.Files)
	}
	if !strings.Contains(got.Message, "api/api.go changed since indexing and was searched by name") {
		t.Errorf("message %q", got.Message)
	}
	// From the changed file itself: the answer by name, everywhere.
	got = call(t, h, navigate.FindReferencesTool, pos("api/api.go", 14, 16))
	if got.Precision != "search" || got.Reason != "the file changed since it was indexed" || got.Name != "Get" || got.TotalLines != 5 {
		t.Errorf("from the changed file: %q %q %q %d lines %q", got.Precision, got.Reason, got.Name, got.TotalLines, got.refLines())
	}
}

// TestFindReferencesByName: today's answer, saying it is made by search.
func TestFindReferencesByName(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	got := call(t, h, navigate.FindReferencesTool, map[string]any{"name": "Get", "excludeComments": true})
	if got.Precision != "search" || !strings.Contains(got.Reason, "give a position") || got.Symbol != "" || got.TotalLines != 8 {
		t.Errorf("%q %q %q %d lines: %q", got.Precision, got.Reason, got.Symbol, got.TotalLines, got.refLines())
	}
	if lines := got.refLines(); lines[0] != "api/api.go:13  in Lookup" {
		t.Errorf("the first line %q, want it in Lookup", lines[0])
	}
}

// TestFindSymbolsCarrySymbols: a lookup's hits carry the SCIP symbol a
// precise index has defined at their name, which find_references then
// takes: name, symbol, references in two calls. A hit in a file changed
// since indexing carries none.
func TestFindSymbolsCarrySymbols(t *testing.T) {
	h := preciseHarness(t, goModule, edited(t))
	var found struct {
		Symbols []struct {
			Name      string `json:"name"`
			Container string `json:"container"`
			Path      string `json:"path"`
			Symbol    string `json:"symbol"`
		} `json:"symbols"`
	}
	h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"Get"}`, &found)
	var got []string
	for _, s := range found.Symbols {
		got = append(got, s.Container+" "+s.Symbol)
	}
	want := []string{"Getter " + gosym("store", "Getter#Get."), "Map " + gosym("store", "Map#Get()."), "Fixed " + gosym("store", "Fixed#Get().")}
	if !slices.Equal(got, want) {
		t.Errorf("hits %q, want %q", got, want)
	}
	refs := call(t, h, navigate.FindReferencesTool, map[string]any{"symbol": found.Symbols[1].Symbol})
	if refs.Precision != "precise" || refs.TotalLines != 5 {
		t.Errorf("references of %s: %s, %d lines", found.Symbols[1].Symbol, refs.Precision, refs.TotalLines)
	}
	found.Symbols = nil
	h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"Lookup"}`, &found)
	if found.Symbols[0].Symbol != "" {
		t.Errorf("a hit in the changed file carries %q", found.Symbols[0].Symbol)
	}
	found.Symbols = nil
	h.OK(t, tenant, navigate.FindSymbolsTool, `{"file":"store/store.go","kinds":["interface"]}`, &found)
	if found.Symbols[0].Symbol != gosym("store", "Getter#") {
		t.Errorf("an outline's symbol: %+v", found.Symbols)
	}
}

// TestFindReferencesTypeScript: scip-typescript's references, with the
// function of each line.
func TestFindReferencesTypeScript(t *testing.T) {
	h := preciseHarness(t, tsProject, nil)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"a class", pos("src/circle.ts", 4, 15), []string{"src/circle.ts:13 reference in -", "src/main.ts:2 reference in -", "src/main.ts:14 reference in report"}},
		{"an interface method", pos("src/shape.ts", 4, 3), []string{"src/main.ts:8 reference in totalArea"}},
		{"a method, after a non-ASCII literal", with(pos("src/circle.ts", 7, 3), "includeDeclaration", true), []string{
			"src/circle.ts:7 definition in Circle.area", "src/circle.ts:15 reference in Ring.area", "src/main.ts:15 reference in report"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, last := allRefs(t, h, tt.args, 2)
			if !slices.Equal(lines, tt.want) || last.Precision != "precise" || last.IndexedCommit != tsCommit {
				t.Errorf("%q (%s), want %q", lines, last.Precision, tt.want)
			}
		})
	}
	got := call(t, h, navigate.FindReferencesTool, pos("src/circle.ts", 7, 3))
	if l := got.Files[1].Lines[0]; !slices.Equal(l.Columns, []int{19}) || !strings.Contains(l.Text, "'é' + c.area()") {
		t.Errorf("the byte column after 'é': %+v", l)
	}
}

// TestLocalSymbols: a local symbol (one function's variable) as answers
// give it, with its file: its references; when its file changed since
// indexing, the answer is made by search, by its name.
func TestLocalSymbols(t *testing.T) {
	local := map[string]any{"symbol": "local 2 api/api.go"} // v in Lookup
	for _, changes := range []map[string]string{nil, {"cmd/app/main.go": "package main\n\nfunc main() { v := 1; _ = v }\n"}} {
		got := call(t, preciseHarness(t, goModule, changes), navigate.FindReferencesTool, local)
		if lines := got.refLines(); got.Precision != "precise" || got.Name != "v" || !slices.Equal(lines, []string{"api/api.go:14 reference in Lookup"}) {
			t.Errorf("another file changed %v: %s %q: %q", changes != nil, got.Precision, got.Name, lines)
		}
	}
	got := call(t, preciseHarness(t, goModule, edited(t)), navigate.FindReferencesTool, local)
	if got.Precision != "search" || got.Reason != "the file changed since it was indexed" || got.Name != "v" {
		t.Errorf("in the changed file: %s %q %q", got.Precision, got.Reason, got.Name)
	}
}

// TestFileAddedSinceIndexing: a file the index does not hold is not
// searched in a precise answer (its indexer may have left it out on
// purpose); asked about directly, it is answered by search.
func TestFileAddedSinceIndexing(t *testing.T) {
	added := "package api\n\nimport \"example.com/nav/store\"\n\n// Again gets key twice.\nfunc Again(s *store.Map, key string) {\n\ts.Get(key)\n}\n"
	h := preciseHarness(t, goModule, map[string]string{"api/again.go": added})
	got := call(t, h, navigate.FindReferencesTool, pos("store/store.go", 17, 15))
	if got.Precision != "precise" || got.TotalLines != 4 || strings.Contains(got.Message, "again.go") {
		t.Errorf("%s, %d lines: %q", got.Precision, got.TotalLines, got.refLines())
	}
	got = call(t, h, navigate.FindReferencesTool, pos("api/again.go", 7, 4))
	if got.Precision != "search" || !strings.Contains(got.Reason, "has no document for this file") || got.TotalLines != 6 {
		t.Errorf("from the added file: %s %q, %d lines", got.Precision, got.Reason, got.TotalLines)
	}
}

// TestFindSymbolsWithoutPreciseIndex: a precise index that cannot be read
// leaves find_symbols working, without symbols, saying so; the position
// tools report the failure.
func TestFindSymbolsWithoutPreciseIndex(t *testing.T) {
	broken := func(context.Context, reposcope.Ref, repo.View, []string) (*precise.Set, precise.State, error) {
		return nil, precise.State{}, errors.New("the bucket is down")
	}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(repotest.Local(t, goModule), cursor.RandomKey(), broken))
	got := call(t, h, navigate.FindSymbolsTool, map[string]any{"name": "Get"})
	if got.Total != 3 || !strings.Contains(got.Message, "without SCIP symbols") {
		t.Errorf("%d symbols: %q", got.Total, got.Message)
	}
	fails(t, h, navigate.FindDefinitionTool, pos("api/api.go", 13, 16), toolerr.Internal)
}
