package goscip_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"google.golang.org/protobuf/proto"
)

// fixture is the module the comparisons index: packages with an interface
// and its implementations, generics, embedded structs, value and pointer
// receivers, package-level variables and constants, uses of net/http,
// internal and external tests, and the declarations scip-go names oddly.
const fixture = "testdata/fixture"

// emit indexes dir and decodes the result.
func emit(t *testing.T, dir string, patterns []string, o goscip.Options) (*scip.Index, goscip.Stats) {
	t.Helper()
	var buf bytes.Buffer
	stats, err := goscip.Emit(context.Background(), dir, patterns, &buf, o)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	return decode(t, buf.Bytes()), stats
}

func decode(t *testing.T, data []byte) *scip.Index {
	t.Helper()
	var idx scip.Index
	if err := proto.Unmarshal(data, &idx); err != nil {
		t.Fatalf("the index is not SCIP: %v", err)
	}
	return &idx
}

// at is "path:line:column-end" (1-based) of an occurrence.
func at(doc *scip.Document, o *scip.Occurrence) string {
	r := o.Range
	return fmt.Sprintf("%s:%d:%d-%d", doc.RelativePath, r[0]+1, r[1]+1, r[len(r)-1]+1)
}

func isLocal(symbol string) bool { return strings.HasPrefix(symbol, "local ") }

// occurrences maps the position of every non-local occurrence to its
// symbols and roles ("symbol role", sorted, joined by " | ").
func occurrences(idx *scip.Index, keep func(path string) bool) map[string]string {
	found := map[string][]string{}
	for _, doc := range idx.Documents {
		if !keep(doc.RelativePath) {
			continue
		}
		for _, o := range doc.Occurrences {
			if !isLocal(o.Symbol) {
				found[at(doc, o)] = append(found[at(doc, o)], fmt.Sprintf("%s %d", o.Symbol, o.SymbolRoles))
			}
		}
	}
	joined := map[string]string{}
	for k, v := range found {
		slices.Sort(v)
		joined[k] = strings.Join(v, " | ")
	}
	return joined
}

func documentPaths(idx *scip.Index) []string {
	var paths []string
	for _, doc := range idx.Documents {
		paths = append(paths, doc.RelativePath)
	}
	slices.Sort(paths)
	return paths
}

func everything(string) bool { return true }

// goList runs go list in dir with the emitter's settings.
func goList(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return string(out)
}

// goEnv is a setting of go env.
func goEnv(tb testing.TB, name string) string {
	tb.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		tb.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// TestModules: a directory's modules are every go.mod below it but those
// in vendor, testdata, node_modules and folders named ._ or _x; each is
// indexed with its own packages (a parent's ./... stops at a nested
// module), documents named from the directory.
func TestModules(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod":                      "module example.com/a\n\ngo 1.22\n",
		"a.go":                        "package a\n\nfunc A() {}\n",
		"nested/go.mod":               "module example.com/b\n\ngo 1.22\n",
		"nested/b.go":                 "package b\n\nfunc B() {}\n",
		"vendor/v/go.mod":             "module example.com/v\n",
		"vendor/v/v.go":               "package v\n",
		"testdata/t/go.mod":           "module example.com/t\n",
		"testdata/t/t.go":             "package t\n",
		"node_modules/n/go.mod":       "module example.com/n\n",
		"node_modules/n/n.go":         "package n\n",
		"_tools/go.mod":               "module example.com/tools\n",
		"_tools/tools.go":             "package tools\n",
		".hidden/go.mod":              "module example.com/hidden\n",
		".hidden/hidden.go":           "package hidden\n",
		"nested/deeper/c.go":          "package deeper\n\nimport \"example.com/b\"\n\nfunc C() { b.B() }\n",
		"nested/deeper/c_test.go":     "package deeper\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) { C() }\n",
		"nested/deeper/x_test.go":     "package deeper_test\n",
		"nested/deeper/notgo.txt":     "not go",
		"nested/deeper/ignored_x.go":  "//go:build ignore\n\npackage main\n",
		"nested/deeper/windows_ok.go": "//go:build windows\n\npackage deeper\n",
	})
	idx, stats := emit(t, dir, nil, goscip.Options{})
	want := []string{"a.go", "nested/b.go", "nested/deeper/c.go"}
	if got := documentPaths(idx); !slices.Equal(got, want) || stats.Modules != 2 || stats.Documents != 3 {
		t.Errorf("documents %v, %d modules; want %v, 2 modules", got, stats.Modules, want)
	}
	occ := occurrences(idx, everything)
	if got, want := occ["nested/deeper/c.go:5:14-15"], "scip-go gomod example.com/b . `example.com/b`/B(). 8"; got != want {
		t.Errorf("the use of b.B across packages is %q, want %q", got, want)
	}
	idx, _ = emit(t, dir, []string{"./..."}, goscip.Options{Tests: true})
	want = []string{"a.go", "nested/b.go", "nested/deeper/c.go", "nested/deeper/c_test.go", "nested/deeper/x_test.go"}
	if got := documentPaths(idx); !slices.Equal(got, want) {
		t.Errorf("with tests, documents %v; want %v", got, want)
	}
}

