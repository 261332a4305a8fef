// Command contextbench measures context_search's code retrieval, next to
// a keyword baseline run in the same process over the same files, on two
// kinds of question:
//
//   - generated questions, in the manner of CodeSearchNet, from the corpus
//     itself (see generated.go): the first sentence of a declaration's doc
//     comment asks for that declaration, whose doc comment is blanked out
//     of what is indexed for the run. They come from the Go source tree
//     ($(go env GOROOT)/src) and from a second language's corpus a package
//     on the machine ships (Python's standard library, /usr/lib/python3.*),
//     split into a tuning half and a held-out half by a fixed hash of the
//     file's path. The held-out half is printed; the tuning half only with
//     -tuning: tune on that one, and read the held-out half only to check.
//
//   - the hand-written questions of questions.json about the Go tree, in
//     three classes: no-identifier (the question shares no identifier with
//     the code that answers it, even split at camelCase humps: the
//     paraphrase class), plain-words (ordinary words that occur in that
//     code or its comments) and named (the question names a function or
//     type). Each has the files that answer it, checked by reading them
//     (main_test.go checks the paths and the classes).
//
//     go run ./scripts/contextbench            # lexical (make contextbench)
//     go run ./scripts/contextbench -tuning    # the tuning half instead of the held-out one
//     go run ./scripts/contextbench -v         # and every question's ranks
//     go run ./scripts/contextbench -cpuprofile /tmp/cb.prof  # then go tool pprof -focus 'Corpus..Search' /tmp/cb.prof
//     TOOLSHED_EMBED_URL=http://localhost:11434/v1 TOOLSHED_EMBED_MODEL=nomic-embed-text \
//     go run ./scripts/contextbench          # lexical and hybrid
//
// A corpus is the files the server indexes: the repository view of the
// tree (repo.NewLocal), its ignore rules, excluded folders and deny list
// applied. For the hand-written questions Toolshed builds its index as the
// server does (contextindex.Live); for generated ones it builds it from
// the same files with the questions' doc comments blanked
// (contextindex.BuildCode: the same chunks and statistics). It answers
// each question with context_search's ranking (50 chunks, turned into
// files, first occurrence wins). The keyword baseline ranks files by the
// idf-weighted counts of the question's words as `rg -w -i` counts them
// (keyword.go).
//
// Per class it prints recall@1, @5 and @10 (the share of questions with
// a relevant file among the first k files), MRR@10 (the mean reciprocal
// rank of the first relevant file, 0 past the tenth) and nDCG@10 (binary
// relevance); for generated questions also Toolshed's figures by chunk
// ("toolshed-decl": the chunk holding the declaration's name among the
// first k chunks). Then the goals of issue 29: recall@5 of 0.75 and MRR
// ahead of the baseline in every class, by 0.10 in the paraphrase ones. It
// prints the indexes' build time and size and Toolshed's query latency,
// exits 0 after a complete run, whatever the figures, and 1 on an error (a
// relevant file the corpus lacks is one: the label is wrong).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/repo"
)

// Hand-written question classes.
const (
	classNoIdent = "no-identifier"
	classPlain   = "plain-words"
	classNamed   = "named"
	// classHand is every hand-written question.
	classHand = "hand-written"
)

var classes = []string{classNoIdent, classPlain, classNamed}

// question is one labelled question.
type question struct {
	Class    string   `json:"class"`
	Question string   `json:"question"`
	Relevant []string `json:"relevant"` // files that answer it, relative to GOROOT/src
	Why      string   `json:"why"`      // what in them answers it
}

// item is one question as the benchmark asks it.
type item struct {
	classes  []string // the first is its own; a generated question may be paraphrase-like too
	text     string
	relevant []string // files that answer it
	target   target   // a generated question's declaration; zero for a hand-written one
	heldOut  bool     // a generated question in the held-out half
}

// Search settings.
const (
	// searchLimit is how many chunks Toolshed is asked for.
	searchLimit = 50
	// depth is how far down the rankings are read (MRR@10, nDCG@10).
	depth = 10
	// defaultPairs is how many generated questions are sampled per corpus
	// and half.
	defaultPairs = 1500
)

