// Command benchscale (make bench-scale) measures Toolshed on repositories
// of growing size built from real code on this machine — the Go tree, the
// Go module cache, Python's standard library when installed — each a git
// repository of 1k, 10k, 30k or 100k files in a folder of its own:
//
//   - locally, the local server (make run's binary) serving the tree: the
//     time until its code index is ready (files/s), its memory then, after
//     a few greps and context_searches, and at its peak, the CPU time it
//     burns idle after ready, grep_codebase next to ripgrep on the same
//     tree and patterns, and context_search's latency;
//   - through the Lambda harness (shared/testenv/deploytest: the real
//     bootstraps, dynalite, moto_server), the tree pushed with
//     scripts/snapshot, indexed by the indexer on the snapshot's S3 event,
//     the time until the index is searchable by words and, apart, until
//     it is fully embedded (Titan V2's stand-in under the assumed default
//     quota, waited for at most -embed-within), and grep_codebase,
//     context_search and read_file called cold and
//     warm, each against its function's memory setting and contract
//     deadline.
//
// It prints one aligned table per part, one row per size (and per tool),
// whitespace-separated with "-" for nothing, so that runs on different
// commits can be compared line by line. Rows print as they are measured;
// a size that fails prints its problem and the run goes on.
//
//	make bench-scale                                  (every size, both parts)
//	go run ./scripts/benchscale -sizes 1k,10k -harness=false
//	go run ./scripts/benchscale -sizes 10k -local=false -trees /tmp/trees
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
	"github.com/toolshed/toolshed/shared/testenv/standalone"
)

func main() {
	sizes := flag.String("sizes", "1k,10k,30k,100k", "tree sizes in files, comma-separated (k = 1,000)")
	local := flag.Bool("local", true, "measure the local server")
	harness := flag.Bool("harness", true, "measure the tree through the Lambda harness")
	trees := flag.String("trees", "", "folder to build the trees in and keep them, reused by later runs (default: a temporary folder, removed)")
	grepRuns := flag.Int("grep-runs", 11, "local: runs of each grep class (p50)")
	searchRounds := flag.Int("search-rounds", 5, "local: rounds of the 10 context_search queries (p50, p99)")
	idle := flag.Duration("idle", 10*time.Second, "local: how long idle CPU is measured after the index is ready")
	calls := flag.Int("calls", 20, "harness: warm calls per tool")
	embedWithin := flag.Duration("embed-within", 10*time.Minute, "harness: how long to wait for a tree to be fully embedded once searchable by words (0: index by words only)")
	flag.Parse()
	ns, err := parseSizes(*sizes)
	if err == nil {
		err = run(ns, *local, *harness, *trees, workload{*grepRuns, *searchRounds, *idle}, harnessOptions{*calls, *embedWithin})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

// size is a tree size: its name as given ("10k") and its files.
type size struct {
	name  string
	files int
}

// parseSizes reads "1k,10k,30k,100k": whole numbers of files, with k for
// thousands.
func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		digits, mult := f, 1
		if d, ok := strings.CutSuffix(strings.ToLower(f), "k"); ok {
			digits, mult = d, 1000
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-sizes: %q is not a number of files such as 500 or 10k", f)
		}
		out = append(out, size{name: strings.ToLower(f), files: n * mult})
	}
	return out, nil
}

func run(sizes []size, local, harness bool, treesDir string, w workload, ho harnessOptions) error {
	if !local && !harness {
		return errors.New("nothing to measure: -local=false and -harness=false")
	}
	if err := ripgrep.Installed(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "benchscale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if treesDir == "" {
		treesDir = filepath.Join(work, "trees")
	}
	srcs, err := sources()
	if err != nil {
		return err
	}
	cands, err := pool(srcs)
	if err != nil {
		return err
	}
	printHeader(srcs, cands)
	trees := map[string]tree{}
	for _, s := range sizes {
		t0 := time.Now()
		t, err := buildTree(filepath.Join(treesDir, "tree-"+s.name), cands, s.files)
		if err != nil {
			return fmt.Errorf("build the %s tree: %w", s.name, err)
		}
		trees[s.name] = t
		fmt.Fprintf(os.Stderr, "bench-scale: %s tree: %d files, %s MB, %d copies of the pool, in %s (%s)\n",
			s.name, t.files, mb(t.bytes), t.copies, t.dir, time.Since(t0).Round(time.Second))
	}
	if local {
		if err := runLocal(sizes, trees, work, w); err != nil {
			return err
		}
	}
	if harness {
		return standalone.RunStderr(func(tb testing.TB) error { return runHarness(tb, sizes, trees, work, ho) })
	}
	return nil
}

