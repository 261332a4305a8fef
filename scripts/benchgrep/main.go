// Command benchgrep measures grep_codebase against ripgrep on real code:
// the Go source tree ($(go env GOROOT)/src) and a 5,000-file subset of it.
// For each query class it runs the tool and `rg` on the same files, prints
// both p50 times, the ratio and both match counts, and fails when a count
// differs. The tool is measured two ways:
//
//   - as a client of `make run` sees it: the local server (the gateway
//     binary, built here) serving the tree, called over HTTP on
//     /v1/tools/grep_codebase; this path must take at most half of
//     ripgrep's time for every class, and the server's peak memory
//     (VmHWM) holding the tree's view is printed;
//   - in process over a held zip snapshot (what a Lambda does), through
//     the real pipeline.
//
// It also measures read_file's warm p50, the time to open the 5k subset's
// snapshot from S3 (moto_server, on this machine) and the process's peak
// memory holding it.
//
//	make bench-grep          (installs ripgrep when missing)
//	go run ./scripts/benchgrep [-runs 21] [-root DIR]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
	"github.com/toolshed/toolshed/shared/testenv/standalone"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/grep"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
	"github.com/toolshed/toolshed/shared/wiring"
)

func main() {
	runs := flag.Int("runs", 21, "runs per query (the p50 is reported)")
	root := flag.String("root", filepath.Join(runtime.GOROOT(), "src"), "the corpus")
	subset := flag.Int("subset", 5000, "files in the subset")
	s3Child := flag.String("s3-open", "", "internal: open DIR's snapshot from S3 in this process and report time and peak memory")
	flag.Parse()
	if *s3Child != "" {
		if err := s3Open(*s3Child); err != nil {
			fmt.Fprintln(os.Stderr, "benchgrep:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*root, *subset, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "benchgrep:", err)
		os.Exit(1)
	}
}

func run(root string, subsetSize, runs int) error {
	if err := ripgrep.Installed(); err != nil {
		return fmt.Errorf("%w (make bench-grep does)", err)
	}
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s; %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), ripgrep.Version())

	fullSnap, err := repo.NewLocal(root, repo.LocalOptions{})
	if err != nil {
		return err
	}
	defer fullSnap.Close()
	fullFiles, err := fullSnap.Searchable(context.Background())
	if err != nil {
		return err
	}
	subDir, err := os.MkdirTemp("", "benchgrep-subset-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(subDir)
	if err := writeSubset(subDir, fullFiles, subsetSize); err != nil {
		return err
	}

	// Opening from S3 and the memory it takes are measured in a process of
	// their own, as a Lambda holds one snapshot.
	child := exec.Command(os.Args[0], "-s3-open", subDir)
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Run(); err != nil {
		return fmt.Errorf("S3 open: %w", err)
	}

	ok, err := compareAll(root, subDir, subsetSize, fullFiles, runs)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("match counts differ from ripgrep, or the local server missed its target")
	}
	return nil
}

// compareAll compares the tool with rg on the local server serving root,
// on a zip snapshot of the subset in subDir (and times read_file there),
// and on a zip snapshot of root's files. It reports whether every
// comparison passed; all of them run either way.
func compareAll(root, subDir string, subsetSize int, fullFiles []*repo.File, runs int) (bool, error) {
	serverOK, err := compareServer(root, runs)
	if err != nil {
		return false, err
	}
	subSnap, err := zipSnapshot(subDir, nil)
	if err != nil {
		return false, err
	}
	subsetOK, err := compare(fmt.Sprintf("%d-file subset of %s", subsetSize, root), subDir, subSnap, runs)
	if err != nil {
		return false, err
	}
	if err := readFileP50(subDir, runs*50); err != nil {
		return false, err
	}
	fullZip, err := zipSnapshot(root, fullFiles)
	if err != nil {
		return false, err
	}
	fullOK, err := compare(root, root, fullZip, runs)
	if err != nil {
		return false, err
	}
	return serverOK && subsetOK && fullOK, nil
}

// serverTarget is the local server's time at most, as a share of rg's.
const serverTarget = 0.5

