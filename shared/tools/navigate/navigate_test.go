package navigate_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

const tenant = "acme"

// fixture is a repository with files list_files shows and files it never
// shows (ignored, hidden, binary, secrets).
var fixture = map[string]string{
	".gitignore":                 "gen/\n*.log\n",
	"README.md":                  "# Fixture\n",
	"Dockerfile":                 "FROM scratch\n",
	"go.mod":                     "module example.com/f\n",
	"cmd/app/main.go":            "package main\n\nfunc main() {}\n",
	"cmd/app/main_test.go":       "package main\n",
	"internal/db/db.go":          "package db\n",
	"internal/db/db_test.go":     "package db\n",
	"internal/db/testdata/a.sql": "select 1;\n",
	"internal/http/server.go":    "package http\n\n// Serve serves.\nfunc Serve() {}\n",
	"web/src/app.ts":             "export const a = 1;\n",
	"web/src/app.test.ts":        "test('a', () => {});\n",
	"web/src/util/fmt.ts":        "export const f = 2;\n",
	"gen/out.go":                 "package gen\n",       // ignored
	"server.log":                 "log line\n",          // ignored
	".hidden/x.go":               "package hidden\n",    // hidden
	"config/.env":                "SECRET=1\n",          // denied
	"keys/deploy.pem":            "PEM\n",               // denied
	"assets/logo.png":            "\x89PNG\x00\x01\x02", // binary
}

type entry struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Size     *int   `json:"size"`
	Language string `json:"language"`
	Lines    *int   `json:"lines"`
	Files    *int   `json:"files"`
}

type listing struct {
	Path       string  `json:"path"`
	Entries    []entry `json:"entries"`
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
}

func newHarness(t *testing.T, dir string) *tooltest.Harness {
	t.Helper()
	return tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(repotest.Local(t, dir), cursor.RandomKey(), nil))
}

// list calls list_files with args and pages through every page of at most
// limit entries, returning the paths and the last page.
func list(t *testing.T, h *tooltest.Harness, args map[string]any, limit int) ([]string, listing) {
	t.Helper()
	var paths []string
	var page listing
	for cursor := ""; ; {
		a := map[string]any{"limit": limit}
		for k, v := range args {
			a[k] = v
		}
		if cursor != "" {
			a["cursor"] = cursor
		}
		raw, _ := json.Marshal(a)
		page = listing{}
		h.OK(t, tenant, navigate.ListFilesTool, string(raw), &page)
		for _, e := range page.Entries {
			paths = append(paths, e.Path+map[string]string{"folder": "/"}[e.Type])
		}
		if page.NextCursor == nil {
			return paths, page
		}
		cursor = *page.NextCursor
	}
}

func TestListFolders(t *testing.T) {
	h := newHarness(t, repotest.WriteDir(t, fixture))
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"the root", map[string]any{}, []string{"Dockerfile", "README.md", "cmd/", "go.mod", "internal/", "web/"}},
		{"two levels", map[string]any{"path": "internal", "depth": 2}, []string{"internal/db/", "internal/db/db.go", "internal/db/db_test.go", "internal/db/testdata/", "internal/http/", "internal/http/server.go"}},
		{"a folder, excluding", map[string]any{"path": "web", "depth": 5, "exclude": []string{"*.test.ts", "util"}}, []string{"web/src/", "web/src/app.ts"}},
		{"the root as '.'", map[string]any{"path": ".", "exclude": []string{"web", "cmd", "internal"}}, []string{"Dockerfile", "README.md", "go.mod"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{1, 2, 1000} {
				got, _ := list(t, h, tt.args, limit)
				if !slices.Equal(got, tt.want) {
					t.Errorf("limit %d: %v, want %v", limit, got, tt.want)
				}
			}
		})
	}
	// What entries say: files their size, language and lines; folders the
	// files below them at any depth.
	_, page := list(t, h, map[string]any{"path": "internal"}, 1000)
	db, http := page.Entries[0], page.Entries[1]
	if db.Path != "internal/db" || db.Files == nil || *db.Files != 3 || db.Size != nil {
		t.Errorf("folder entry %+v, want internal/db with 3 files", db)
	}
	_, page = list(t, h, map[string]any{"path": http.Path}, 1000)
	if f := page.Entries[0]; f.Type != "file" || *f.Size != len(fixture["internal/http/server.go"]) || *f.Lines != 4 || f.Language != "go" {
		t.Errorf("file entry %+v", f)
	}
}