// Systems, in the order of the table.
const (
	sysToolshed = "toolshed"
	sysHybrid   = "toolshed-hybrid"
	sysDecl     = "toolshed-decl"
	sysKeyword  = "keyword"
)

var systemOrder = []string{sysToolshed, sysHybrid, sysDecl, sysKeyword}

// options are the command's flags.
type options struct {
	root, questions string
	second, secName string
	pairs           int
	tuning, verbose bool
	cpuProfile      string
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", filepath.Join(goroot(), "src"), "the Go source tree (hand-written questions and the go corpus)")
	flag.StringVar(&o.questions, "questions", filepath.Join("scripts", "contextbench", "questions.json"), "labelled questions")
	flag.StringVar(&o.second, "second", secondCorpus(), `the second language's corpus ("" for none)`)
	flag.StringVar(&o.secName, "second-name", "python", "the second corpus's name in the table")
	flag.IntVar(&o.pairs, "pairs", defaultPairs, "generated questions sampled per corpus and half")
	flag.BoolVar(&o.tuning, "tuning", false, "print the tuning half of the generated questions instead of the held-out half")
	flag.BoolVar(&o.verbose, "v", false, "print each question's ranks and every system's top 5 files")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (the searches: go tool pprof -focus 'Corpus..Search')")
	flag.Parse()
	if err := profiled(o.cpuProfile, func() error { return run(o) }); err != nil {
		fmt.Fprintln(os.Stderr, "contextbench:", err)
		os.Exit(1)
	}
}

// profiled runs fn, with a CPU profile written to file unless it is "".
func profiled(file string, fn func() error) error {
	if file == "" {
		return fn()
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	runErr := fn()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil && runErr == nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	return runErr
}

// secondCorpus is the newest Python standard library under /usr/lib, ""
// when there is none.
func secondCorpus() string {
	dirs, _ := filepath.Glob("/usr/lib/python3.*")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(a), "python3."))
		vb, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(b), "python3."))
		return va - vb
	})
	if len(dirs) == 0 {
		return ""
	}
	return dirs[len(dirs)-1]
}

func run(o options) error {
	ctx := context.Background()
	qs, err := loadQuestions(o.questions)
	if err != nil {
		return err
	}
	emb, err := embedding.FromEnv(ctx, os.Getenv, awscall.LoadConfig) // nil: none configured
	if err != nil {
		return err
	}
	goVersion, _ := os.ReadFile(filepath.Join(o.root, "..", "VERSION"))
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Printf("go corpus: %s (%s), %d hand-written questions\n", o.root, firstLine(goVersion), len(qs))
	half := "held-out"
	if o.tuning {
		half = "tuning"
	}
	view, err := repo.NewLocal(o.root, repo.LocalOptions{})
	if err != nil {
		return err
	}
	defer view.Close()
	files, err := view.Searchable(ctx)
	if err != nil {
		return err
	}
	handOut, err := answerHand(ctx, o, qs, view, files, emb)
	if err != nil {
		return err
	}
	// The generated questions of each corpus, over an index of it with
	// their doc comments blanked.
	corpora := []struct{ name, root string }{{"go", o.root}}
	if o.second != "" {
		corpora = append(corpora, struct{ name, root string }{o.secName, o.second})
	}
	var out []outcome
	for _, c := range corpora {
		o2, err := answerGenerated(ctx, o, c.name, c.root, files, emb, half)
		if err != nil {
			return err
		}
		out = append(out, o2...)
	}
	r := results{out: append(out, handOut...)}
	r.printTable(half)
	r.printGoals()
	return nil
}

// answerHand answers the hand-written questions over the index the
// server builds of view (whose searchable files are files).
func answerHand(ctx context.Context, o options, qs []question, view *repo.Local, files []*repo.File, emb contextindex.Embedder) ([]outcome, error) {
	hand, err := handItems(qs, files)
	if err != nil {
		return nil, err
	}
	live, corpus := buildLive(view, emb)
	defer live.Close()
	return answer(ctx, "go, hand-written", corpus, emb, files, nil, hand, o.verbose)
}

