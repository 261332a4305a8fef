package symbols_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/symbols"
)

// benchTree is the tree BenchmarkGoTree reads.
var benchTree = settings.New("TOOLSHED_BENCH_TREE", filepath.Join(runtime.GOROOT(), "src"),
	"the tree BenchmarkGoTree reads", settings.Text)

// BenchmarkGoTree builds the symbol table of a large tree (a git copy of
// the Go source tree: TOOLSHED_BENCH_TREE, default $(go env GOROOT)/src),
// logs its build time and memory, then times lookups of every kind and
// outlines of the largest files, reporting p50 and p99 of each.
//
//	go test -run '^$' -bench GoTree -benchtime 1x ./shared/symbols/
func BenchmarkGoTree(b *testing.B) {
	dir, _ := benchTree.Get(os.Getenv) // settings.Text takes any value
	view, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer view.Close()
	if _, err := view.Searchable(context.Background()); err != nil {
		b.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	started := time.Now()
	table := symbols.NewTable(view, nil, nil)
	defer table.Close()
	st := table.Build(context.Background(), 0)
	took := time.Since(started)
	b.Logf("%s: %d files, %d symbols: built in %v on %d cores, table heap %d MB",
		dir, st.Progress.FilesTotal, st.Progress.Symbols, took.Round(time.Millisecond), runtime.GOMAXPROCS(0), (heap()-before)>>20)

	queries := []symbols.Query{
		{Name: "ReadMIMEHeader", Match: symbols.Exact, CaseSensitive: true},
		{Name: "Reader", Match: symbols.Exact},
		{Name: "readmime", Match: symbols.Prefix},
		{Name: "New", Match: symbols.Prefix, CaseSensitive: true, Kinds: []symbols.Kind{symbols.Function}},
		{Name: "Header", Match: symbols.Substring},
		{Name: "mime", Match: symbols.Substring, Keep: func(p string) bool { return filepath.Dir(p) == "net/textproto" }},
	}
	var lookups, outlines []time.Duration
	paths := largest(st, view, 50)
	for b.Loop() {
		for _, q := range queries {
			t0 := time.Now()
			if _, err := st.Find(context.Background(), q); err != nil {
				b.Fatal(err)
			}
			lookups = append(lookups, time.Since(t0))
		}
		for _, p := range paths {
			t0 := time.Now()
			f := st.File(p)
			for _, s := range f.Symbols {
				f.Signature(s)
				f.Doc(s)
			}
			outlines = append(outlines, time.Since(t0))
		}
	}
	report(b, "lookup", lookups)
	report(b, "outline", outlines)
}

// largest returns the paths of the n largest files that have symbols.
func largest(st *symbols.State, view repo.View, n int) []string {
	files, _ := view.Searchable(context.Background())
	files = slices.DeleteFunc(slices.Clone(files), func(f *repo.File) bool { return st.File(f.Path) == nil })
	slices.SortFunc(files, func(a, b *repo.File) int { return b.Size() - a.Size() })
	var paths []string
	for _, f := range files[:min(n, len(files))] {
		paths = append(paths, f.Path)
	}
	return paths
}

// report logs and reports the p50 and p99 of durations.
func report(b *testing.B, what string, d []time.Duration) {
	slices.Sort(d)
	p50, p99 := d[len(d)/2], d[len(d)*99/100]
	b.Logf("%s: p50 %v, p99 %v (%d calls)", what, p50, p99, len(d))
	b.ReportMetric(float64(p50.Microseconds())/1000, what+"-p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, what+"-p99-ms")
}
