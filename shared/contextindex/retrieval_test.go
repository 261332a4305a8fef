package contextindex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestRetrievalSmall guards the ranking on a small corpus: the queries
// of testdata/package-queries.json (what a package is for, in plain
// words) whose package is among 16 packages of the Go source tree,
// searched lexically over those packages' code. The full evaluation (the
// whole tree, labelled questions in three classes, a ripgrep baseline) is
// `make contextbench`.
func TestRetrievalSmall(t *testing.T) {
	pkgs := []string{"archive/zip", "archive/tar", "compress/flate", "compress/gzip", "container/list", "container/ring",
		"container/heap", "encoding/csv", "encoding/hex", "encoding/base64", "bufio", "sort", "path", "flag", "hash/crc32", "text/tabwriter"}
	raw, err := os.ReadFile(filepath.Join("testdata", "package-queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []struct{ Query, Package string }
	if err := json.Unmarshal(raw, &queries); err != nil {
		t.Fatal(err)
	}
	dir := repotest.GoPackages(t, pkgs...)
	ix, _, err := BuildCode(t.Context(), nil, dirSnapshot(t, dir), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := NewCorpus("", []*Segment{ix.Segment})
	n, found := 0, 0
	var mrr float64
	for _, q := range queries {
		if !slices.Contains(pkgs, q.Package) {
			continue
		}
		n++
		hits, _ := c.Search(Query{Text: q.Query, Limit: 10})
		for i, h := range hits {
			if h.Doc.Module == q.Package {
				if i < 5 {
					found++
				}
				mrr += 1 / float64(i+1)
				break
			}
		}
	}
	if n < 12 {
		t.Fatalf("only %d labelled queries for these packages", n)
	}
	recall := float64(found) / float64(n)
	t.Logf("%d queries: recall@5 %.2f, MRR %.2f", n, recall, mrr/float64(n))
	if recall < 0.9 || mrr/float64(n) < 0.75 {
		t.Errorf("recall@5 %.2f (want ≥ 0.9), MRR %.2f (want ≥ 0.75)", recall, mrr/float64(n))
	}
}
