package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/scripts/benchnav/navcheck"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
)

// ambiguous are the names of the precise rows: methods (and functions
// and types) declared by many packages of the Go tree, whose textual
// references mix them all.
var ambiguous = []string{"Close", "Lock", "Unlock", "Get", "Set", "Context", "New", "Read", "Write", "String",
	"Error", "Len", "Less", "Swap", "Reset", "Next", "Add", "Run", "Flush", "Seek"}

// preciseOptions say what the precise rows measure.
type preciseOptions struct {
	on     bool
	sample navcheck.Sample
	five   bool   // index five copies of the tree too
	rxjs   string // the rxjs package (its src and tsconfig.json), "" for none
	// rxjsOnly compares rxjs's answers alone, without the Go tree.
	rxjsOnly bool
	node     string // node, for scip-typescript and the TypeScript language service
	runs     int    // calls of each ambiguous name's answers (p50)
}

// runPrecise prints the precise rows: the Go tree's index (time, memory,
// size, next to go/types' own load), the answers of the store and of the
// tools over it against go/types', the ambiguous names' textual and
// precise answers side by side, five copies of the tree (opt-in), and
// rxjs against the TypeScript language service.
func runPrecise(ctx context.Context, tb testing.TB, srv *localrun.Server, bin, tree, work string, o preciseOptions) error {
	fmt.Printf("\nprecise: go/types' answers on %s (%d uses, the symbols of %d, every method, function and type named %s)\n",
		tree, o.sample.Uses, o.sample.Symbols, strings.Join(ambiguous, ", "))
	start := time.Now()
	truth, err := navcheck.GoTruth(ctx, tree, o.sample)
	if err != nil {
		return err
	}
	typeCheck := time.Since(start)
	peak, _ := procstat.PeakRSS(os.Getpid())
	runtime.GC()
	debug.FreeOSMemory()
	runner := sciprun.Runner{GoIndexer: []string{bin, "index-go", "-tests", "-module-version", "bench"}}
	fmt.Printf("%-40s %8s %8s %8s %9s %9s %9s\n", "index", "time_s", "peak_MB", "scip_MB", "convert_s", "store_MB", "vs_types")
	fmt.Printf("%-40s %8.1f %8d %8s %9s %9s %9s\n", "go/types, every package in full (truth)", typeCheck.Seconds(), peak>>20, "-", "-", "-", "1.00x")
	stores, err := indexGo(ctx, runner, tree, filepath.Join(work, "go"), "Go tree (goscip, with tests; sciprun)", typeCheck)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	tools, r, err := compareGo(ctx, tb, tree, truth, stores)
	if err != nil {
		return err
	}
	if err := nameRows(ctx, srv, truth, tools, r, o.runs); err != nil {
		return err
	}
	if o.five {
		if err := fiveCopies(ctx, runner, tree, filepath.Join(work, "five"), typeCheck); err != nil {
			return err
		}
	}
	if o.rxjs != "" {
		return typeScript(ctx, tb, o, filepath.Join(work, "rxjs"))
	}
	return nil
}

// compareGo compares the store's answers on the Go tree with go/types',
// then the tools' (served over the tree and the stores), and prints
// both; it returns the tools and their result.
func compareGo(ctx context.Context, tb testing.TB, tree string, truth *navcheck.Truth, stores []*navcheck.Converted) (*navcheck.Tools, *navcheck.Result, error) {
	store, err := navcheck.NewStore(stores...)
	if err != nil {
		return nil, nil, err
	}
	r, err := compareWarm(ctx, truth, store)
	if err != nil {
		return nil, nil, err
	}
	report("Go tree vs go/types, the store", truth, r, nil)
	var served []precisetest.Index
	for _, s := range stores {
		served = append(served, s.Served("go", "goscip"))
	}
	tools := navcheck.Serve(tb, tree, served...)
	if r, err = compareWarm(ctx, truth, tools); err != nil {
		return nil, nil, err
	}
	report("Go tree vs go/types, the tools (find_definition, find_references)", truth, r, nil)
	searched(tools)
	return tools, r, nil
}

// searched prints how many of the tools' answers were made by search,
// and why: each is counted as no answer.
func searched(tools *navcheck.Tools) {
	search := tools.Search()
	for _, why := range sortedKeys(search) {
		fmt.Printf("  answered by search (counted as none): %d: %s\n", search[why], why)
	}
}