// TestGlobsAsGit: the files list_files finds by globs are those `git
// ls-files` lists for the same patterns (as :(glob) pathspecs), less what
// list_files never shows.
func TestGlobsAsGit(t *testing.T) {
	dir := repotest.WriteDir(t, fixture)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	never := map[string]bool{".hidden/x.go": true, "config/.env": true, "keys/deploy.pem": true, "assets/logo.png": true, ".gitignore": true}
	h := newHarness(t, dir)
	tests := []struct {
		patterns []string
		git      []string // the same, as git pathspecs
	}{
		{[]string{"*.go"}, []string{":(glob)**/*.go"}},
		{[]string{"*_test.go", "*.test.ts"}, []string{":(glob)**/*_test.go", ":(glob)**/*.test.ts"}},
		{[]string{"web/**/*.ts"}, []string{":(glob)web/**/*.ts"}},
		{[]string{"Dockerfile"}, []string{":(glob)**/Dockerfile"}},
		{[]string{"internal/*/*.go"}, []string{":(glob)internal/*/*.go"}},
		{[]string{"*.{md,mod}"}, []string{":(glob)**/*.md", ":(glob)**/*.mod"}},
	}
	for _, tt := range tests {
		out, err := exec.Command("git", append([]string{"-C", dir, "ls-files", "--"}, tt.git...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range strings.Fields(string(out)) {
			if !never[p] {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if len(want) == 0 {
			t.Errorf("git ls-files lists nothing for %v: the case tests nothing", tt.git)
		}
		got, last := list(t, h, map[string]any{"patterns": tt.patterns}, 2)
		if !slices.Equal(got, want) || last.Total != len(want) {
			t.Errorf("%v: %v (total %d), git ls-files %v", tt.patterns, got, last.Total, want)
		}
	}
}

// TestNeverShown: nothing the view hides is listed, at any depth.
func TestNeverShown(t *testing.T) {
	h := newHarness(t, repotest.WriteDir(t, fixture))
	got, _ := list(t, h, map[string]any{"patterns": []string{"**"}}, 1000)
	for _, p := range got {
		for _, hidden := range []string{"gen/", ".log", ".hidden", ".env", ".pem", ".png"} {
			if strings.Contains(p, hidden) {
				t.Errorf("%s is listed", p)
			}
		}
	}
	if len(got) != 12 {
		t.Errorf("%d files: %v", len(got), got)
	}
}

type refs struct {
	Files []struct {
		Path  string `json:"path"`
		Lines []struct {
			Line    int    `json:"line"`
			Columns []int  `json:"columns"`
			Text    string `json:"text"`
		} `json:"lines"`
	} `json:"files"`
	TotalLines int     `json:"totalLines"`
	NextCursor *string `json:"next_cursor"`
	Incomplete bool    `json:"incomplete"`
}

// references pages through every page of find_references with args and
// returns "path:line:col,col" per line, and the total of the first page.
func references(t *testing.T, h *tooltest.Harness, args map[string]any) ([]string, int) {
	t.Helper()
	var got []string
	total := -1
	for cursor := ""; ; {
		if cursor != "" {
			args["cursor"] = cursor
		}
		raw, _ := json.Marshal(args)
		var page refs
		h.OK(t, tenant, navigate.FindReferencesTool, string(raw), &page)
		if total < 0 {
			total = page.TotalLines
		}
		for _, f := range page.Files {
			for _, l := range f.Lines {
				got = append(got, fmt.Sprintf("%s:%d:%s", f.Path, l.Line, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(l.Columns)), ","), "[]")))
			}
		}
		if page.NextCursor == nil {
			return got, total
		}
		cursor = *page.NextCursor
	}
}

// TestReferencesAsRipgrep: the lines and columns find_references pages
// through are those of `rg -w -s --column` over real code.
func TestReferencesAsRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Fatal("ripgrep (rg) is needed: apt-get install ripgrep (make test installs it)")
	}
	dir := repotest.GoPackages(t, "net/textproto", "strings", "container/list")
	h := newHarness(t, dir)
	for _, name := range []string{"ReadMIMEHeader", "err", "Reader", "len", "Element", "x"} {
		out, err := exec.Command("rg", "-w", "-s", "--column", "--no-heading", "-n", "--sort", "path", "-o", name, dir).Output()
		if err != nil && len(out) > 0 {
			t.Fatal(err)
		}
		// rg -o prints one line per occurrence: path:line:col:match.
		byLine := map[string][]string{}
		var order []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l == "" {
				continue
			}
			parts := strings.SplitN(strings.TrimPrefix(l, dir+"/"), ":", 4)
			key := parts[0] + ":" + parts[1]
			if byLine[key] == nil {
				order = append(order, key)
			}
			byLine[key] = append(byLine[key], parts[2])
		}
		var want []string
		for _, key := range order {
			want = append(want, key+":"+strings.Join(byLine[key], ","))
		}
		got, total := references(t, h, map[string]any{"name": name, "limit": 37})
		if !slices.Equal(got, want) || total != len(want) {
			t.Errorf("%s: %d lines (total %d), rg %d; first difference at %d", name, len(got), total, len(want), firstDiff(got, want))
		}
		if len(want) == 0 {
			t.Errorf("%s: rg finds nothing: the case tests nothing", name)
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestReferencesMarkDefinitions: a line where the symbol table finds the
// name defined says which kind of symbol it defines.
func TestReferencesMarkDefinitions(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n\ntype Server struct{ Addr string }\n\nfunc (s *Server) Serve() {}\n\nfunc run() { var s Server; s.Serve() }\n",
	})
	h := newHarness(t, dir)
	for name, want := range map[string]map[int]string{
		"Server": {3: "class", 5: "", 7: ""},
		"Serve":  {5: "method", 7: ""},
		"Addr":   {3: "field"},
	} {
		raw, _ := json.Marshal(map[string]any{"name": name})
		var out struct {
			Files []struct {
				Lines []struct {
					Line       int    `json:"line"`
					Definition string `json:"definition"`
				} `json:"lines"`
			} `json:"files"`
		}
		h.OK(t, tenant, navigate.FindReferencesTool, string(raw), &out)
		got := map[int]string{}
		for _, f := range out.Files {
			for _, l := range f.Lines {
				got[l.Line] = l.Definition
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: definitions by line %v, want %v", name, got, want)
		}
	}
}