// TestRelativePatterns: a relative pattern names folders from the
// directory, whichever module holds them: each module lists only the
// patterns of its own folders (a module none names is not listed), so
// that re-indexing a few packages of a tree of modules costs only theirs.
func TestRelativePatterns(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod":             "module example.com/a\n\ngo 1.22\n",
		"a.go":               "package a\n\nfunc A() {}\n",
		"sub/s.go":           "package sub\n\nfunc S() {}\n",
		"nested/go.mod":      "module example.com/b\n\ngo 1.22\n",
		"nested/b.go":        "package b\n\nfunc B() {}\n",
		"nested/deeper/c.go": "package deeper\n\nimport \"example.com/b\"\n\nfunc C() { b.B() }\n",
	})
	tests := []struct {
		patterns []string
		want     []string
		modules  int
	}{
		{[]string{"./nested/deeper"}, []string{"nested/deeper/c.go"}, 1},
		{[]string{"."}, []string{"a.go"}, 1},
		{[]string{"./sub", "./nested"}, []string{"nested/b.go", "sub/s.go"}, 2},
		{[]string{"./nested/..."}, []string{"nested/b.go", "nested/deeper/c.go"}, 1},
		{[]string{"./..."}, []string{"a.go", "nested/b.go", "nested/deeper/c.go", "sub/s.go"}, 2},
	}
	for _, tc := range tests {
		idx, stats := emit(t, dir, tc.patterns, goscip.Options{})
		if got := documentPaths(idx); !slices.Equal(got, tc.want) || stats.Modules != tc.modules {
			t.Errorf("%v: documents %v from %d modules; want %v from %d", tc.patterns, got, stats.Modules, tc.want, tc.modules)
		}
	}
	var buf bytes.Buffer
	if _, err := goscip.Emit(context.Background(), dir, []string{"../elsewhere"}, &buf, goscip.Options{}); err == nil || !strings.Contains(err.Error(), "no module under") {
		t.Errorf("a pattern outside every module: %v, want no module holds it", err)
	}
}

// TestMissingDependency: a dependency that is not in the module cache
// (and never downloaded) leaves its uses unresolved and the rest indexed;
// the module's go.mod is not written and no go.sum appears.
func TestMissingDependency(t *testing.T) {
	gomod := "module example.com/m\n\ngo 1.22\n\nrequire example.com/nowhere v1.2.3\n"
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod": gomod,
		"m.go":   "package m\n\nimport (\n\t\"strings\"\n\n\t\"example.com/nowhere/pkg\"\n)\n\nfunc F() string { return pkg.Name + strings.ToUpper(\"x\") }\n",
	})
	idx, stats := emit(t, dir, nil, goscip.Options{})
	occ := occurrences(idx, everything)
	if got, want := occ["m.go:9:45-52"], "scip-go gomod github.com/golang/go/src go1.22 strings/ToUpper(). 8"; got != want {
		t.Errorf("strings.ToUpper is %q, want %q", got, want)
	}
	for _, unresolved := range []string{"m.go:6:2-26", "m.go:9:26-29", "m.go:9:30-34"} {
		if got := occ[unresolved]; got != "" {
			t.Errorf("%s, in the missing package, resolved to %s", unresolved, got)
		}
	}
	if stats.ListErrors == 0 || stats.TypeErrors == 0 {
		t.Errorf("stats %+v: the missing package is not counted", stats)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(data) != gomod {
		t.Errorf("go.mod was written: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); !os.IsNotExist(err) {
		t.Errorf("go.sum appeared: %v", err)
	}
}

// TestBrokenCode: a file with syntax errors is indexed as far as it
// parses, and code that does not type-check as far as go/types resolves
// it.
func TestBrokenCode(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\nfunc A() int { return undefined() + B() }\n",
		"b.go":   "package m\n\nfunc B() int { return 1 }\n\nfunc C( {\n",
	})
	idx, stats := emit(t, dir, nil, goscip.Options{})
	occ := occurrences(idx, everything)
	b := "scip-go gomod example.com/m . `example.com/m`/B(). "
	if occ["a.go:3:37-38"] != b+"8" || occ["b.go:3:6-7"] != b+"1" {
		t.Errorf("occurrences %v; want B defined and used", occ)
	}
	if stats.TypeErrors == 0 || stats.Documents != 2 {
		t.Errorf("stats %+v: want type errors counted and 2 documents", stats)
	}
}

// TestLimits: at MaxDocuments or MaxBytes the index stops with ErrLimit
// before the document that would pass the limit, and what was written is
// a valid index within it.
func TestLimits(t *testing.T) {
	tests := []struct {
		name     string
		o        goscip.Options
		wantDocs int
	}{
		{"documents", goscip.Options{MaxDocuments: 2}, 2},
		{"bytes", goscip.Options{MaxBytes: 20000}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			stats, err := goscip.Emit(context.Background(), fixture, nil, &buf, tt.o)
			if !errors.Is(err, goscip.ErrLimit) {
				t.Fatalf("error %v, want ErrLimit", err)
			}
			idx := decode(t, buf.Bytes())
			if len(idx.Documents) != stats.Documents || tt.wantDocs >= 0 && stats.Documents != tt.wantDocs {
				t.Errorf("%d documents decoded, stats say %d, want %d", len(idx.Documents), stats.Documents, tt.wantDocs)
			}
			if tt.o.MaxBytes > 0 && (int64(buf.Len()) > tt.o.MaxBytes || stats.Bytes != int64(buf.Len()) || stats.Documents == 0) {
				t.Errorf("%d bytes written (stats %d, %d documents), limit %d", buf.Len(), stats.Bytes, stats.Documents, tt.o.MaxBytes)
			}
		})
	}
}

