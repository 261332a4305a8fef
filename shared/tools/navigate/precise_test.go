package navigate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// The fixtures: a Go module (an interface and two implementations,
// cross-package calls, a method called from several functions) and a
// TypeScript project (an interface, a class implementing it, a class
// overriding its method, calls after a non-ASCII literal). Their precise
// indexes are made once, by the real indexers, of the fixtures as
// committed; each test serves a copy of a fixture, changed or not.
const (
	goModule  = "testdata/gomodule"
	tsProject = "testdata/tsproject"
	goCommit  = "c0ffee"
	tsCommit  = "beef"
)

var indexes struct {
	sync.Mutex
	made map[string]precisetest.Index
}

// indexOf returns the precise index of a fixture, made once.
func indexOf(t *testing.T, fixture string) precisetest.Index {
	t.Helper()
	indexes.Lock()
	defer indexes.Unlock()
	if ix, ok := indexes.made[fixture]; ok {
		return ix
	}
	var ix precisetest.Index
	switch fixture {
	case goModule:
		ix = precisetest.Go(t, fixture, "", goCommit)
	case tsProject:
		ix = precisetest.TypeScript(t, fixture, "", tsCommit)
	}
	if indexes.made == nil {
		indexes.made = map[string]precisetest.Index{}
	}
	indexes.made[fixture] = ix
	return ix
}

// gosym is a symbol of the Go fixture.
func gosym(pkg, descriptors string) string {
	return "scip-go gomod example.com/nav " + goCommit + " `example.com/nav/" + pkg + "`/" + descriptors
}

// tssym is a symbol of the TypeScript fixture.
func tssym(file, descriptors string) string {
	return "scip-typescript npm shapes 1.0.0 src/`" + file + "`/" + descriptors
}

// preciseHarness serves a copy of fixture, with the files of changes
// replaced, and its index (made of the fixture as committed) as the
// repository's precise index.
func preciseHarness(t *testing.T, fixture string, changes map[string]string) *tooltest.Harness {
	t.Helper()
	dir := copyFixture(t, fixture, changes)
	repos := precisetest.Repos{"default": {indexOf(t, fixture)}}
	return tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(repotest.Local(t, dir), cursor.RandomKey(), repos.Indexes))
}

// copyFixture copies fixture into a temporary folder, with the files of
// changes replaced.
func copyFixture(t *testing.T, fixture string, changes map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	for p, content := range changes {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// edited is api/api.go with a line added at its top: every line after it
// is one further down than the index says.
func edited(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goModule, "api/api.go"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"api/api.go": "// Edited after indexing.\n" + string(b)}
}

type place struct {
	Symbol    string `json:"symbol"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Repo      string `json:"repo"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Container string `json:"container"`
	Signature string `json:"signature"`
	Doc       string `json:"doc"`
	External  bool   `json:"external"`
	Precision string `json:"precision"`
	Reason    string `json:"reason"`
	Calls     []struct {
		Line    int    `json:"line"`
		Columns []int  `json:"columns"`
		Text    string `json:"text"`
	} `json:"calls"`
}

// at writes a place as the tests compare it: "path:line:column".
func (p place) at() string { return fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Column) }

type answer struct {
	Name          string  `json:"name"`
	Symbol        string  `json:"symbol"`
	Precision     string  `json:"precision"`
	IndexedCommit string  `json:"indexedCommit"`
	Reason        string  `json:"reason"`
	Definitions   []place `json:"definitions"`
	ImplementedBy []place `json:"implementedBy"`
	Implements    []place `json:"implements"`
	Callers       []place `json:"callers"`
	Callees       []place `json:"callees"`
	Total         int     `json:"total"`
	NextCursor    *string `json:"next_cursor"`
	Message       string  `json:"message"`
	refsAnswer
}

type refsAnswer struct {
	Files []struct {
		Repo      string `json:"repo"`
		Path      string `json:"path"`
		Precision string `json:"precision"`
		Reason    string `json:"reason"`
		Lines     []struct {
			Line      int      `json:"line"`
			Columns   []int    `json:"columns"`
			Roles     []string `json:"roles"`
			Text      string   `json:"text"`
			Enclosing *struct {
				Name      string `json:"name"`
				Container string `json:"container"`
			} `json:"enclosing"`
		} `json:"lines"`
	} `json:"files"`
	TotalLines int `json:"totalLines"`
}

// refLines writes an answer's lines as the tests compare them:
// "path:line roles in function" ("-" for a line outside functions, no
// roles for lines found by search).
func (a answer) refLines() []string {
	var out []string
	for _, f := range a.Files {
		for _, l := range f.Lines {
			in := "-"
			if l.Enclosing != nil {
				in = strings.TrimPrefix(l.Enclosing.Container+"."+l.Enclosing.Name, ".")
			}
			out = append(out, fmt.Sprintf("%s:%d %s in %s", f.Path, l.Line, strings.Join(l.Roles, ","), in))
		}
	}
	return out
}

// call calls tool with args and decodes the answer.
func call(t *testing.T, h *tooltest.Harness, tool string, args map[string]any) answer {
	t.Helper()
	raw, _ := json.Marshal(args)
	var a answer
	h.OK(t, tenant, tool, string(raw), &a)
	return a
}

// fails calls tool with args, checks it fails with code and returns the
// error's message.
func fails(t *testing.T, h *tooltest.Harness, tool string, args map[string]any, code toolerr.Code) string {
	t.Helper()
	raw, _ := json.Marshal(args)
	return h.Fail(t, tenant, tool, string(raw), code).Message
}

// pos is a position argument.
func pos(path string, line, column int) map[string]any {
	return map[string]any{"path": path, "line": line, "column": column}
}

// with returns args with more arguments.
func with(args map[string]any, more ...any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i].(string)] = more[i+1]
	}
	return out
}
