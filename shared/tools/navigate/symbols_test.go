package navigate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// symbolFixture is a repository with symbols in three languages, and
// files find_symbols never reads (ignored, secrets).
var symbolFixture = map[string]string{
	".gitignore":      "gen/\n",
	"net/header.go":   "package net\n\n// ReadHeader reads a header. It blocks.\nfunc ReadHeader() {}\n\n// Header is a header.\ntype Header struct {\n\tKey string\n}\n\nfunc (h *Header) Get() string { return h.Key }\n",
	"net/reader.go":   "package net\n\ntype Reader interface {\n\tReadHeader() error\n}\n",
	"py/header.py":    "class Header:\n    \"\"\"A header.\"\"\"\n    def read_header(self):\n        pass\n",
	"web/header.ts":   "export function readHeader(): string { return ''; }\n",
	"gen/header.go":   "package gen\n\nfunc ReadHeader() {}\n",
	"config/.env":     "READ_HEADER=1\n",
	"docs/header.txt": "ReadHeader\n",
}

type foundSymbol struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Container string `json:"container"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Depth     *int   `json:"depth"`
	Signature string `json:"signature"`
	Doc       string `json:"doc"`
}

type foundSymbols struct {
	Symbols    []foundSymbol `json:"symbols"`
	Total      int           `json:"total"`
	NextCursor *string       `json:"next_cursor"`
	Index      struct {
		State string `json:"state"`
	} `json:"index"`
}

// findAll calls find_symbols with args and pages through every page of
// at most limit symbols, returning "path:container.name" of each (or
// "depth:name" for an outline).
func findAll(t *testing.T, args map[string]any, limit int) ([]string, []foundSymbol) {
	t.Helper()
	h := newHarness(t, repotest.WriteDir(t, symbolFixture))
	var got []string
	var all []foundSymbol
	for cursor := ""; ; {
		a := map[string]any{"limit": limit}
		for k, v := range args {
			a[k] = v
		}
		if cursor != "" {
			a["cursor"] = cursor
		}
		raw, _ := json.Marshal(a)
		var page foundSymbols
		h.OK(t, tenant, navigate.FindSymbolsTool, string(raw), &page)
		if page.Index.State != "ready" {
			t.Errorf("index %q, want ready", page.Index.State)
		}
		for _, s := range page.Symbols {
			all = append(all, s)
			if s.Depth != nil {
				got = append(got, fmt.Sprintf("%d:%s", *s.Depth, s.Name))
			} else {
				got = append(got, fmt.Sprintf("%s:%s.%s", s.Path, s.Container, s.Name))
			}
		}
		if page.NextCursor == nil {
			if page.Total != len(got) {
				t.Errorf("total %d, %d symbols listed", page.Total, len(got))
			}
			return got, all
		}
		cursor = *page.NextCursor
	}
}

func TestFindSymbols(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"exact", map[string]any{"name": "ReadHeader"},
			[]string{"net/header.go:.ReadHeader", "net/reader.go:Reader.ReadHeader"}},
		{"any case, the same case first", map[string]any{"name": "readHeader", "caseSensitive": false},
			[]string{"web/header.ts:.readHeader", "net/header.go:.ReadHeader", "net/reader.go:Reader.ReadHeader"}},
		{"substring, kinds", map[string]any{"name": "header", "match": "substring", "caseSensitive": false, "kinds": []string{"class"}},
			[]string{"net/header.go:.Header", "py/header.py:.Header"}},
		{"a language", map[string]any{"name": "read", "match": "prefix", "caseSensitive": false, "language": "python"},
			[]string{"py/header.py:Header.read_header"}},
		{"a folder and globs", map[string]any{"name": "e", "match": "substring", "path": "net", "patterns": []string{"header.go"}},
			[]string{"net/header.go:.ReadHeader", "net/header.go:.Header", "net/header.go:Header.Key", "net/header.go:Header.Get"}},
		{"a file as path", map[string]any{"name": "Reader", "path": "net/reader.go"}, []string{"net/reader.go:.Reader"}},
		{"outline", map[string]any{"file": "net/header.go"}, []string{"0:ReadHeader", "0:Header", "1:Key", "0:Get"}},
		{"outline, kinds", map[string]any{"file": "py/header.py", "kinds": []string{"method"}}, []string{"1:read_header"}},
		{"an ignored file's outline", map[string]any{"file": "gen/header.go"}, []string{"0:ReadHeader"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 500} {
				if got, _ := findAll(t, tt.args, limit); !slices.Equal(got, tt.want) {
					t.Errorf("limit %d: %v, want %v", limit, got, tt.want)
				}
			}
		})
	}
	// What a symbol says: lines, signature, doc, container.
	_, syms := findAll(t, map[string]any{"name": "Header", "kinds": []string{"class"}, "language": "go"}, 10)
	want := foundSymbol{Name: "Header", Kind: "class", Path: "net/header.go", StartLine: 7, EndLine: 9, Signature: "type Header struct", Doc: "Header is a header."}
	if len(syms) != 1 || syms[0] != want {
		t.Errorf("got %+v, want %+v", syms, want)
	}
}

func TestFindSymbolsRefuses(t *testing.T) {
	h := newHarness(t, repotest.WriteDir(t, symbolFixture))
	tests := []struct{ args, code string }{
		{`{"name":"x","file":"net/header.go"}`, "INVALID_INPUT"},
		{`{"kinds":["class"]}`, "INVALID_INPUT"},
		{`{"file":"net"}`, "INVALID_INPUT"},
		{`{"file":"docs/header.txt"}`, "INVALID_INPUT"},
		{`{"file":"net/missing.go"}`, "RESOURCE_NOT_FOUND"},
		{`{"file":"config/.env"}`, "PATH_NOT_ALLOWED"},
		{`{"name":"x","cursor":"eHl6"}`, "INVALID_INPUT"},
		{`{"file":"net/header.go","cursor":"eHl6"}`, "INVALID_INPUT"},
		{`{"name":"x","patterns":["["]}`, "INVALID_INPUT"},
	}
	for _, tt := range tests {
		if o := h.Call(tenant, navigate.FindSymbolsTool, tt.args); o.OK || string(o.Error.Code) != tt.code {
			t.Errorf("%s: %+v, want %s", tt.args, o, tt.code)
		}
	}
}

// TestFindSymbolsSaysWhatItDoesNotRead: Kotlin and Ruby have symbols; a
// lookup says how many files of code in its scope it has none of (Swift:
// no parser), and why, and does not answer "nothing" as if it had read
// them; an outline of such a file says why it cannot be outlined.
func TestFindSymbolsSaysWhatItDoesNotRead(t *testing.T) {
	if missing := symbols.Missing(); len(missing) > 0 {
		t.Skipf("built without tree-sitter (cgo): missing %v", missing)
	}
	h := newHarness(t, repotest.WriteDir(t, map[string]string{
		"app/Main.kt":    "class Main {\n    fun start() {}\n}\n",
		"lib/main.rb":    "class Main\n  def start; end\nend\n",
		"ios/Main.swift": "class Main {\n    func start() {}\n}\n",
		"ios/View.swift": "struct View {}\n",
		"cmd/main.go":    "package main\n\nfunc main() {}\n",
		"README.md":      "# Main\n",
	}))
	type answer struct {
		Symbols     []foundSymbol `json:"symbols"`
		Unsupported []struct {
			Language string `json:"language"`
			Files    int    `json:"files"`
			Reason   string `json:"reason"`
		} `json:"unsupported"`
	}
	var got answer
	o := h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"start"}`, &got)
	var found []string
	for _, s := range got.Symbols {
		found = append(found, s.Path+":"+s.Container+"."+s.Name)
	}
	if want := []string{"app/Main.kt:Main.start", "lib/main.rb:Main.start"}; !slices.Equal(found, want) {
		t.Errorf("found %v, want %v", found, want)
	}
	if len(got.Unsupported) != 1 || got.Unsupported[0].Language != "swift" || got.Unsupported[0].Files != 2 || got.Unsupported[0].Reason != "no-parser" {
		t.Errorf("unsupported %+v, want 2 swift files, no-parser", got.Unsupported)
	}
	if !strings.Contains(o.Message, "2 files of code here have no symbols: 2 swift (find_symbols has no parser for swift)") {
		t.Errorf("message %q does not say what it did not read", o.Message)
	}

	got = answer{}
	o = h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"Nothing"}`, &got)
	if !strings.HasPrefix(o.Message, `No symbol matches "Nothing" in the files find_symbols reads`) || !strings.Contains(o.Message, "grep_codebase") {
		t.Errorf("message %q answers nothing as if every file were read", o.Message)
	}
	got = answer{}
	h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"start","path":"app"}`, &got)
	if len(got.Unsupported) != 0 {
		t.Errorf("app holds no Swift, yet unsupported is %+v", got.Unsupported)
	}
	e := h.Fail(t, tenant, navigate.FindSymbolsTool, `{"file":"ios/Main.swift"}`, "INVALID_INPUT")
	if !strings.Contains(e.Message, "no parser for swift") {
		t.Errorf("outline of a Swift file: %q does not say why", e.Message)
	}
}

