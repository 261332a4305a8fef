package sciprun

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// checkoutNodeModules returns the checkout's node_modules, where make test
// installs the indexers from the lockfile, failing t when they are not
// there.
func checkoutNodeModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"scip-typescript", "scip-python"} {
		if _, err := os.Stat(filepath.Join(dir, "@sourcegraph", pkg, "package.json")); err != nil {
			t.Fatalf("@sourcegraph/%s is not installed: run `npm ci` at the top of the checkout (%v)", pkg, err)
		}
	}
	return dir
}

// TestRunIndexers finds the project of each fixture, runs its real
// indexer on a copy of it and checks that the SCIP index decodes and holds
// definitions, references and implementations across files, that nothing
// was written into the project, and that the project's name and version
// reach the symbols.
func TestRunIndexers(t *testing.T) {
	r := Runner{NodeModules: checkoutNodeModules(t)}
	tests := []struct {
		fixture string
		config  string
		want    []string // facts (see indexFacts)
	}{
		{"typescript", "tsconfig.json", []string{
			"package scip-typescript npm shapes 1.0.0",
			"def src/`shape.ts`/Shape# src/shape.ts:2",
			"ref src/`shape.ts`/Shape# src/circle.ts:4",
			"ref src/`shape.ts`/Shape# src/main.ts:13",
			"ref src/`shape.ts`/Shape#area(). src/main.ts:8",
			"impl src/`circle.ts`/Circle# src/`shape.ts`/Shape#",
			"impl src/`circle.ts`/Circle#area(). src/`shape.ts`/Shape#area().",
			"def src/`main.ts`/totalArea(). src/main.ts:5",
			"ref src/`main.ts`/totalArea(). src/main.ts:18",
			"ref src/`circle.ts`/Circle#`<constructor>`(). src/main.ts:17",
		}},
		{"javascript", "package.json", []string{
			"package scip-typescript npm greeter 0.1.0",
			"def lib/`greet.js`/Greeter# lib/greet.js:6",
			"def lib/`greet.js`/makeGreeter(). lib/greet.js:16",
			"ref lib/`greet.js`/makeGreeter(). index.js:5",
			"ref lib/`greet.js`/Greeter#greet(). index.js:6",
		}},
		{"python", "pyproject.toml", []string{
			"package scip-python python zoo c0ffee",
			"def `zoo.animals`/Animal# zoo/animals.py:4",
			"ref `zoo.animals`/Animal# zoo/keeper.py:6",
			"ref `zoo.animals`/Dog# zoo/keeper.py:11",
			"ref `zoo.animals`/Animal#describe(). zoo/keeper.py:7",
			"impl `zoo.animals`/Dog# `zoo.animals`/Animal#",
			"impl `zoo.animals`/Puppy#speak(). `zoo.animals`/Dog#speak().",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", tc.fixture))); err != nil {
				t.Fatal(err)
			}
			before := listFiles(t, dir)
			projects, err := Projects(context.Background(), os.DirFS(dir))
			if err != nil || len(projects) != 1 || projects[0].Config != tc.config {
				t.Fatalf("Projects = %+v, %v; want one project configured by %s", projects, err, tc.config)
			}
			p := projects[0]
			p.Version = "c0ffee"
			out := filepath.Join(t.TempDir(), "index.scip")
			stats, err := r.Run(context.Background(), p, dir, out, Limits{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("%s on %s: %s, peak RSS %d MB, %d bytes of SCIP, memory held by %s",
				p.Indexer, tc.fixture, stats.Duration, stats.PeakRSS>>20, stats.OutputBytes, stats.Memory)
			facts := indexFacts(t, out)
			for _, want := range tc.want {
				if !slices.Contains(facts, want) {
					t.Errorf("the index lacks %q; it holds:\n%s", want, strings.Join(facts, "\n"))
				}
			}
			if after := listFiles(t, dir); !slices.Equal(before, after) {
				t.Errorf("the indexer changed the project's files: %v, then %v", before, after)
			}
		})
	}
}

// listFiles lists the files under dir.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		files = append(files, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// indexFacts decodes the SCIP index in file and lists what it says, one
// fact a line: "def DESCRIPTORS PATH:LINE" and "ref ..." for the
// occurrences of global symbols (named without their package), "impl
// SYMBOL OTHER" for a symbol implementing another, and "package SCHEME
// MANAGER NAME VERSION" for each package defining a symbol. Lines are
// 1-based.
func indexFacts(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var index scip.Index
	if err := proto.Unmarshal(data, &index); err != nil {
		t.Fatalf("the index does not decode: %v", err)
	}
	var facts []string
	descriptors := func(symbol string) (pkg, desc string) {
		fields := strings.SplitN(symbol, " ", 5)
		if len(fields) < 5 {
			return "", ""
		}
		return strings.Join(fields[:4], " "), fields[4]
	}
	for _, doc := range index.Documents {
		for _, o := range doc.Occurrences {
			pkg, desc := descriptors(o.Symbol)
			if desc == "" {
				continue // a local symbol
			}
			role := "ref"
			if o.SymbolRoles&int32(scip.SymbolRole_Definition) != 0 {
				role = "def"
				facts = append(facts, "package "+pkg)
			}
			facts = append(facts, fmt.Sprintf("%s %s %s:%d", role, desc, doc.RelativePath, o.Range[0]+1))
		}
		for _, s := range doc.Symbols {
			for _, rel := range s.Relationships {
				if rel.IsImplementation {
					_, from := descriptors(s.Symbol)
					_, to := descriptors(rel.Symbol)
					facts = append(facts, "impl "+from+" "+to)
				}
			}
		}
	}
	slices.Sort(facts)
	return slices.Compact(facts)
}

// TestRunUnavailable checks the errors of an indexer that cannot run: each
// says what to install.
func TestRunUnavailable(t *testing.T) {
	ts := Project{Language: TypeScript, Root: "web", Indexer: "scip-typescript", Config: "tsconfig.json"}
	py := Project{Language: Python, Root: ".", Indexer: "scip-python"}
	tests := []struct {
		name string
		r    Runner
		p    Project
		says string
	}{
		{"no Go indexer", Runner{}, Project{Language: Go, Root: ".", Indexer: "goscip"},
			"goscip on .: not installed: no Go indexer command was given"},
		{"no node_modules", Runner{}, ts,
			"scip-typescript on web: not installed: @sourcegraph/scip-typescript: no node_modules folder was found: run `npm ci` in the Toolshed checkout, or set TOOLSHED_NODE_MODULES"},
		{"no package", Runner{NodeModules: t.TempDir()}, py, "@sourcegraph/scip-python is not installed in "},
		{"no node", Runner{NodeModules: checkoutNodeModules(t), Node: filepath.Join(t.TempDir(), "node")}, py,
			"install Node.js 20 or later to index with scip-python"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "index.scip")
			_, err := tc.r.Run(context.Background(), tc.p, t.TempDir(), out, Limits{})
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Run: %v; want ErrUnavailable saying %q", err, tc.says)
			}
		})
	}
}

