package navigate_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// pagedCall is a call of a navigation tool with more than one page.
type pagedCall struct {
	name, tool string
	args       map[string]any
	// other is a call to the same tool with other arguments.
	other map[string]any
}

var pagedCalls = []pagedCall{
	{"list_files", navigate.ListFilesTool, map[string]any{"path": ""}, map[string]any{"path": "", "depth": 2}},
	{"find_symbols lookup", navigate.FindSymbolsTool, map[string]any{"name": "Read", "match": "prefix"},
		map[string]any{"name": "Read", "match": "prefix", "kinds": []string{"function"}}},
	{"find_symbols outline", navigate.FindSymbolsTool, map[string]any{"file": "net/header.go"},
		map[string]any{"file": "net/header.go", "kinds": []string{"function", "method", "field"}}},
	{"find_references", navigate.FindReferencesTool, map[string]any{"name": "Header"}, map[string]any{"name": "Header", "path": "net"}},
	{"list_repos", navigate.ListReposTool, map[string]any{}, nil},
}

// withCursor returns args with limit 1 and the cursor c (none when ""),
// as JSON.
func withCursor(args map[string]any, c string) string {
	a := maps.Clone(args)
	a["limit"] = 1
	if c != "" {
		a["cursor"] = c
	}
	raw, _ := json.Marshal(a)
	return string(raw)
}

// firstCursor returns the cursor of the first page, of one entry, of a
// call by who.
func firstCursor(t *testing.T, h *tooltest.Harness, who, tool string, args map[string]any) string {
	t.Helper()
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	h.OK(t, who, tool, withCursor(args, ""), &page)
	if page.NextCursor == nil {
		t.Fatalf("%s %v: one page only; the test needs two", tool, args)
	}
	return *page.NextCursor
}

// unkeyed is a cursor as the tools made them before they were keyed: the
// base64url of "kind:position", which anyone could make.
func unkeyed(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestCursorsNotIssued: a navigation tool takes only the cursors it
// issued for the call, whatever their limit; anything else is
// INVALID_INPUT naming cursor, never INTERNAL_ERROR and never a page: a
// cursor made up (in the form the tools used to make: a huge offset, or
// one so large that offset + limit overflows), another tool's, another
// call's (other arguments, or another tenant).
func TestCursorsNotIssued(t *testing.T) {
	view := func(files map[string]string) repo.View { return repotest.Local(t, repotest.WriteDir(t, files)).View }
	files := maps.Clone(symbolFixture)
	files["net/client.go"] = "package net\n\nfunc ReadResponse(h Header) {}\n\nfunc ReadRequest(h *Header) {}\n"
	src := repo.Shared{View: view(files), Name: "main", Others: []repo.Named{{Name: "zeta", View: view(map[string]string{"z.go": "package z\n"})}}}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), nil))

	issued := map[string]string{}
	for _, c := range pagedCalls {
		issued[c.name] = firstCursor(t, h, tenant, c.tool, c.args)
		var page struct {
			NextCursor *string `json:"next_cursor"`
		}
		h.OK(t, tenant, c.tool, withCursor(c.args, issued[c.name]), &page) // its own cursor pages on
		a := maps.Clone(c.args)
		a["limit"], a["cursor"] = 100, issued[c.name]
		raw, _ := json.Marshal(a)
		h.OK(t, tenant, c.tool, string(raw), nil) // with another limit too
	}
	for _, c := range pagedCalls {
		refused := map[string]string{
			"made up: MaxInt":        unkeyed(c.tool + ":9223372036854775807"),
			"made up: 10^9":          unkeyed(c.tool + ":1000000000"),
			"made up: 1":             unkeyed(c.tool + ":1"),
			"made up: a path":        unkeyed(c.tool + ":net/header.go"),
			"made up: a lookup's":    unkeyed(c.tool + ":0 0 net/header.go"),
			"another tenant's":       firstCursor(t, h, "other-tenant", c.tool, c.args),
			"the cursor, edited":     issued[c.name][:len(issued[c.name])-2] + "AA",
			"another tool's (files)": issued["list_files"],
			"another tool's (refs)":  issued["find_references"],
		}
		if c.other != nil {
			refused["another call's"] = firstCursor(t, h, tenant, c.tool, c.other)
		}
		for what, cur := range refused {
			if cur == issued[c.name] {
				continue // its own
			}
			o := h.Call(tenant, c.tool, withCursor(c.args, cur))
			if o.OK || o.Error.Code != toolerr.InvalidInput || !strings.HasPrefix(o.Error.Message, "cursor: ") {
				t.Errorf("%s, %s: %s %+v; want INVALID_INPUT naming cursor", c.name, what, o.Result, o.Error)
			}
		}
	}
}