// TestReferencesOutsideCommentsAndStrings: occurrences in comments and
// strings are left out on request, and lines left with none go.
func TestReferencesOutsideCommentsAndStrings(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n\n// Serve serves.\nfunc Serve() { log(\"Serve\") } // Serve\n",
		"b.py": "def Serve():  # Serve\n    return 'Serve'\n",
	})
	h := newHarness(t, dir)
	tests := []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"name": "Serve"}, []string{"a.go:3:4", "a.go:4:6,21,34", "b.py:1:5,17", "b.py:2:13"}},
		{map[string]any{"name": "Serve", "excludeComments": true}, []string{"a.go:4:6,21", "b.py:1:5", "b.py:2:13"}},
		{map[string]any{"name": "Serve", "excludeComments": true, "excludeStrings": true}, []string{"a.go:4:6", "b.py:1:5"}},
		{map[string]any{"name": "Serve", "excludeStrings": true, "patterns": []string{"*.py"}}, []string{"b.py:1:5,17"}},
	}
	for _, tt := range tests {
		got, total := references(t, h, tt.args)
		if !slices.Equal(got, tt.want) || total != len(tt.want) {
			t.Errorf("%v: %v (total %d), want %v", tt.args, got, total, tt.want)
		}
	}
}

// TestReferencesPastTheFilteredLimit: leaving comments out, a search
// looks at 20,000 matching lines a call; here nearly all are comments, so
// the first page shows only the one real reference before them, and says
// it is incomplete, yet its cursor goes on from the last line it looked
// at, and the pages after find the real references past the limit, in
// another file too.
func TestReferencesPastTheFilteredLimit(t *testing.T) {
	const comments = 21000
	h := newHarness(t, repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n\nvar x = Serve\n" + strings.Repeat("// Serve\n", comments) + "var y = Serve\n",
		"b.go": "package a\n\n" + strings.Repeat("// Serve\n", 10) + "func Serve() {}\n",
	}))
	var first refs
	h.OK(t, tenant, navigate.FindReferencesTool, `{"name":"Serve","excludeComments":true,"limit":50}`, &first)
	if !first.Incomplete || first.NextCursor == nil || len(first.Files) != 1 || len(first.Files[0].Lines) != 1 {
		t.Fatalf("the first page: incomplete %v, next %v, %+v; want a:3 only, incomplete, with a cursor", first.Incomplete, first.NextCursor, first.Files)
	}
	got, _ := references(t, h, map[string]any{"name": "Serve", "excludeComments": true, "limit": 50})
	want := []string{"a.go:3:9", fmt.Sprintf("a.go:%d:9", comments+4), "b.go:13:6"}
	if !slices.Equal(got, want) {
		t.Errorf("paged to the end: %v, want %v", got, want)
	}
}

// TestReferencesInInterpolations: what template literals and f-strings
// interpolate is code, and so is what follows an apostrophe of JSX text:
// excludeStrings keeps those references.
func TestReferencesInInterpolations(t *testing.T) {
	h := newHarness(t, repotest.WriteDir(t, map[string]string{
		"a.ts":  "const s = `hi ${Serve()} and Serve`;\n",
		"b.py":  "x = f\"{Serve()} and {{Serve}}\"\n",
		"c.tsx": "const v = <p>Don't {Serve()}</p>;\n",
	}))
	got, _ := references(t, h, map[string]any{"name": "Serve", "excludeStrings": true})
	if want := []string{"a.ts:1:17", "b.py:1:8", "c.tsx:1:21"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
