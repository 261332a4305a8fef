package navigate_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// positionTools are the tools that take a position or a symbol.
var positionTools = []string{navigate.FindDefinitionTool, navigate.FindReferencesTool, navigate.FindImplementationsTool, navigate.FindCallersTool}

// TestPositionsRefused: a position outside the file, a file the tools do
// not read, or what is not one position is refused by every position
// tool, saying why.
func TestPositionsRefused(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	tests := []struct {
		name string
		args map[string]any
		code toolerr.Code
		says string
	}{
		{"a line past the end", pos("api/api.go", 31, 1), toolerr.InvalidInput, "api/api.go has 30 lines"},
		{"a far line", pos("api/api.go", 100000000, 1), toolerr.InvalidInput, "past its end"},
		{"a column past the end", pos("api/api.go", 13, 31), toolerr.InvalidInput, "has 29 bytes"},
		{"a far column", pos("api/api.go", 13, 1000000000), toolerr.InvalidInput, "column"},
		{"line 0", pos("api/api.go", 0, 1), toolerr.InvalidInput, "line"},
		{"no identifier there", pos("api/api.go", 3, 1), toolerr.InvalidInput, "no identifier"},
		{"a folder", pos("store", 1, 1), toolerr.InvalidInput, "is a folder"},
		{"a missing file", pos("store/none.go", 1, 1), toolerr.ResourceNotFound, "No file"},
		{"a denied file", pos("store/secrets.go", 6, 12), toolerr.PathNotAllowed, ""},
		{"out of the repository", pos("../gomodule/api/api.go", 1, 1), toolerr.InvalidInput, "path"},
		{"a position and a symbol", with(pos("api/api.go", 13, 16), "symbol", gosym("store", "Map#")), toolerr.InvalidInput, "not both"},
		{"half a position", map[string]any{"path": "api/api.go", "line": 13}, toolerr.InvalidInput, "give a position"},
		{"a symbol with control characters", map[string]any{"symbol": "local 1\napi/api.go"}, toolerr.InvalidInput, "symbol"},
		{"a symbol that names nothing", map[string]any{"symbol": "scip-go gomod x v1 `x`"}, toolerr.ResourceNotFound, "No precise index"},
	}
	for _, tt := range tests {
		for _, tool := range positionTools {
			t.Run(tt.name+"/"+tool, func(t *testing.T) {
				if msg := fails(t, h, tool, tt.args, tt.code); !strings.Contains(msg, tt.says) {
					t.Errorf("%q does not say %q", msg, tt.says)
				}
			})
		}
	}
}

// TestDeniedFilesNeverShown: the index was made with a file every view
// denies (store/secrets.go calls Map.Get): no answer shows it.
func TestDeniedFilesNeverShown(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	for _, tool := range positionTools {
		for _, dir := range []string{"incoming", "outgoing"} {
			args := with(pos("store/store.go", 17, 15), "includeDeclaration", true, "direction", dir)
			switch tool {
			case navigate.FindReferencesTool:
				delete(args, "direction")
			case navigate.FindCallersTool:
				delete(args, "includeDeclaration")
			default:
				args = pos("store/store.go", 17, 15)
			}
			raw, _ := json.Marshal(args)
			o := h.OK(t, tenant, tool, string(raw), nil)
			if strings.Contains(string(o.Result), "secret") {
				t.Errorf("%s %s shows the denied file: %s", tool, raw, o.Result)
			}
		}
	}
}

// TestSymbolsOfOthers: a symbol of another tenant's index, or of a
// repository the caller may not read, is unknown here: the answer is
// made by search over the caller's own repository, and shows nothing of
// the other's.
func TestSymbolsOfOthers(t *testing.T) {
	theirs := precisetest.TypeScript(t, tsProject, "globex", tsCommit)
	consumer := precisetest.Go(t, "testdata/consumer", "", goCommit)
	repos := precisetest.Repos{"default": {indexOf(t, goModule)}, "web": {theirs}, "consumer": {consumer}}
	src := repo.Shared{View: localView(t, goModule), Others: []repo.Named{{Name: "web", View: localView(t, tsProject)},
		{Name: "consumer", View: localView(t, "testdata/consumer")}}}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), repos.Indexes))
	tests := []struct {
		name   string
		repos  []string
		symbol string
	}{
		{"another tenant's", nil, tssym("shape.ts", "Shape#area().")},
		{"a repository the caller may not read", []string{"default"}, "scip-go gomod example.com/consumer " + goCommit + " `example.com/consumer`/Fetch()."},
	}
	for _, tt := range tests {
		for _, tool := range positionTools {
			t.Run(tt.name+"/"+tool, func(t *testing.T) {
				raw, _ := json.Marshal(map[string]any{"symbol": tt.symbol})
				o := h.CallLimited(context.Background(), tenant, tt.repos, tool, string(raw))
				if !o.OK {
					t.Fatalf("%+v", o.Error)
				}
				var a answer
				json.Unmarshal(o.Result, &a)
				if a.Precision != "search" || !strings.Contains(a.Reason, "no precise index of this repository knows the symbol") {
					t.Errorf("%s: %q %q", o.Result, a.Precision, a.Reason)
				}
				for _, leak := range []string{"shape.ts", "circle.ts", "use.go", "consumer"} {
					if strings.Contains(string(o.Result), leak) && !strings.Contains(tt.symbol, leak) {
						t.Errorf("the answer shows %s: %s", leak, o.Result)
					}
				}
			})
		}
	}
	if msg := fails(t, h, navigate.FindReferencesTool, map[string]any{"symbol": "local 3 src/main.ts"}, toolerr.ResourceNotFound); !strings.Contains(msg, "find_symbols") {
		t.Errorf("another's local symbol: %q", msg)
	}
}