// indexGo indexes every Go project under dir as the local server does
// (sciprun, the server binary's index-go), converts each index into a
// store, opens them and prints their row.
func indexGo(ctx context.Context, runner sciprun.Runner, dir, work, label string, typeCheck time.Duration) ([]*navcheck.Converted, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	projects, err := sciprun.Projects(ctx, os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	var stores []*navcheck.Converted
	var took, convert time.Duration
	var peak, scipBytes, storeBytes int64
	for i, p := range projects {
		if p.Language != sciprun.Go {
			continue
		}
		scipFile := filepath.Join(work, fmt.Sprintf("go%d.scip", i))
		run, err := runner.Run(ctx, p, filepath.Join(dir, filepath.FromSlash(p.Root)), scipFile, sciprun.Limits{})
		if err != nil {
			return nil, fmt.Errorf("indexing %s: %w", p.Root, err)
		}
		c, err := navcheck.Convert(ctx, scipFile, work, nil)
		if err != nil {
			return nil, err
		}
		os.Remove(scipFile)
		stores = append(stores, c)
		took, convert = took+run.Duration, convert+c.Took
		peak, scipBytes, storeBytes = max(peak, run.PeakRSS), scipBytes+run.OutputBytes, storeBytes+c.Bytes
	}
	fmt.Printf("%-40s %8.1f %8d %8d %9.1f %9.1f %8.2fx\n", label, took.Seconds(), peak>>20, scipBytes>>20,
		convert.Seconds(), float64(storeBytes)/(1<<20), float64(took)/float64(typeCheck))
	return stores, nil
}

// fiveCopies indexes five copies of the tree (src1/ to src5/ of one
// repository, as the harness's scale test has them) and prints their row.
func fiveCopies(ctx context.Context, runner sciprun.Runner, tree, work string, typeCheck time.Duration) error {
	for i := 1; i <= 5; i++ {
		if err := os.CopyFS(filepath.Join(work, "repo", fmt.Sprintf("src%d", i)), os.DirFS(tree)); err != nil {
			return err
		}
	}
	// vs_types: against five type checks of the tree.
	stores, err := indexGo(ctx, runner, filepath.Join(work, "repo"), filepath.Join(work, "index"), "five copies of the Go tree", 5*typeCheck)
	for _, s := range stores {
		s.Close()
	}
	return err
}

// compareWarm compares twice and keeps the second: the first reads the
// stores from disk into the page cache, as the first calls after an
// index is made do.
func compareWarm(ctx context.Context, truth *navcheck.Truth, nav navcheck.Navigator) (*navcheck.Result, error) {
	if _, err := navcheck.Compare(ctx, truth, nav); err != nil {
		return nil, err
	}
	return navcheck.Compare(ctx, truth, nav)
}

// report prints a comparison: the figures, the acceptance, the share of
// each kind of symbol where it falls short, what the sample left out and
// a few mismatches. baseline, when not nil, is the compiler's own time
// per question.
func report(title string, truth *navcheck.Truth, r *navcheck.Result, baseline *navcheck.Truth) {
	fmt.Printf("\n%s: %s\n", title, r.Summary())
	p50 := max(latency.Percentile(r.DefinitionTimes, 50), latency.Percentile(r.ReferenceTimes, 50))
	met := r.Precision() >= 0.97 && r.Recall() >= 0.95 && r.DefinitionRate() >= 0.95 && p50 < 50*time.Millisecond
	fmt.Printf("  acceptance (precision ≥ 0.97, recall ≥ 0.95, definitions ≥ 0.95, p50 < 50 ms): %s\n", map[bool]string{true: "met", false: "NOT met"}[met])
	if baseline != nil {
		def, ref := latency.Percentile(baseline.DefinitionTimes, 50), latency.Percentile(baseline.ReferenceTimes, 50)
		fmt.Printf("  the compiler's own p50: definition %s ms (precise/compiler %.2fx), references %s ms (%.2fx)\n",
			latency.Ms(def), ratio(latency.Percentile(r.DefinitionTimes, 50), def),
			latency.Ms(ref), ratio(latency.Percentile(r.ReferenceTimes, 50), ref))
	}
	for _, kind := range sortedKeys(r.Kinds) {
		if k := r.Kinds[kind]; k.Precision() < 1 || k.Recall() < 1 {
			fmt.Printf("  %-16s %3d symbols: precision %.4f (%d/%d), recall %.4f (%d/%d)\n", kind, k.Symbols,
				k.Precision(), k.Matched, k.Answered, k.Recall(), k.Matched, k.TruthRefs)
		}
	}
	var left []string
	for _, why := range sortedKeys(truth.Excluded) {
		left = append(left, fmt.Sprintf("%s %d", why, truth.Excluded[why]))
	}
	fmt.Printf("  left out of the sample: %s; references outside the files compared: %d\n", strings.Join(left, ", "), r.Outside)
	const shown = 8
	for _, misses := range [][]string{r.DefinitionMisses, r.ReferenceMisses} {
		for i, m := range misses {
			if i == shown {
				fmt.Printf("  … %d more\n", len(misses)-shown)
				break
			}
			fmt.Println("  " + m)
		}
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