// TestCursorsTiedToTheRepository: a cursor is tied to the repository the
// call read, not to its repo argument as typed: a caller limited to
// another repository, whose default is that one, cannot page on with it
// (repo left out for both); the same repository named otherwise (by name,
// or "default") pages on.
func TestCursorsTiedToTheRepository(t *testing.T) {
	files := maps.Clone(symbolFixture)
	files["net/client.go"] = "package net\n\nfunc ReadResponse(h Header) {}\n\nfunc ReadRequest(h *Header) {}\n"
	view := func() repo.View { return repotest.Local(t, repotest.WriteDir(t, files)).View }
	src := repo.Shared{View: view(), Name: "main", Others: []repo.Named{{Name: "zeta", View: view()}}}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), nil))
	ctx := context.Background()
	for _, c := range pagedCalls {
		if c.tool == navigate.ListReposTool {
			continue // a listing of repositories, not of one
		}
		issued := firstCursor(t, h, tenant, c.tool, c.args)
		for _, as := range []struct {
			who   string
			repos []string
			repo  string
			ok    bool
		}{
			{"a caller limited to zeta", []string{"zeta"}, "", false},
			{"a caller naming zeta", nil, "zeta", false},
			{"a caller naming main", nil, "main", true},
			{"a caller naming the default", nil, "default", true},
			{"a caller limited to main", []string{"main"}, "", true},
		} {
			args := maps.Clone(c.args)
			if as.repo != "" {
				args["repo"] = as.repo
			}
			o := h.CallLimited(ctx, tenant, as.repos, c.tool, withCursor(args, issued))
			if refused := !o.OK && o.Error.Code == toolerr.InvalidInput && strings.HasPrefix(o.Error.Message, "cursor: "); o.OK != as.ok || !as.ok && !refused {
				t.Errorf("%s, the cursor of main given by %s: %s %+v; want ok %v (else INVALID_INPUT naming cursor)", c.name, as.who, o.Result, o.Error, as.ok)
			}
		}
	}
}

// TestCursorsOfLongPaths: paths from the walk have no length of their
// own; those longer than the file tools take (1,024 bytes: read_file
// refuses them) are left out, so every cursor, which carries a path,
// stays within the contracts' 2,048 characters: list_files, find_symbols
// and find_references page one entry at a time through a file whose path
// is 1,024 bytes long, and never show one of 1,600.
func TestCursorsOfLongPaths(t *testing.T) {
	folders := strings.Repeat(strings.Repeat("d", 200)+"/", 5)
	longest := folders + strings.Repeat("f", pathpolicy.DefaultMaxPathLen-len(folders)-len(".go")) + ".go"
	over := folders + strings.Repeat(strings.Repeat("o", 200)+"/", 3) + "over.go"
	code := "package d\n\nfunc Long() {}\n\nvar x = Long\n"
	h := newHarness(t, repotest.WriteDir(t, map[string]string{"a.go": code, longest: code, over: code, "z.go": code}))
	for _, c := range []struct{ tool, args string }{
		{navigate.ListFilesTool, `{"patterns":["*.go"],"limit":1`},
		{navigate.FindSymbolsTool, `{"name":"Long","limit":1`},
		{navigate.FindReferencesTool, `{"name":"Long","limit":1`},
	} {
		var shown []string
		for cur := ""; ; {
			args := c.args + "}"
			if cur != "" {
				args = c.args + `,"cursor":"` + cur + `"}`
			}
			var page struct {
				Entries    []struct{ Path string } `json:"entries"`
				Symbols    []struct{ Path string } `json:"symbols"`
				Files      []struct{ Path string } `json:"files"`
				NextCursor *string                 `json:"next_cursor"`
			}
			h.OK(t, tenant, c.tool, args, &page)
			for _, e := range slices.Concat(page.Entries, page.Symbols, page.Files) {
				shown = append(shown, e.Path)
			}
			if page.NextCursor == nil {
				break
			}
			cur = *page.NextCursor
		}
		if slices.Contains(shown, over) || !slices.Contains(shown, longest) || !slices.Contains(shown, "z.go") {
			t.Errorf("%s shows %d paths (the longest %v, the one over %v, z.go %v); want every one but the one over the limit",
				c.tool, len(shown), slices.Contains(shown, longest), slices.Contains(shown, over), slices.Contains(shown, "z.go"))
		}
	}
}

// TestReferencesResume: a page of find_references resumes after the last
// line of the page before (its file and line), so what changes in the
// files before it neither repeats nor skips a line; totalLines is then the
// lines the pages before showed and those counted from the page on.
func TestReferencesResume(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n\nvar x = Serve\n",
		"b.go": "package a\n\nfunc Serve() {}\n\nvar y = Serve\n\nvar z = Serve\n",
	})
	src := repotest.Local(t, dir)
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), nil))
	var first, second refs
	h.OK(t, tenant, navigate.FindReferencesTool, `{"name":"Serve","limit":2}`, &first)
	if first.TotalLines != 4 || first.NextCursor == nil {
		t.Fatalf("first page: %+v", first)
	}

	// A line referring to Serve appears before the page's end.
	v := src.View.Version()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nvar w = Serve\n\nvar x = Serve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-src.View.Changed(v):
	case <-time.After(time.Minute): // a bound, not a measure
		t.Fatal("the view never saw the change")
	}
	h.OK(t, tenant, navigate.FindReferencesTool, `{"name":"Serve","limit":2,"cursor":"`+*first.NextCursor+`"}`, &second)
	var got []string
	for _, f := range second.Files {
		for _, l := range f.Lines {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, l.Line))
		}
	}
	if strings.Join(got, " ") != "b.go:5 b.go:7" || second.TotalLines != 4 || second.NextCursor != nil {
		t.Errorf("second page %v, total %d, next %v; want b.go:5 b.go:7 of 4, the last", got, second.TotalLines, second.NextCursor)
	}
}