// localView serves dir as a live local view.
func localView(t *testing.T, dir string) repo.View {
	t.Helper()
	return repotest.Local(t, dir).View
}

// TestAcrossRepositories: a global symbol links the tenant's
// repositories (a module of one used by another): references and
// callers in the other repository name it, and a definition there is
// reached from it; a caller limited to one repository sees only that one.
func TestAcrossRepositories(t *testing.T) {
	repos := precisetest.Repos{"default": {indexOf(t, goModule)}, "consumer": {precisetest.Go(t, "testdata/consumer", "", goCommit)}}
	src := repo.Shared{View: localView(t, goModule), Others: []repo.Named{{Name: "consumer", View: localView(t, "testdata/consumer")}}}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), repos.Indexes))

	got := call(t, h, navigate.FindReferencesTool, pos("store/store.go", 17, 15))
	last := got.Files[len(got.Files)-1]
	if last.Repo != "consumer" || last.Path != "use.go" || last.Lines[0].Line != 8 || last.Lines[0].Enclosing.Name != "Fetch" || got.TotalLines != 5 {
		t.Errorf("references: %+v", got.Files)
	}
	raw, _ := json.Marshal(pos("store/store.go", 17, 15))
	o := h.CallLimited(context.Background(), tenant, []string{"default"}, navigate.FindReferencesTool, string(raw))
	if !o.OK || strings.Contains(string(o.Result), "consumer") {
		t.Errorf("limited to default: %s %+v", o.Result, o.Error)
	}

	got = call(t, h, navigate.FindCallersTool, pos("store/store.go", 17, 15))
	var callers []string
	for _, c := range got.Callers {
		callers = append(callers, c.Repo+":"+c.Name)
	}
	if want := []string{":Lookup", ":Both", ":main", "consumer:Fetch"}; !slices.Equal(callers, want) {
		t.Errorf("callers %q, want %q", callers, want)
	}

	got = call(t, h, navigate.FindDefinitionTool, with(pos("use.go", 8, 23), "repo", "consumer"))
	if d := got.Definitions; len(d) != 1 || d[0].Repo != "default" || d[0].at() != "store/store.go:17:15" || d[0].Container != "Map" {
		t.Errorf("a definition in another repository: %+v", d)
	}
}

// TestForgedCursors: a cursor this call did not issue is refused: made
// up, of another tool, of the answer by name, of another tenant.
func TestForgedCursors(t *testing.T) {
	h := preciseHarness(t, goModule, nil)
	at := with(pos("store/store.go", 17, 15), "limit", 1)
	issued := func(tool string, args map[string]any) string {
		t.Helper()
		a := call(t, h, tool, args)
		if a.NextCursor == nil {
			t.Fatalf("%s %v: no next page", tool, args)
		}
		return *a.NextCursor
	}
	refs := issued(navigate.FindReferencesTool, at)
	callers := issued(navigate.FindCallersTool, at)
	byName := issued(navigate.FindReferencesTool, map[string]any{"name": "Get", "limit": 1})
	tests := []struct {
		name, tool, cursor string
	}{
		{"made up", navigate.FindReferencesTool, "bm90LWEtY3Vyc29y"},
		{"made up", navigate.FindCallersTool, "bm90LWEtY3Vyc29y"},
		{"made up", navigate.FindImplementationsTool, "bm90LWEtY3Vyc29y"},
		{"another tool's", navigate.FindReferencesTool, callers},
		{"another tool's", navigate.FindCallersTool, refs},
		{"another tool's", navigate.FindImplementationsTool, callers},
		{"the answer by name's", navigate.FindReferencesTool, byName},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.tool, func(t *testing.T) {
			fails(t, h, tt.tool, with(at, "cursor", tt.cursor), toolerr.InvalidInput)
		})
	}
	raw, _ := json.Marshal(with(at, "cursor", refs))
	if o := h.Call("globex", navigate.FindReferencesTool, string(raw)); o.OK || o.Error.Code != toolerr.InvalidInput {
		t.Errorf("another tenant's cursor: %s %+v", o.Result, o.Error)
	}
}