// answerGenerated answers the generated questions of the corpus name at
// root (files when it is the Go corpus) of this run's half, over an index
// of it with their doc comments blanked.
func answerGenerated(ctx context.Context, o options, name, root string, files []*repo.File, emb contextindex.Embedder, half string) ([]outcome, error) {
	if root != o.root {
		v, err := repo.NewLocal(root, repo.LocalOptions{})
		if err != nil {
			return nil, err
		}
		defer v.Close()
		if files, err = v.Searchable(ctx); err != nil {
			return nil, err
		}
	}
	all, documented := candidates(files)
	sampled := sample(all, o.pairs)
	fmt.Println(describeCandidates(name+" ("+root+")", documented, all, sampled))
	var items []item
	for _, it := range generatedItems(name, sampled) {
		if it.heldOut != o.tuning {
			items = append(items, it)
		}
	}
	snap := stripped(files, sampled)
	corpus, err := buildCode(ctx, name, snap, emb)
	if err != nil {
		return nil, err
	}
	return answer(ctx, name+", generated "+half, corpus, emb, nil, snap, items, o.verbose)
}

// handItems makes the items of the hand-written questions (each in its
// class and in classHand), and fails when a relevant file is not one of
// files (a wrong label).
func handItems(qs []question, files []*repo.File) ([]item, error) {
	inCorpus := make(map[string]bool, len(files))
	for _, f := range files {
		inCorpus[f.Path] = true
	}
	var out []item
	for _, q := range qs {
		for _, rel := range q.Relevant {
			if !inCorpus[rel] {
				return nil, fmt.Errorf("question %q: relevant file %s is not in the corpus (a wrong label)", q.Question, rel)
			}
		}
		out = append(out, item{classes: []string{classHand, q.Class}, text: q.Question, relevant: q.Relevant})
	}
	return out, nil
}

// modelOf is emb's model, "" without an embedder.
func modelOf(emb contextindex.Embedder) string {
	if emb == nil {
		return ""
	}
	return emb.Model()
}