// TestFindSymbolsSharedStart: names declared together share their
// declaration's start (Go's `var a, b`, C's `int a, b;`); paging one name
// at a time lists each exactly once, in order.
func TestFindSymbolsSharedStart(t *testing.T) {
	files := map[string]string{
		"vars.go": "package vars\n\nvar alpha1, alpha2, alpha3, alpha4 int\n\nconst (\n\talpha5, alpha6 = 1, 2\n)\n",
		"vars.c":  "int alpha1, alpha2, alpha3, alpha4;\n",
	}
	h := newHarness(t, repotest.WriteDir(t, files))
	want := []string{"vars.c:alpha1", "vars.c:alpha2", "vars.c:alpha3", "vars.c:alpha4",
		"vars.go:alpha1", "vars.go:alpha2", "vars.go:alpha3", "vars.go:alpha4", "vars.go:alpha5", "vars.go:alpha6"}
	for _, limit := range []int{1, 2, 3, 500} {
		var got []string
		for cursor := ""; ; {
			args := map[string]any{"name": "alpha", "match": "prefix", "limit": limit}
			if cursor != "" {
				args["cursor"] = cursor
			}
			raw, _ := json.Marshal(args)
			var page foundSymbols
			h.OK(t, tenant, navigate.FindSymbolsTool, string(raw), &page)
			for _, s := range page.Symbols {
				got = append(got, s.Path+":"+s.Name)
			}
			if page.NextCursor == nil || len(got) > len(want) {
				break
			}
			cursor = *page.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %v, want %v", limit, got, want)
		}
	}
}

// TestFindSymbolsOnAViewGone: a call that reads a view its source no
// longer serves (a push replaced it) answers from no table, and says to
// call again.
func TestFindSymbolsOnAViewGone(t *testing.T) {
	view, err := repo.NewLocal(repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"}), repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	view.Close()
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(repo.Shared{View: view}, cursor.RandomKey(), nil))
	var got foundSymbols
	o := h.OK(t, tenant, navigate.FindSymbolsTool, `{"name":"A"}`, &got)
	if len(got.Symbols) != 0 || !strings.Contains(o.Message, "call again") {
		t.Errorf("on a view gone: %+v, message %q", got, o.Message)
	}
}
