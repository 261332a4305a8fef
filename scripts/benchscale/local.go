package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
)

// queries are context_search's questions in every benchmark: what an
// agent asks about code in Go and Python.
var queries = []string{
	"parse http request headers",
	"read a file into memory",
	"decode json into a struct",
	"wrap an error with context",
	"compress data with gzip",
	"sort a slice of strings",
	"verify a TLS certificate chain",
	"normalize a unicode string",
	"open a database connection",
	"parse command line flags",
}

// contextSearchArgs are context_search's arguments for a query.
func contextSearchArgs(q string) map[string]any { return map[string]any{"query": q, "limit": 5} }

// Workload of the local part: runs per grep class (p50), rounds of every
// context_search query (p50, p99), and how long the idle CPU time is
// measured after the index is ready.
type workload struct {
	grepRuns, searchRounds int
	idle                   time.Duration
}

// localRow is what the local part measures of one tree.
type localRow struct {
	size                     string
	t                        tree
	load                     string        // the machine's 1-minute load average when the row started
	indexed                  int           // files the code index holds when ready
	ready                    time.Duration // start to every code index ready
	rssReady, rssAfter, peak int64
	idleCPU                  time.Duration
	greps                    []ripgrep.Comparison
	searchP50, searchP99     time.Duration
	searchErrors             int // context_search calls that failed
}

// measureLocal runs the local server on the tree and measures it: the
// time to a ready code index, memory then, the CPU time it burns idle
// after, grep next to ripgrep for every class, context_search's latency,
// and memory after those and at its peak.
func measureLocal(bin, size string, t tree, w workload) (localRow, error) {
	r := localRow{size: size, t: t, load: loadAverage()}
	data, err := os.MkdirTemp("", "benchscale-data-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(data)
	srv, err := localrun.Start(localrun.Options{Bin: bin, Repo: t.dir, Data: filepath.Join(data, "data"),
		Unlimited: []string{"grep_codebase", "context_search", "read_file"}})
	if err != nil {
		return r, err
	}
	defer srv.Stop()
	indexes, err := srv.WaitIndexed(200*time.Millisecond, time.Hour)
	if err != nil {
		return r, err
	}
	r.ready = time.Since(srv.Started)
	for _, ix := range indexes {
		r.indexed += ix.FilesIndexed
	}
	pid := srv.Pid()
	atReady, err := procstat.Sample(pid)
	if err != nil {
		return r, err
	}
	r.rssReady = atReady.RSS
	time.Sleep(w.idle)
	afterIdle, err := procstat.Sample(pid)
	if err != nil {
		return r, err
	}
	r.idleCPU = afterIdle.CPU - atReady.CPU

	for _, c := range ripgrep.Classes {
		cmp, err := ripgrep.Compare(t.dir, c, w.grepRuns, srv.Grep)
		if err != nil {
			return r, fmt.Errorf("grep on the %s tree: %w", size, err)
		}
		r.greps = append(r.greps, cmp)
	}
	if err := measureSearch(srv, size, w, &r); err != nil {
		return r, err
	}
	if r.rssAfter, err = procstat.RSS(pid); err != nil {
		return r, err
	}
	r.peak, err = procstat.PeakRSS(pid)
	return r, err
}

// measureSearch times w's rounds of context_search queries on srv into r.
func measureSearch(srv *localrun.Server, size string, w workload, r *localRow) error {
	var times []time.Duration
	for range w.searchRounds {
		for _, q := range queries {
			t0 := time.Now()
			a, err := srv.Call("context_search", contextSearchArgs(q))
			times = append(times, time.Since(t0))
			if err != nil {
				return fmt.Errorf("context_search on the %s tree: %w", size, err)
			}
			if !a.OK {
				r.searchErrors++
			}
		}
	}
	r.searchP50, r.searchP99 = latency.Percentile(times, 50), latency.Percentile(times, 99)
	return nil
}

// grepSummary is the median over the classes of the tool's and rg's p50,
// and the range of their ratios.
func grepSummary(cmps []ripgrep.Comparison) (tool, rg time.Duration, lo, hi float64) {
	var tools, rgs []time.Duration
	var ratios []float64
	for _, c := range cmps {
		tools, rgs, ratios = append(tools, c.Tool), append(rgs, c.RG), append(ratios, c.Ratio())
	}
	if len(cmps) == 0 {
		return 0, 0, 0, 0
	}
	return latency.Percentile(tools, 50), latency.Percentile(rgs, 50), slices.Min(ratios), slices.Max(ratios)
}