// TestNodeModules checks where the npm indexers are looked for: the
// setting, else beside the executable or above it, never elsewhere.
func TestNodeModules(t *testing.T) {
	checkout := t.TempDir()
	pkg := filepath.Join(checkout, "node_modules", "@sourcegraph", "scip-typescript")
	exe := filepath.Join(checkout, "build", "local", "toolshed")
	for _, dir := range []string{pkg, filepath.Dir(exe)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(pkg, "package.json"), exe} {
		if err := os.WriteFile(f, []byte("{}"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stray := filepath.Join(t.TempDir(), "toolshed")
	if err := os.WriteFile(stray, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		setting, exe, want string
	}{
		{"", exe, filepath.Join(checkout, "node_modules")},
		{"/opt/indexers/node_modules", exe, "/opt/indexers/node_modules"},
		{"", stray, ""},
	}
	for _, tc := range tests {
		got, err := NodeModules(tc.setting, tc.exe)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("NodeModules(%q, %s) = %q, %v; want %q", tc.setting, tc.exe, got, err, tc.want)
		}
	}
}

// TestOutOfMemory: what a run that failed printed says whether it ran out
// of memory.
func TestOutOfMemory(t *testing.T) {
	tests := []struct {
		output, memory string
		want           bool
	}{
		{"fatal error: out of memory", "cgroup v1", true},
		{"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "V8 heap limit", true},
		{"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort", "RLIMIT_AS", true},
		{"runtime/cgo: pthread_create failed: Resource temporarily unavailable", "cgroup v2", false},
		{"panic: index out of range", "RLIMIT_AS", false},
	}
	for _, tc := range tests {
		if got := outOfMemory(result{output: tc.output, memory: tc.memory}); got != tc.want {
			t.Errorf("%q held by %s: %v, want %v", tc.output, tc.memory, got, tc.want)
		}
	}
}

// TestTail: a run keeps the first lines of what an indexer printed (where
// Go's runtime says why it stopped) and the last ones, whole lines only,
// saying where it left some out.
func TestTail(t *testing.T) {
	var w tail
	fmt.Fprintln(&w, "fatal error: out of memory")
	for i := range 2000 {
		fmt.Fprintf(&w, "goroutine %d [running]:\n", i)
	}
	fmt.Fprint(&w, "the end")
	got := w.String()
	if !strings.HasPrefix(got, "fatal error: out of memory\ngoroutine 0 [running]:\n") || !strings.Contains(got, "]:\n…\ngoroutine ") ||
		!strings.HasSuffix(got, "goroutine 1999 [running]:\nthe end") || len(got) > headBytes+tailBytes+4 {
		t.Errorf("kept %d bytes: %.80q … %.80q", len(got), got, got[max(0, len(got)-80):])
	}
	var short tail
	fmt.Fprint(&short, "one\ntwo\n")
	if got := short.String(); got != "one\ntwo" {
		t.Errorf("a short output: %q", got)
	}
}