// printHeader says what machine and code are measured, and what the trees
// are built from.
func printHeader(srcs []source, cands []candidate) {
	var total int64
	for _, c := range cands {
		total += c.size
	}
	fmt.Printf("bench-scale: %d CPUs, %s %s/%s, %s, commit %s, load %s\n",
		runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, ripgrep.Version(), commit(), loadAverage())
	var roots []string
	for _, s := range srcs {
		roots = append(roots, s.root)
	}
	fmt.Printf("trees from %s: a pool of %d files (%s MB), taken evenly spread, in copies when a size exceeds it\n\n",
		strings.Join(roots, ", "), len(cands), mb(total))
}

// runLocal measures every tree on the local server and prints the local
// table, then grep by class.
func runLocal(sizes []size, trees map[string]tree, work string, w workload) error {
	bin, err := localrun.Build(work)
	if err != nil {
		return err
	}
	fmt.Printf("local server (make run's binary, %s idle after ready; grep %d runs per class; context_search %d rounds of %d queries):\n",
		w.idle, w.grepRuns, w.searchRounds, len(queries))
	fmt.Printf("%-6s %8s %9s %8s %7s %11s %9s %9s %8s %10s %9s %9s %11s %9s %9s %6s\n",
		"size", "files", "source_mb", "indexed", "ready_s", "files_per_s", "rss_ready", "rss_after", "rss_peak",
		"idle_cpu_s", "grep_p50", "rg_p50", "grep_vs_rg", "cs_p50", "cs_p99", "load")
	var rows []localRow
	for _, s := range sizes {
		r, err := measureLocal(bin, s.name, trees[s.name], w)
		if err != nil {
			fmt.Printf("%-6s problem: %v\n", s.name, err)
			continue
		}
		rows = append(rows, r)
		tool, rg, lo, hi := grepSummary(r.greps)
		searchP50 := latency.Ms(r.searchP50)
		if r.searchErrors > 0 {
			searchP50 += fmt.Sprintf("(%d_failed)", r.searchErrors)
		}
		fmt.Printf("%-6s %8d %9s %8d %7.1f %11.0f %9s %9s %8s %10.2f %9s %9s %11s %9s %9s %6s\n",
			r.size, r.t.files, mb(r.t.bytes), r.indexed, r.ready.Seconds(), float64(r.indexed)/r.ready.Seconds(),
			mb(r.rssReady), mb(r.rssAfter), mb(r.peak), r.idleCPU.Seconds(),
			latency.Ms(tool), latency.Ms(rg), fmt.Sprintf("%.2f-%.2f", lo, hi), searchP50, latency.Ms(r.searchP99), r.load)
	}
	fmt.Println("(memory in MB; times in ms unless named _s; grep_p50 and rg_p50: the median of the classes' p50s; grep_vs_rg: the range of their ratios)")
	fmt.Printf("\nlocal grep by class:\n%-6s %-16s %-22s %9s %9s %6s %10s %10s\n",
		"size", "class", "pattern", "grep_p50", "rg_p50", "ratio", "grep_count", "rg_count")
	for _, r := range rows {
		for _, c := range r.greps {
			fmt.Printf("%-6s %-16s %-22q %9s %9s %6.2f %10d %10d\n", r.size, strings.ReplaceAll(c.Class.Name, " ", "_"),
				c.Class.Pattern, latency.Ms(c.Tool), latency.Ms(c.RG), c.Ratio(), c.ToolCount, c.RGCount)
		}
	}
	fmt.Println()
	return nil
}