// TestCanceled: a done context stops the index between packages.
func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	stats, err := goscip.Emit(ctx, fixture, nil, &buf, goscip.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if idx := decode(t, buf.Bytes()); idx.Metadata == nil || len(idx.Documents) != 0 || stats.Documents != 0 {
		t.Errorf("metadata %v, %d documents: want the metadata only", idx.Metadata, len(idx.Documents))
	}
}

// TestNotAModule: a directory without a go.mod, or whose only module go
// list refuses, is an error; a module go list refuses beside others is
// skipped and named in Stats.Skipped.
func TestNotAModule(t *testing.T) {
	refused := "module example.com/r\n\ngo 1.999\n" // newer than this Go, which may not switch toolchains
	tests := []struct {
		name    string
		files   map[string]string
		wantErr string
	}{
		{"no go.mod", map[string]string{"a.go": "package a\n"}, "no go.mod in"},
		{"refused", map[string]string{"go.mod": refused, "a.go": "package a\n"}, "no module could be listed: .: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := goscip.Emit(context.Background(), repotest.WriteDir(t, tt.files), nil, &bytes.Buffer{}, goscip.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n", "m.go": "package m\n",
		"r/go.mod": refused, "r/r.go": "package r\n",
	})
	idx, stats := emit(t, dir, nil, goscip.Options{})
	if got := documentPaths(idx); !slices.Equal(got, []string{"m.go"}) || len(stats.Skipped) != 1 || !strings.HasPrefix(stats.Skipped[0], "r: ") {
		t.Errorf("documents %v, skipped %q; want m.go, and r skipped", got, stats.Skipped)
	}
}

// TestImplementations: a named type implements every interface of the
// module and of the packages it loads whose methods it has, with its pointer's
// methods (and promoted ones); its methods implement the interfaces'
// methods. An interface that embeds error requires an Error method (where
// scip-go would relate any type with the other methods).
func TestImplementations(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"m.go": `package m

import "io"

var _ io.Reader = (*Full)(nil)

type Coded interface {
	error
	Code() int
}

type Closer interface{ Close() error }

type OnlyCode struct{}

func (OnlyCode) Code() int { return 0 }

type Full struct{}

func (*Full) Code() int      { return 1 }
func (*Full) Error() string  { return "" }
func (*Full) Close() error   { return nil }
func (*Full) Read([]byte) (int, error) { return 0, nil }

type Wrapped struct{ *Full }
`,
	})
	idx, _ := emit(t, dir, nil, goscip.Options{})
	rels := relationships(idx, everything)
	m, std := "scip-go gomod example.com/m . `example.com/m`/", "scip-go gomod github.com/golang/go/src go1.22 "
	impl := func(symbols ...string) string {
		var lines []string
		for _, s := range symbols {
			lines = append(lines, s+" impl=true ref=false def=false")
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	want := map[string]string{
		m + "OnlyCode#":        "",
		m + "OnlyCode#Code().": "",
		m + "Full#":            impl(m+"Coded#", m+"Closer#", std+"io/Closer#", std+"io/Reader#", std+"io/ReadCloser#"),
		m + "Full#Close().":    impl(m+"Closer#Close.", std+"io/Closer#Close."),
		m + "Full#Code().":     impl(m + "Coded#Code."),
		m + "Full#Read().":     impl(std + "io/Reader#Read."),
		m + "Wrapped#":         impl(m+"Coded#", m+"Closer#", std+"io/Closer#", std+"io/Reader#", std+"io/ReadCloser#"),
	}
	for symbol, w := range want {
		if got := rels[symbol]; got != w {
			t.Errorf("%s implements\n%s\nwant\n%s", symbol, got, w)
		}
	}
}

// TestBlankImport: a blank import of a package the file also imports by
// name leaves the name's uses referring to the package (scip-go turns them
// into a local).
func TestBlankImport(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"m.go":   "package m\n\nimport (\n\t\"strings\"\n\t_ \"strings\"\n)\n\nvar S = strings.ToUpper(\"x\")\n",
	})
	idx, _ := emit(t, dir, nil, goscip.Options{})
	occ := occurrences(idx, everything)
	std := "scip-go gomod github.com/golang/go/src go1.22 strings/"
	if occ["m.go:8:9-16"] != std+" 8" || occ["m.go:8:17-24"] != std+"ToUpper(). 8" {
		t.Errorf("strings.ToUpper is %q %q, want the package and its function", occ["m.go:8:9-16"], occ["m.go:8:17-24"])
	}
}
