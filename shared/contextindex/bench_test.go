package contextindex

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
)

// benchCorpus indexes the first n chunks (or a few more) of the Go source
// tree's non-test files (real code), with random unit vectors of dims dimensions
// when dims > 0 (the vectors' values do not change the cost of a search).
func benchCorpus(b *testing.B, n, dims int) (*Corpus, [][]float32) {
	b.Helper()
	root := filepath.Join(runtime.GOROOT(), "src")
	var files []File
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, File{Path: filepath.ToSlash(rel)})
		}
		return nil
	})
	var parts []Part
	chunks := 0
	for start := 0; chunks < n && start < len(files); start += 200 {
		ix, _, err := BuildCode(b.Context(), nil, Snapshot{FS: os.DirFS(root), Files: files[start:min(start+200, len(files))]}, nil, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, Part{Seg: ix.Segment})
		chunks += ix.Segment.Len()
	}
	seg := MergeSegments(parts)
	var queries [][]float32
	var vecs *Vectors
	if dims > 0 {
		r := rand.New(rand.NewPCG(1, 2))
		random := func() []float32 {
			v := make([]float32, dims)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			return v
		}
		vecs = NewVectors("bench")
		for _, h := range seg.hashes() {
			vecs.Add(h, random())
		}
		for range 16 {
			v, _ := unit(random())
			queries = append(queries, v)
		}
	}
	return NewCorpus("bench", []*Segment{seg}, vecs), queries
}

var benchQueries = []string{
	"parse HTTP request headers", "read a file into memory", "mutex lock unlock",
	"sort a slice of strings", "compress data with deflate", "format a time as RFC 3339",
	"UTF-8 decode rune", "JSON encoder", "context cancellation deadline", "big integer multiplication",
	"how does the garbage collector work", "error wrapping", "tls handshake certificate",
	"base64 encoding", "buffered reader", "regexp compile",
}

// benchSearch runs queries and reports p50 and p99 latency in ms.
func benchSearch(b *testing.B, c *Corpus, vecs [][]float32) {
	var times []time.Duration
	i := 0
	for b.Loop() {
		q := Query{Text: benchQueries[i%len(benchQueries)], Limit: 5}
		if vecs != nil {
			q.Vector = vecs[i%len(vecs)]
		}
		start := time.Now()
		c.Search(q)
		times = append(times, time.Since(start))
		i++
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*99/100]), "p99-ms")
}

// BenchmarkSearch20k: p50/p99 of a search over 20,000 code chunks,
// lexical and hybrid (512-dimension vectors; the query embedding is not
// timed).
func BenchmarkSearch20k(b *testing.B) {
	b.Run("lexical", func(b *testing.B) {
		c, _ := benchCorpus(b, 20000, 0)
		b.ResetTimer()
		benchSearch(b, c, nil)
	})
	b.Run("hybrid", func(b *testing.B) {
		c, vecs := benchCorpus(b, 20000, 512)
		if c.Vectors() != c.Len() {
			b.Fatalf("%d of %d chunks have vectors", c.Vectors(), c.Len())
		}
		b.ResetTimer()
		benchSearch(b, c, vecs)
	})
}

// BenchmarkSearchGoTree: p50/p99 of a lexical search of the whole Go
// source tree as the local server indexes it (repository view, live
// index), 20 results asked.
func BenchmarkSearchGoTree(b *testing.B) {
	view, err := repo.NewLocal(filepath.Join(runtime.GOROOT(), "src"), repo.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer view.Close()
	l := NewLive(view, LiveOptions{})
	defer l.Close()
	l.Settle()
	c := NewPartsCorpus("", l.State().Parts)
	b.Logf("%d chunks", c.Len())
	var times []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		c.Search(Query{Text: benchQueries[i%len(benchQueries)], Limit: 20})
		times = append(times, time.Since(start))
		i++
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*99/100]), "p99-ms")
}

// BenchmarkBuildGoTree: BuildCode over the Go source tree's searchable
// files (read beforehand), on one core and on every core: files per
// second (wall), CPU time per build (steadier than wall time on a shared
// machine), and the stored index's size.
func BenchmarkBuildGoTree(b *testing.B) {
	view, err := repo.NewLocal(filepath.Join(runtime.GOROOT(), "src"), repo.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer view.Close()
	files, err := view.Searchable(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	snap := Snapshot{FS: view}
	for _, f := range files {
		snap.Files = append(snap.Files, File{Path: f.Path, Content: f.Content(), ModTime: f.ModTime})
	}
	for _, cores := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("cores=%d", cores), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cores))
			var ix *CodeIndex
			before, start := cpuTime(), time.Now()
			for b.Loop() {
				if ix, _, err = BuildCode(b.Context(), nil, snap, nil, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(snap.Files)*b.N)/time.Since(start).Seconds(), "files/s")
			b.ReportMetric((cpuTime()-before).Seconds()/float64(b.N), "cpu-s/op")
			stored, err := encode(ix)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(stored[ChunksFile])+len(stored[LexicalFile]))/1e6, "stored-MB")
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
