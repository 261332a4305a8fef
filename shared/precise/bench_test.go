package precise_test

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

// The benchmarks read $PRECISE_BENCH_SCIP if it is set (a large index
// made elsewhere: the Go tree's, or five copies of it), else scip-go's
// index of this repository's module (about 10 s and 2 GB to make, once
// per run).

// bench is what the benchmarks share, made once.
var bench struct {
	once  sync.Once
	scip  []byte
	store string // the store's file
	at    []position
	syms  []string // the symbols with the most occurrences first
}

type position struct {
	path      string
	line, col int
}

func benchSetup(b *testing.B) {
	bench.once.Do(func() {
		if p := os.Getenv("PRECISE_BENCH_SCIP"); p != "" {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			bench.scip = data
		} else {
			bench.scip = indexGo(b, filepath.Join("..", ".."))
		}
		bench.store = filepath.Join(tools, "bench.store")
		if err := os.WriteFile(bench.store, build(b, bench.scip, fromscip.Options{Commit: "c", SkipOutside: true}), 0o600); err != nil {
			b.Fatal(err)
		}
		bench.at, bench.syms = sample(b, bench.scip)
	})
	if bench.scip == nil {
		b.Fatal("no index to benchmark")
	}
}

// sample reads positions of global symbols' occurrences (every seventh,
// shuffled) and the symbols by their count of occurrences.
func sample(b *testing.B, data []byte) ([]position, []string) {
	var at []position
	counts := map[string]int{}
	n := 0
	v := scip.IndexVisitor{VisitDocument: func(_ context.Context, d *scip.Document) error {
		if !precise.ValidPath(d.RelativePath) {
			return nil // left out of the store (SkipOutside)
		}
		for _, o := range d.Occurrences {
			if len(o.Range) < 3 || o.Symbol == "" || strings.HasPrefix(o.Symbol, "local ") {
				continue
			}
			if counts[o.Symbol]++; n%7 == 0 {
				at = append(at, position{d.RelativePath, int(o.Range[0]) + 1, int(o.Range[1]) + 1})
			}
			n++
		}
		return nil
	}}
	if err := v.ParseStreaming(context.Background(), bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(at), func(i, j int) { at[i], at[j] = at[j], at[i] })
	syms := make([]string, 0, len(counts))
	for s := range counts {
		syms = append(syms, s)
	}
	slices.SortFunc(syms, func(a, b string) int { return cmp.Or(counts[b]-counts[a], cmp.Compare(a, b)) })
	return at, syms
}

// openBench opens the store from its file, as the local server does.
func openBench(b *testing.B) *precise.Index {
	f, err := os.Open(bench.store)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	ix, err := precise.Open(context.Background(), f, st.Size())
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkBuild converts the SCIP (MB/s of SCIP) and reports the store's
// size as a fraction of the SCIP's.
func BenchmarkBuild(b *testing.B) {
	benchSetup(b)
	b.SetBytes(int64(len(bench.scip)))
	var st fromscip.Stats
	for b.Loop() {
		var err error
		st, err = fromscip.Build(context.Background(), bytes.NewReader(bench.scip), io.Discard, fromscip.Options{SkipOutside: true, TempDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Bytes)/float64(len(bench.scip)), "store/scip")
	b.ReportMetric(float64(st.Occurrences), "occurrences")
}

// BenchmarkOpen opens the store: its tables.
func BenchmarkOpen(b *testing.B) {
	benchSetup(b)
	for b.Loop() {
		openBench(b)
	}
}

// BenchmarkAt asks what is at positions of occurrences, all over.
func BenchmarkAt(b *testing.B) {
	benchSetup(b)
	ix := openBench(b)
	i := 0
	for b.Loop() {
		p := bench.at[i%len(bench.at)]
		i++
		if occs, err := ix.At(context.Background(), p.path, p.line, p.col); err != nil || len(occs) == 0 {
			b.Fatalf("%+v: %v, %v", p, occs, err)
		}
	}
}

// BenchmarkReferences reads the first page (100) of the references of
// the 200 symbols used most.
func BenchmarkReferences(b *testing.B) {
	benchSetup(b)
	ix := openBench(b)
	syms := bench.syms[:min(len(bench.syms), 200)]
	i := 0
	for b.Loop() {
		if refs, _, err := ix.References(context.Background(), syms[i%len(syms)], precise.Location{}, 100); err != nil || len(refs) == 0 {
			b.Fatalf("%s: %v", syms[i%len(syms)], err)
		}
		i++
	}
}

// BenchmarkSymbol reads hover and definitions of symbols all over.
func BenchmarkSymbol(b *testing.B) {
	benchSetup(b)
	ix := openBench(b)
	i := 0
	for b.Loop() {
		s := bench.syms[(i*7919)%len(bench.syms)]
		i++
		if _, ok, err := ix.Symbol(context.Background(), s); err != nil || !ok {
			b.Fatalf("%s: %v, %v", s, ok, err)
		}
	}
}
