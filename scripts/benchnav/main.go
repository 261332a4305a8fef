// Command benchnav (make bench-nav) measures the navigation tools an agent
// without a checkout uses — list_files, find_symbols, find_references and
// read_file's slices — on the Go source tree served by the local server
// (make run's binary), each query's p50 and p99 over /v1, next to what
// ripgrep takes for the same question on the same files in the same run:
// `rg --files -g` for files, `rg -w -s` for references (with the counts,
// which must agree).
//
// Then the precise rows (precise.go): the tree's precise index (time,
// peak memory, size; five copies with -five), the answers of the
// navigation tools over it (find_definition, find_references at a
// position) and of the store under them against go/types' (package
// navcheck), the textual and precise answers for ambiguous names side by
// side, and rxjs's against the TypeScript language service. The local
// server does not make precise indexes yet: the tools answering from
// them are served in this process, through the pipeline a server runs,
// over the same tree.
//
//	make bench-nav
//	make bench-nav ARGS=-five
//	make bench-nav ARGS=-rxjs-only
//	go run ./scripts/benchnav -runs 51 -tree /path/to/a/checkout
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
	"github.com/toolshed/toolshed/shared/testenv/standalone"
)

func main() {
	tree := flag.String("tree", filepath.Join(runtime.GOROOT(), "src"), "the repository served")
	runs := flag.Int("runs", 31, "calls of each query (p50, p99)")
	var o preciseOptions
	flag.BoolVar(&o.on, "precise", true, "the precise rows")
	flag.BoolVar(&o.five, "five", false, "index five copies of the tree too (slow)")
	flag.IntVar(&o.sample.Uses, "uses", 2000, "uses whose definition is compared")
	flag.IntVar(&o.sample.Symbols, "symbols", 200, "symbols (of the first uses) whose references are compared")
	flag.Uint64Var(&o.sample.Seed, "seed", 1, "the sample's seed")
	flag.IntVar(&o.runs, "name-runs", 5, "calls of each ambiguous name's whole answers (p50)")
	flag.StringVar(&o.rxjs, "rxjs", "node_modules/rxjs", "the rxjs package compared with the TypeScript language service (\"\": none)")
	flag.StringVar(&o.node, "node", "node", "node, for scip-typescript and the language service")
	flag.BoolVar(&o.rxjsOnly, "rxjs-only", false, "only rxjs against the TypeScript language service (no Go tree rows)")
	flag.Parse()
	o.sample.Names = ambiguous
	err := standalone.RunStderr(func(tb testing.TB) error { return run(tb, *tree, *runs, o) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-nav:", err)
		os.Exit(1)
	}
}

// query is one question to a navigation tool, and the ripgrep command that
// answers the same one (none for symbols and slices).
type query struct {
	name string
	tool string
	args map[string]any
	rg   []string
	// count reads the tool's count from its result, to compare with rg's
	// lines; nil when there is nothing to compare.
	count func(result json.RawMessage) (int, error)
}

var queries = []query{
	{"files: the root", "list_files", map[string]any{}, nil, nil},
	{"files: a folder, 2 levels", "list_files", map[string]any{"path": "net/http", "depth": 2}, nil, nil},
	{"files: *_test.go", "list_files", map[string]any{"patterns": []string{"*_test.go"}, "limit": 1000},
		[]string{"--files", "-g", "*_test.go"}, total("total")},
	{"files: Dockerfile, *.yaml", "list_files", map[string]any{"patterns": []string{"Dockerfile", "*.yaml"}, "limit": 1000},
		[]string{"--files", "-g", "Dockerfile", "-g", "*.yaml"}, total("total")},
	{"symbols: exact", "find_symbols", map[string]any{"name": "ReadMIMEHeader"}, nil, nil},
	{"symbols: prefix, functions", "find_symbols", map[string]any{"name": "New", "match": "prefix", "kinds": []string{"function"}}, nil, nil},
	{"symbols: substring", "find_symbols", map[string]any{"name": "Header", "match": "substring"}, nil, nil},
	{"symbols: outline of server.go", "find_symbols", map[string]any{"file": "net/http/server.go", "limit": 500}, nil, nil},
	{"references: ReadMIMEHeader", "find_references", map[string]any{"name": "ReadMIMEHeader"},
		[]string{"-w", "-s", "-n", "ReadMIMEHeader"}, total("totalLines")},
	{"references: Serve in net/http", "find_references", map[string]any{"name": "Serve", "path": "net/http"},
		[]string{"-w", "-s", "-n", "Serve", "net/http"}, total("totalLines")},
	{"references: err (100 lines)", "find_references", map[string]any{"name": "err"},
		[]string{"-w", "-s", "-n", "err"}, total("totalLines")},
	{"read_file: 100 lines of server.go", "read_file", map[string]any{"path": "net/http/server.go", "startLine": 2000, "endLine": 2099}, nil, nil},
	{"read_file: all of server.go", "read_file", map[string]any{"path": "net/http/server.go"}, nil, nil},
}

// total reads a count field of a result.
func total(field string) func(json.RawMessage) (int, error) {
	return func(result json.RawMessage) (int, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(result, &m); err != nil {
			return 0, err
		}
		var n int
		err := json.Unmarshal(m[field], &n)
		return n, err
	}
}

func run(tb testing.TB, tree string, runs int, o preciseOptions) error {
	if o.rxjsOnly {
		return typeScript(context.Background(), tb, o, filepath.Join(tb.TempDir(), "rxjs"))
	}
	if err := ripgrep.Installed(); err != nil {
		return err
	}
	tmp := tb.TempDir()
	bin, err := localrun.Build(tmp)
	if err != nil {
		return err
	}
	srv, err := localrun.Start(localrun.Options{Bin: bin, Repo: tree, Data: filepath.Join(tmp, "data"),
		Unlimited: []string{"list_files", "find_symbols", "find_references", "read_file"}})
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Printf("bench-nav: %s, %d CPUs, %s, %d runs per query\n", tree, runtime.NumCPU(), ripgrep.Version(), runs)
	if err := waitIndexes(srv); err != nil {
		return err
	}
	fmt.Printf("%-36s %9s %9s %9s %9s %7s %10s\n", "query", "p50_ms", "p99_ms", "bytes", "rg_p50", "ratio", "count/rg")
	for _, q := range queries {
		if err := measure(srv, tree, q, runs); err != nil {
			return fmt.Errorf("%s: %w", q.name, err)
		}
	}
	if !o.on {
		return nil
	}
	return runPrecise(context.Background(), tb, srv, bin, tree, tmp, o)
}

// measure prints one query's row.
func measure(srv *localrun.Server, tree string, q query, runs int) error {
	var times []time.Duration
	var last localrun.Answer
	for range runs {
		t0 := time.Now()
		a, err := srv.Call(q.tool, q.args)
		times = append(times, time.Since(t0))
		if err != nil {
			return err
		}
		if !a.OK {
			return fmt.Errorf("%s %s: %s", a.Code, a.Error, q.args)
		}
		last = a
	}
	p50, p99 := latency.Percentile(times, 50), latency.Percentile(times, 99)
	rgCol, ratio, counts := "-", "-", "-"
	if q.rg != nil {
		rg, lines, err := ripgrep.Run(tree, runs, q.rg...)
		if err != nil {
			return err
		}
		n, err := q.count(last.Result)
		if err != nil {
			return err
		}
		rgCol, ratio, counts = latency.Ms(rg), fmt.Sprintf("%.2fx", float64(p50)/float64(rg)), fmt.Sprintf("%d/%d", n, lines)
	}
	fmt.Printf("%-36s %9s %9s %9d %9s %7s %10s\n", q.name, latency.Ms(p50), latency.Ms(p99), len(last.Result), rgCol, ratio, counts)
	return nil
}

// waitIndexes waits until find_symbols' table and context_search's code
// index of the tree are ready: the first build takes both cores, and a
// query measured during it measures the build.
func waitIndexes(srv *localrun.Server) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		a, err := srv.Call("find_symbols", map[string]any{"name": "main"})
		var out struct {
			Index struct{ State string } `json:"index"`
		}
		if err == nil && a.OK && json.Unmarshal(a.Result, &out) == nil && out.Index.State == "ready" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("find_symbols' index is not ready after 5 minutes\n%s", srv.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, err := srv.WaitIndexed(200*time.Millisecond, time.Until(deadline))
	return err
}
