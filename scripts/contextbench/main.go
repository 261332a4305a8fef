// Command contextbench measures context_search's code index on a real
// corpus nobody here wrote, the Go source tree: index build time and size,
// the memory of the warm index, query latency, and retrieval quality on
// labelled queries (queries.json: a package's purpose in other words; the
// answer is any chunk of that package's files): recall@5 and MRR, lexical
// and, when an embedder is configured (TOOLSHED_EMBEDDER and friends, see
// the README), hybrid.
//
//	go run ./scripts/contextbench                      # lexical
//	TOOLSHED_EMBED_URL=http://localhost:11434/v1 TOOLSHED_EMBED_MODEL=nomic-embed-text \
//	  go run ./scripts/contextbench                    # and hybrid
//
// It lists the tree's non-test .go files and Markdown files itself,
// leaving out testdata and vendor folders (the repository walker's job in
// the server).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
)

// query is one labelled query.
type query struct {
	Query   string `json:"query"`
	Package string `json:"package"`
}

func main() {
	root := flag.String("root", filepath.Join(runtime.GOROOT(), "src"), "source tree to index")
	queriesFile := flag.String("queries", filepath.Join("scripts", "contextbench", "queries.json"), "labelled queries")
	verbose := flag.Bool("v", false, "print each query's rank")
	flag.Parse()
	if err := run(*root, *queriesFile, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "contextbench:", err)
		os.Exit(1)
	}
}

func run(root, queriesFile string, verbose bool) error {
	ctx := context.Background()
	raw, err := os.ReadFile(queriesFile)
	if err != nil {
		return err
	}
	var queries []query
	if err := json.Unmarshal(raw, &queries); err != nil {
		return fmt.Errorf("%s: %w", queriesFile, err)
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	emb, err := embedding.FromConfig(ctx, cfg, func(ctx context.Context) (aws.Config, error) { return awsconfig.LoadDefaultConfig(ctx) })
	if err != nil {
		return err
	}

	snap, err := listFiles(root)
	if err != nil {
		return err
	}
	start := time.Now()
	ix, st, err := contextindex.BuildCode(ctx, nil, snap, emb, time.Now())
	if err != nil {
		return err
	}
	build := time.Since(start)
	files, err := ix.Encode()
	if err != nil {
		return err
	}
	size := 0
	for name, data := range files {
		size += len(data)
		fmt.Printf("  %-16s %8.1f MB\n", name, float64(len(data))/1e6)
	}
	fmt.Printf("index: %d files, %d chunks, built in %s, %.1f MB stored\n", st.Files, st.Chunks, build.Round(time.Millisecond), float64(size)/1e6)

	// The warm index: decoded from its files, as a function loads it.
	ix = nil
	warm, heap := decodeWarm(files)
	fmt.Printf("warm index: %.1f MB of heap\n", float64(heap)/1e6)
	model := ""
	if emb != nil {
		model = emb.Model()
	}
	corpus := contextindex.NewCorpus(model, []*contextindex.Segment{warm.Segment}, warm.Vectors)

	report := func(mode string, vec func(string) []float32) {
		var ranks []int
		var times []time.Duration
		for _, q := range queries {
			qq := contextindex.Query{Text: q.Query, Limit: 20}
			if vec != nil {
				qq.Vector = vec(q.Query)
			}
			t0 := time.Now()
			hits, _ := corpus.Search(qq)
			times = append(times, time.Since(t0))
			rank := 0
			for i, h := range hits {
				if h.Doc.Module == q.Package {
					rank = i + 1
					break
				}
			}
			ranks = append(ranks, rank)
			if verbose {
				top := ""
				if len(hits) > 0 {
					top = hits[0].Doc.ID
				}
				fmt.Printf("  %-8s rank %2d  %-18s %q (top: %s)\n", mode, rank, q.Package, q.Query, top)
			}
		}
		var recall, mrr float64
		for _, r := range ranks {
			if r > 0 && r <= 5 {
				recall++
			}
			if r > 0 {
				mrr += 1 / float64(r)
			}
		}
		n := float64(len(ranks))
		slices.Sort(times)
		fmt.Printf("%s: %d queries, recall@5 %.3f, MRR %.3f, search p50 %s p99 %s\n", mode, len(ranks), recall/n, mrr/n,
			times[len(times)/2].Round(10*time.Microsecond), times[len(times)*99/100].Round(10*time.Microsecond))
	}
	report("lexical", nil)
	if emb != nil {
		report("hybrid", func(text string) []float32 {
			vec, err := contextindex.EmbedQuery(ctx, emb, text)
			if err != nil {
				fmt.Fprintln(os.Stderr, "embed query:", err)
				return nil
			}
			return vec
		})
	}
	return nil
}

// decodeWarm decodes an index from its files and returns it with the heap
// it holds.
func decodeWarm(files map[string][]byte) (*contextindex.CodeIndex, uint64) {
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	ix, err := contextindex.DecodeCodeIndex(func(name string) ([]byte, error) {
		data, ok := files[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return data, nil
	})
	if err != nil {
		panic(err)
	}
	settle()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ix)
	return ix, after.HeapAlloc - before.HeapAlloc
}

// settle collects garbage until what is counted is only what is live: the
// first collection moves sync.Pool contents (the build's buffers) to the
// pools' victim caches, the second frees them.
func settle() {
	runtime.GC()
	runtime.GC()
}

// listFiles lists the tree's non-test .go and .md files, leaving out
// testdata and vendor folders.
func listFiles(root string) (contextindex.Snapshot, error) {
	var files []contextindex.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(p, "_test.go") || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md")) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		files = append(files, contextindex.File{Path: filepath.ToSlash(rel)})
		return err
	})
	return contextindex.Snapshot{FS: os.DirFS(root), Commit: "bench", Files: files}, err
}