// compareServer builds the gateway binary, runs it as the local server
// serving root (as `make run -repo root` does), waits for its view, and
// compares every class called over HTTP on /v1 with rg. It reports
// whether the counts agree and every class met serverTarget.
func compareServer(root string, runs int) (bool, error) {
	tmp, err := os.MkdirTemp("", "benchgrep-server-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	bin, err := localrun.Build(tmp)
	if err != nil {
		return false, err
	}
	srv, err := localrun.Start(localrun.Options{Bin: bin, Repo: root, Data: filepath.Join(tmp, "data"),
		Unlimited: []string{"grep_codebase", "context_search"}})
	if err != nil {
		return false, err
	}
	defer srv.Stop()
	first, ready, err := waitReady(srv)
	if err != nil {
		return false, err
	}
	fmt.Printf("%s through the local server (%s, /v1/tools/%s over HTTP, as a client of make run), %d runs per query, warm;\n"+
		"first grep answer %s after start, measured once context_search's index was ready (%s after start):\n",
		root, srv.Addr, grep.Tool, runs, ms(first), ms(ready))
	printHeader("/v1 p50")
	ok := true
	for _, c := range ripgrep.Classes {
		cmp, err := ripgrep.Compare(root, c, runs, srv.Grep)
		if err != nil {
			return false, err
		}
		mark := ""
		if cmp.ToolCount != cmp.RGCount {
			mark, ok = "  COUNTS DIFFER", false
		}
		if cmp.Ratio() > serverTarget {
			mark, ok = mark+fmt.Sprintf("  OVER %.2fx", serverTarget), false
		}
		printRow(cmp, mark)
	}
	hwm, err := procstat.PeakRSS(srv.Pid())
	if err != nil {
		return false, err
	}
	fmt.Printf("  local server peak memory (VmHWM) holding the view (and building context_search's index): %d MB\n\n", hwm>>20)
	return ok, nil
}

// waitReady waits for the server's first grep answer (after the view's
// first walk), then for context_search's index of the tree (built in the
// background from the start), so that the server is measured at rest, as
// a user's steady state, and rg gets the machine's cores as the server
// does. It returns how long after the start each came.
func waitReady(srv *localrun.Server) (first, ready time.Duration, err error) {
	for {
		_, err := srv.Grep(ripgrep.Classes[0])
		if err == nil {
			break
		}
		if time.Since(srv.Started) > 2*time.Minute {
			return 0, 0, fmt.Errorf("the local server did not answer: %v\n%s", err, srv.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	first = time.Since(srv.Started)
	if _, err := srv.WaitIndexed(time.Second, 10*time.Minute); err != nil {
		return 0, 0, err
	}
	return first, time.Since(srv.Started), nil
}

// printHeader prints the head of a comparison table whose tool column is
// toolColumn.
func printHeader(toolColumn string) {
	fmt.Printf("  %-16s %-22s %10s %10s %7s %10s %10s\n", "class", "pattern", toolColumn, "rg p50", "ratio", "tool count", "rg count")
}

// printRow prints a class's row of a comparison table: the tool's and
// rg's p50, their ratio and counts, and mark.
func printRow(c ripgrep.Comparison, mark string) {
	fmt.Printf("  %-16s %-22q %10s %10s %6.2fx %10d %10d%s\n", c.Class.Name, c.Class.Pattern, ms(c.Tool), ms(c.RG), c.Ratio(), c.ToolCount, c.RGCount, mark)
}

// writeSubset copies the first n searchable files (walk order) of the tree.
func writeSubset(dir string, files []*repo.File, n int) error {
	for _, f := range files[:min(n, len(files))] {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		// Data has no BOM; no file of the Go tree starts with one.
		if err := os.WriteFile(p, f.Content(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// s3Open publishes dir to a moto_server bucket and times opening it the
// way a Lambda does: the pointer and the zip, then the searchable files
// decompressed and indexed by a first search; then it searches every class
// once and reports the process's peak memory.
func s3Open(dir string) error {
	return standalone.RunStderr(func(tb testing.TB) error { return s3OpenOnce(tb, dir) })
}

func s3OpenOnce(tb testing.TB, dir string) error {
	s3 := repotest.StartS3(tb)
	p := s3.Publish(tb, "bench", "subset", dir)
	runtime.GC()
	src := s3.Source(repo.S3Options{})
	t0 := time.Now()
	snap, err := src.Open(context.Background(), reposcope.DefaultOf("bench"))
	if err != nil {
		return err
	}
	t1 := time.Now()
	tools, err := pipeline(grep.Tools(src, githistory.Revisions{}))
	if err != nil {
		return err
	}
	first := invoke(tools, ripgrep.Classes[0])
	t2 := time.Now()
	if first.Error != nil {
		return fmt.Errorf("first search: %+v", first.Error)
	}
	for _, c := range ripgrep.Classes {
		if out := invoke(tools, c); !out.OK {
			return fmt.Errorf("%s: %+v", c.Name, out.Error)
		}
	}
	files, _ := snap.Searchable(context.Background())
	fmt.Printf("S3 open of the %d-file subset (%d MB of files, zip %d MB; moto_server on loopback, this machine):\n", p.Files, p.Bytes>>20, p.ZipBytes>>20)
	fmt.Printf("  pointer + zip download %s; first search (decompress, fold, trigram filters of %d searchable files) %s\n",
		ms(t1.Sub(t0)), len(files), ms(t2.Sub(t1)))
	fmt.Printf("  peak memory (VmHWM) of the process holding it after a search of every class: %s\n\n", peakMemory())
	return nil
}

// zipSnapshot packs files of root into memory and opens the zip, as the
// S3 source holds a snapshot.
func zipSnapshot(root string, files []*repo.File) (repo.View, error) {
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if files == nil {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				paths = append(paths, filepath.ToSlash(rel))
			}
			return err
		})
	}
	var buf bytes.Buffer
	if _, err := repo.Pack(&buf, root, paths, 1<<40); err != nil {
		return nil, err
	}
	snap, err := repo.OpenZip(buf.Bytes(), "bench", nil)
	if err != nil {
		return nil, err
	}
	_, err = snap.Searchable(context.Background())
	return snap, err
}

// compare runs every class on the tool and on rg and prints a table.
func compare(title, dir string, snap repo.View, runs int) (bool, error) {
	p, err := pipeline(grep.Tools(repo.Shared{View: snap}, githistory.Revisions{}))
	if err != nil {
		return false, err
	}
	files, _ := snap.Searchable(context.Background())
	fmt.Printf("%s: %d searchable files, %d runs per query, warm\n", title, len(files), runs)
	printHeader("tool p50")
	same := true
	for _, c := range ripgrep.Classes {
		cmp, err := ripgrep.Compare(dir, c, runs, func(c ripgrep.Class) (int, error) {
			out := invoke(p, c)
			if !out.OK {
				return 0, fmt.Errorf("%+v", out.Error)
			}
			return ripgrep.TotalMatches(out.Result)
		})
		if err != nil {
			return false, err
		}
		mark := ""
		if cmp.ToolCount != cmp.RGCount {
			mark, same = "  COUNTS DIFFER", false
		}
		printRow(cmp, mark)
	}
	fmt.Println()
	return same, nil
}

// readFileP50 times read_file without dependencies on the subset's local
// directory: with each read counted in the embedded store (bolt, which
// syncs to disk), and with an access store that only counts in memory, to
// show the read on its own.
func readFileP50(dir string, runs int) error {
	local, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		return err
	}
	defer local.Close()
	src := repo.Shared{View: local}
	tmp, err := os.MkdirTemp("", "benchgrep-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := boltstore.Open(filepath.Join(tmp, "b.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	st := db.Stores()
	var target string
	fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if target == "" && err == nil && strings.HasSuffix(p, ".go") {
			target = p
		}
		return nil
	})
	args, _ := json.Marshal(map[string]any{"path": target})
	for _, access := range []struct {
		name  string
		store store.Access
	}{{"access counted in bolt", st.Access}, {"access counted in memory", &memoryAccess{}}} {
		p, err := pipeline(repofiles.Tools(src, githistory.Revisions{}, st.Memory, access.store, nil))
		if err != nil {
			return err
		}
		var times []time.Duration
		for range runs {
			t0 := time.Now()
			out := p.Invoke(context.Background(), toolkit.Request{Tool: repofiles.ReadFileTool, Args: args, Tenant: "bench", RequestID: "bench"})
			times = append(times, time.Since(t0))
			if !out.OK {
				return fmt.Errorf("read_file: %+v", out.Error)
			}
		}
		fmt.Printf("read_file %s (no deps, local directory, %s): p50 %s over %d calls\n", target, access.name, ms(latency.Percentile(times, 50)), runs)
	}
	fmt.Println()
	return nil
}

// memoryAccess counts reads in memory: read_file's cost without a store.
type memoryAccess struct {
	mu sync.Mutex
	n  map[string]int64
}

func (m *memoryAccess) Record(_ context.Context, tenant, path string, at time.Time) (store.AccessStat, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == nil {
		m.n = map[string]int64{}
	}
	m.n[tenant+"/"+path]++
	return store.AccessStat{Tenant: tenant, Path: path, Count: m.n[tenant+"/"+path], LastAccess: at}, nil
}

func (m *memoryAccess) Get(context.Context, string, string) (store.AccessStat, error) {
	return store.AccessStat{}, store.ErrNotFound
}

// invoke runs grep_codebase for a class.
func invoke(p *toolkit.Pipeline, c ripgrep.Class) toolkit.Outcome {
	args, _ := json.Marshal(c.Args())
	return p.Invoke(context.Background(), toolkit.Request{Tool: grep.Tool, Args: args, Tenant: "bench", RequestID: "bench"})
}

func pipeline(tools []toolkit.Tool) (*toolkit.Pipeline, error) {
	limits := map[string]int{}
	for _, t := range tools {
		limits[t.Name] = 1 << 30
	}
	return wiring.Pipeline(tools, wiring.PipelineOptions{RateLimits: limits, Log: slog.New(slog.DiscardHandler)})
}

func ms(d time.Duration) string { return latency.Ms(d) + " ms" }

func peakMemory() string {
	n, err := procstat.PeakRSS(os.Getpid())
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d kB", n>>10)
}