// runHarness pushes, indexes and searches every tree through the Lambda
// harness and prints its two tables.
func runHarness(tb testing.TB, sizes []size, trees map[string]tree, work string, ho harnessOptions) error {
	h, err := newHarness(tb, filepath.Join(work, "bootstraps"), ho)
	if err != nil {
		return err
	}
	calls := ho.calls
	fmt.Printf("Lambda harness (real bootstraps, dynalite, moto_server; memory reported, not enforced): push and index\n")
	fmt.Printf("%-6s %8s %9s %7s %7s %9s %10s %11s %10s %10s %8s %6s  %s\n",
		"size", "files", "source_mb", "zip_mb", "push_s", "lexical_s", "embedded_s", "index_cpu_s", "index_peak", "index_mem", "chunks", "load", "problem")
	var indexed []size
	for _, s := range sizes {
		r := h.publish(s.name, trees[s.name])
		fmt.Printf("%-6s %8d %9s %7s %7.1f %9.1f %10s %11.1f %10s %10d %8s %6s  %s\n",
			r.size, r.t.files, mb(r.t.bytes), mb(r.zip), r.push.Seconds(), r.index.Seconds(), r.embedded, r.cpu.Seconds(),
			mb(r.peak), deploytest.IndexerMemoryMB, r.chunks, r.load, orDash(indexVerdict(r)))
		if r.problem == "" {
			indexed = append(indexed, s)
		}
	}
	fmt.Printf("\nLambda harness: tools, cold (a fresh function's init and first call, through the gateway) and warm (%d calls)\n", calls)
	fmt.Printf("%-6s %-15s %6s %11s %7s %8s %10s %8s %8s %7s  %s\n",
		"size", "tool", "mem_mb", "deadline_ms", "init", "cold", "cold_cpu_s", "warm_p50", "warm_max", "peak", "problem")
	for _, s := range indexed {
		for _, tool := range harnessTools {
			r := h.measureTool(s.name, tool, trees[s.name])
			fmt.Printf("%-6s %-15s %6d %11d %7s %8s %10.2f %8s %8s %7s  %s\n",
				r.size, r.tool, r.memoryMB, r.deadline.Milliseconds(), latency.Ms(r.init), latency.Ms(r.cold), r.coldCPU.Seconds(),
				latency.Ms(r.warmP50), latency.Ms(r.warmMax), mb(r.peak), orDash(toolVerdict(r)))
		}
	}
	fmt.Println("(memory in MB; times in ms unless named _s; lexical_s: push to searchable by words; embedded_s: to fully embedded, \">N\" not within N s with the part done then, \"-\" not embedded; OVER marks a cold call past its deadline or a peak past the function's memory)")
	return nil
}

// indexVerdict is a push row's problems: what failed, and the indexer's
// peak past its memory setting.
func indexVerdict(r pushRow) string {
	var out []string
	if r.peak > deploytest.IndexerMemoryMB<<20 {
		out = append(out, "OVER_memory")
	}
	if r.problem != "" {
		out = append(out, r.problem)
	}
	return strings.Join(out, " ")
}

// toolVerdict is a tool row's problems: failed calls, and what exceeded
// the function's deadline or memory.
func toolVerdict(r toolRow) string {
	var out []string
	if r.cold > r.deadline {
		out = append(out, "OVER_deadline_cold")
	}
	if r.peak > int64(r.memoryMB)<<20 {
		out = append(out, "OVER_memory")
	}
	if r.problem != "" {
		out = append(out, r.problem)
	}
	return strings.Join(out, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// mb is bytes in MB with one decimal.
func mb(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) }

// loadAverage is the machine's 1-minute load average, or "-".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "-"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "-"
	}
	return f[0]
}

// commit is the working tree's commit (git describe), or "-".
func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "-"
	}
	return strings.TrimSpace(string(out))
}