// buildLive builds Toolshed's index of view as the server builds it
// (contextindex.Live), prints its size, build time and memory, and
// returns it with the corpus to search. The caller closes the index.
func buildLive(view *repo.Local, emb contextindex.Embedder) (*contextindex.Live, *contextindex.Corpus) {
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	start := time.Now()
	live := contextindex.NewLive(view, contextindex.LiveOptions{Embedder: emb})
	for {
		p := live.State().Progress
		if p.State == contextindex.StateReady && p.Version == view.Version() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	lexicalReady := time.Since(start)
	live.Settle()
	build := time.Since(start)
	st := live.State()
	settle()
	runtime.ReadMemStats(&after)
	fmt.Printf("go index (as the server builds it): %d files, %d chunks in %d part(s); built in %s",
		st.Progress.FilesIndexed, st.Progress.Chunks, len(st.Parts), build.Round(time.Millisecond))
	if emb != nil {
		fmt.Printf(" (lexical ready after %s, then embedding with %s)", lexicalReady.Round(time.Millisecond), emb.Model())
	}
	fmt.Println()
	fmt.Printf("memory: index %.0f MB of heap (after a double GC, beyond the repository view's files); heap in use %.0f MB\n",
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6, float64(after.HeapAlloc)/1e6)
	corpus := contextindex.NewPartsCorpus(modelOf(emb), st.Parts, st.Vectors)
	if emb != nil {
		fmt.Printf("vectors: %d of %d chunks\n", corpus.Vectors(), corpus.Len())
	}
	return live, corpus
}

// buildCode builds Toolshed's index of files with contextindex.BuildCode
// and prints its size and build time.
func buildCode(ctx context.Context, name string, files []contextindex.File, emb contextindex.Embedder) (*contextindex.Corpus, error) {
	start := time.Now()
	ix, st, err := contextindex.BuildCode(ctx, nil, contextindex.Snapshot{Files: files}, emb, time.Now())
	if err != nil {
		return nil, err
	}
	fmt.Printf("%s index (doc comments of the questions blanked): %d files, %d chunks; built in %s\n",
		name, st.Files, st.Chunks, time.Since(start).Round(time.Millisecond))
	return contextindex.NewCorpus(modelOf(emb), []*contextindex.Segment{ix.Segment}, ix.Vectors), nil
}

// outcome is how each system did on one item.
type outcome struct {
	item  item
	ranks map[string]int     // system → rank of the first relevant result (0: not in the first depth)
	ndcg  map[string]float64 // system → nDCG@depth
}

// hitRef is one ranked result: a file, or a chunk's lines in it.
type hitRef struct {
	path       string
	start, end int // 0 for a file
}

// relevant says whether a result answers it: a relevant file, or a chunk
// of one that holds the target declaration's name line.
func (it item) isRelevant(h hitRef) bool {
	if !slices.Contains(it.relevant, h.path) {
		return false
	}
	return h.start == 0 || it.target.line == 0 || h.start <= it.target.line && it.target.line <= h.end
}

// answer asks items of corpus with Toolshed (lexical, and hybrid with an
// embedder) and the keyword baseline, over the files (the view's files,
// or when nil, texts), and prints Toolshed's latency.
func answer(ctx context.Context, name string, corpus *contextindex.Corpus, emb contextindex.Embedder,
	files []*repo.File, texts []contextindex.File, items []item, verbose bool) ([]outcome, error) {
	rankings := map[string][][]hitRef{}
	var vectors [][]float32
	if emb != nil {
		vectors = make([][]float32, len(items))
		for i, it := range items {
			var err error
			if vectors[i], err = contextindex.EmbedQuery(ctx, emb, it.text); err != nil {
				return nil, fmt.Errorf("embed question %q: %w", it.text, err)
			}
		}
	}
	for _, v := range [][][]float32{nil, vectors} {
		if v == nil && len(rankings) > 0 {
			continue // no embedder: lexical only
		}
		files, chunks, times := search(corpus, items, v)
		sys := sysToolshed
		if v != nil {
			sys = sysHybrid
		}
		rankings[sys] = files
		if items[0].target.line > 0 && v == nil {
			rankings[sysDecl] = chunks
		}
		slices.Sort(times)
		fmt.Printf("latency: %s, %s search (warm, %d chunks asked, %d questions): p50 %s, p90 %s, max %s\n", name, sys, searchLimit, len(times),
			times[len(times)/2].Round(10*time.Microsecond), times[len(times)*9/10].Round(10*time.Microsecond), times[len(times)-1].Round(10*time.Microsecond))
	}
	rankings[sysKeyword] = keywordRankings(name, files, texts, items)
	out := make([]outcome, len(items))
	for i, it := range items {
		o := outcome{item: it, ranks: map[string]int{}, ndcg: map[string]float64{}}
		for sys, r := range rankings {
			o.ranks[sys], o.ndcg[sys] = judge(it, r[i])
		}
		out[i] = o
		if verbose {
			printItem(o, rankings, i)
		}
	}
	return out, nil
}

// keywordRankings ranks the files (a repository's, or texts) for each
// item by the keyword baseline.
func keywordRankings(name string, files []*repo.File, texts []contextindex.File, items []item) [][]hitRef {
	paths, contents := make([]string, 0, len(files)+len(texts)), make([]string, 0, len(files)+len(texts))
	for _, f := range files {
		paths, contents = append(paths, f.Path), append(contents, f.Text())
	}
	for _, f := range texts {
		paths, contents = append(paths, f.Path), append(contents, string(f.Content))
	}
	var words []string
	for _, it := range items {
		words = append(words, contentWords(it.text)...)
	}
	t0 := time.Now()
	kc := countWords(paths, contents, uniq(words))
	rankings := make([][]hitRef, 0, len(items))
	for _, it := range items {
		var refs []hitRef
		for _, p := range kc.rank(it.text) {
			refs = append(refs, hitRef{path: p})
		}
		rankings = append(rankings, refs)
	}
	fmt.Printf("keyword baseline: %s, %d files in %s\n", name, len(paths), time.Since(t0).Round(time.Millisecond))
	return rankings
}

// warmUp is how many questions are asked before the timed ones.
const warmUp = 100

// search answers each item with context_search's ranking (with the
// question's vector, when vectors is not nil): its chunks, and its files
// (the first occurrence of a file's chunk gives its rank). It asks the
// first warmUp questions to warm up, then times every question.
func search(corpus *contextindex.Corpus, items []item, vectors [][]float32) (files, chunks [][]hitRef, times []time.Duration) {
	files, chunks = make([][]hitRef, len(items)), make([][]hitRef, len(items))
	for pass := range 2 {
		times = times[:0]
		for i, it := range items {
			if pass == 0 && i == warmUp {
				break
			}
			query := contextindex.Query{Text: it.text, Limit: searchLimit}
			if vectors != nil {
				query.Vector = vectors[i]
			}
			t0 := time.Now()
			hits, _ := corpus.Search(query)
			times = append(times, time.Since(t0))
			if pass == 0 {
				continue
			}
			var seen []string
			for _, h := range hits {
				chunks[i] = append(chunks[i], hitRef{path: h.Doc.Path, start: h.Doc.Start, end: h.Doc.End})
				if !slices.Contains(seen, h.Doc.Path) {
					seen = append(seen, h.Doc.Path)
					files[i] = append(files[i], hitRef{path: h.Doc.Path})
				}
			}
		}
	}
	return files, chunks, times
}

// judge returns the rank of the first relevant result among the first
// depth (0: none) and the nDCG@depth of a ranking (binary relevance;
// each relevant file counts once).
func judge(it item, ranked []hitRef) (int, float64) {
	first, dcg := 0, 0.0
	found := map[string]bool{}
	for i, h := range ranked[:min(len(ranked), depth)] {
		if !it.isRelevant(h) || found[h.path] {
			continue
		}
		found[h.path] = true
		if first == 0 {
			first = i + 1
		}
		dcg += 1 / math.Log2(float64(i+2))
	}
	ideal := 0.0
	for i := range min(len(it.relevant), depth) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return first, dcg / ideal
}

// printItem prints an item's ranks and each system's top 5.
func printItem(o outcome, rankings map[string][][]hitRef, i int) {
	var rs []string
	for _, sys := range systemOrder {
		if r, ok := o.ranks[sys]; ok {
			rank := "-"
			if r > 0 {
				rank = strconv.Itoa(r)
			}
			rs = append(rs, fmt.Sprintf("%s %2s", sys, rank))
		}
	}
	fmt.Printf("[%s] %s  %q\n", strings.Join(o.item.classes, " "), strings.Join(rs, "  "), o.item.text)
	want := strings.Join(o.item.relevant, ", ")
	if o.item.target.line > 0 {
		want = fmt.Sprintf("%s:%d (%s)", o.item.target.path, o.item.target.line, o.item.target.name)
	}
	fmt.Printf("    relevant: %s\n", want)
	for _, sys := range systemOrder {
		r, ok := rankings[sys]
		if !ok {
			continue
		}
		var top []string
		for _, h := range r[i][:min(5, len(r[i]))] {
			if h.start > 0 {
				top = append(top, fmt.Sprintf("%s:%d-%d", h.path, h.start, h.end))
			} else {
				top = append(top, h.path)
			}
		}
		fmt.Printf("    %s top 5: %s\n", sys, strings.Join(top, ", "))
	}
}

// results are the outcomes of every item.
type results struct{ out []outcome }

// score is a system's figures over some items.
type score struct{ r1, r5, r10, mrr, ndcg float64 }

// tableClasses are the classes in the order of the table.
func (r results) tableClasses() []string {
	var out []string
	for _, o := range r.out {
		for _, c := range o.item.classes {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// measure returns system sys's score over the items of class, how many
// there are, and whether the system answered them.
func (r results) measure(sys, class string) (score, int, bool) {
	var sc score
	n := 0
	for _, o := range r.out {
		if !slices.Contains(o.item.classes, class) {
			continue
		}
		rank, ok := o.ranks[sys]
		if !ok {
			return score{}, 0, false
		}
		n++
		if rank > 0 {
			sc.r1 += b2f(rank <= 1)
			sc.r5 += b2f(rank <= 5)
			sc.r10++
			sc.mrr += 1 / float64(rank)
		}
		sc.ndcg += o.ndcg[sys]
	}
	if n == 0 {
		return sc, 0, false
	}
	f := float64(n)
	return score{sc.r1 / f, sc.r5 / f, sc.r10 / f, sc.mrr / f, sc.ndcg / f}, n, true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// printTable prints each system's scores per class.
func (r results) printTable(half string) {
	fmt.Println()
	fmt.Printf("generated questions: the %s half. R@k: share of questions with a relevant file among the first k files\n", half)
	fmt.Println("(toolshed-decl: the declaration's chunk among the first k chunks); MRR@10, nDCG@10 (0 past 10)")
	fmt.Printf("%-20s %5s  %-16s %6s %6s %6s %7s %7s\n", "class", "n", "system", "R@1", "R@5", "R@10", "MRR@10", "nDCG@10")
	for _, class := range r.tableClasses() {
		first := true
		for _, sys := range systemOrder {
			sc, n, ok := r.measure(sys, class)
			if !ok {
				continue
			}
			label, count := "", ""
			if first {
				label, count, first = class, strconv.Itoa(n), false
			}
			fmt.Printf("%-20s %5s  %-16s %6.3f %6.3f %6.3f %7.3f %7.3f\n", label, count, sys, sc.r1, sc.r5, sc.r10, sc.mrr, sc.ndcg)
		}
	}
}

// paraphraseMargin is how far ahead of the keyword baseline issue 29 asks
// Toolshed's MRR to be on paraphrase-like questions.
const paraphraseMargin = 0.10

// printGoals prints, per class, whether Toolshed's lexical search meets
// issue 29's goals: recall@5 of at least 0.75, and MRR@10 ahead of the
// keyword baseline (by paraphraseMargin for the paraphrase-like classes).
func (r results) printGoals() {
	fmt.Println()
	for _, class := range r.tableClasses() {
		sc, _, _ := r.measure(sysToolshed, class)
		kw, _, _ := r.measure(sysKeyword, class)
		margin := 0.0
		if class == classNoIdent || strings.HasSuffix(class, "-paraphrase") {
			margin = paraphraseMargin
		}
		fmt.Printf("goal %-20s R@5 %.3f %s 0.75; MRR@10 %.3f vs keyword %.3f (%+.3f, needs > %+.2f): %s\n", class+":",
			sc.r5, verdict(sc.r5 >= 0.75, "≥", "<"), sc.mrr, kw.mrr, sc.mrr-kw.mrr, margin, verdict(sc.r5 >= 0.75 && sc.mrr-kw.mrr > margin, "met", "missed"))
	}
}

func verdict(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// loadQuestions reads a questions file and checks that each question has
// a known class and relevant files.
func loadQuestions(name string) ([]question, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var qs []question
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, q := range qs {
		if !slices.Contains(classes, q.Class) {
			return nil, fmt.Errorf("%s: question %q: unknown class %q", name, q.Question, q.Class)
		}
		if len(q.Relevant) == 0 {
			return nil, fmt.Errorf("%s: question %q: no relevant file", name, q.Question)
		}
	}
	return qs, nil
}

// goroot returns the Go installation the go command uses.
func goroot() string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); dir != "" {
			return dir
		}
	}
	return runtime.GOROOT()
}

// settle collects garbage until what is counted is only what is live: the
// first collection moves sync.Pool contents to the pools' victim caches,
// the second frees them.
func settle() {
	runtime.GC()
	runtime.GC()
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
