// Command contextbench measures context_search's code retrieval on a
// corpus nobody here wrote, the Go source tree ($(go env GOROOT)/src), on
// labelled questions (questions.json), next to a keyword baseline built
// on ripgrep and run in the same process over the same files.
//
//	go run ./scripts/contextbench            # lexical (make contextbench)
//	go run ./scripts/contextbench -v         # and every question's ranks
//	TOOLSHED_EMBED_URL=http://localhost:11434/v1 TOOLSHED_EMBED_MODEL=nomic-embed-text \
//	  go run ./scripts/contextbench          # lexical and hybrid
//
// The questions come in three classes: no-identifier (the question shares
// no identifier with the code that answers it, even split at camelCase
// humps), plain-words (ordinary words that occur in that code or its
// comments) and named (the question names a function or type). Each has
// the files that answer it, checked by reading them (main_test.go checks
// the paths and the classes).
//
// The corpus is the files the server indexes: the repository view of the
// tree (repo.NewLocal), its ignore rules, excluded folders and deny list
// applied. Toolshed builds its index as the server does (contextindex.Live)
// and answers each question with context_search's ranking (50 chunks,
// turned into files, first occurrence wins). The baseline ranks files by
// the idf-weighted match counts of the question's words, counted by rg.
//
// It prints recall@5 and recall@10 (the share of questions with at least
// one relevant file among the first k files), MRR@10 (the mean reciprocal
// rank of the first relevant file, 0 past the tenth) per class, the
// index's build time and size, and Toolshed's query latency. It exits 0
// after a complete run, whatever the figures, and 1 on an error (a
// relevant file the corpus lacks is one: the label is wrong).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/repo"
)

// Question classes.
const (
	classNoIdent = "no-identifier"
	classPlain   = "plain-words"
	classNamed   = "named"
)

var classes = []string{classNoIdent, classPlain, classNamed}

// question is one labelled question.
type question struct {
	Class    string   `json:"class"`
	Question string   `json:"question"`
	Relevant []string `json:"relevant"` // files that answer it, relative to GOROOT/src
	Why      string   `json:"why"`      // what in them answers it
}

// Search settings.
const (
	// searchLimit is how many chunks Toolshed is asked for.
	searchLimit = 50
	// depth is how far down the file rankings are read (MRR@10).
	depth = 10
	// rgArgBytes bounds the bytes of paths one rg command is given (the
	// kernel's limit on a command line is 2 MB on Linux, environment
	// included).
	rgArgBytes = 512 << 10
)

func main() {
	root := flag.String("root", filepath.Join(goroot(), "src"), "source tree the questions are about")
	questionsFile := flag.String("questions", filepath.Join("scripts", "contextbench", "questions.json"), "labelled questions")
	verbose := flag.Bool("v", false, "print each question's ranks and every system's top 5 files")
	flag.Parse()
	if err := run(*root, *questionsFile, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "contextbench:", err)
		os.Exit(1)
	}
}

func run(root, questionsFile string, verbose bool) error {
	ctx := context.Background()
	qs, err := loadQuestions(questionsFile)
	if err != nil {
		return err
	}
	rgVersion, err := exec.Command("rg", "--version").Output()
	if err != nil {
		return fmt.Errorf("ripgrep (rg) is needed for the baseline: apt-get install ripgrep (make ripgrep does): %w", err)
	}
	emb, err := embedding.FromEnv(ctx, os.Getenv, awscall.LoadConfig) // nil: none configured
	if err != nil {
		return err
	}
	goVersion, _ := os.ReadFile(filepath.Join(root, "..", "VERSION"))
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d, %s; %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), firstLine(rgVersion))
	fmt.Printf("corpus: %s (%s), %d questions\n", root, firstLine(goVersion), len(qs))

	// The corpus: the repository view's searchable files.
	view, err := repo.NewLocal(root, repo.LocalOptions{})
	if err != nil {
		return err
	}
	defer view.Close()
	paths, err := corpusPaths(ctx, view, qs)
	if err != nil {
		return err
	}
	live, corpus := buildIndex(view, emb)
	defer live.Close()
	systems, err := rankAll(ctx, corpus, emb, root, paths, qs)
	if err != nil {
		return err
	}
	res := newResults(qs, systems)
	if verbose {
		res.printQuestions()
	}
	res.printTable()
	res.printGoals()
	return nil
}

// modelOf is emb's model, "" without an embedder.
func modelOf(emb contextindex.Embedder) string {
	if emb == nil {
		return ""
	}
	return emb.Model()
}

// corpusPaths returns the paths of view's searchable files, and fails when
// a question's relevant file is not one of them (a wrong label).
func corpusPaths(ctx context.Context, view *repo.Local, qs []question) ([]string, error) {
	files, err := view.Searchable(ctx)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	inCorpus := make(map[string]bool, len(files))
	for i, f := range files {
		paths[i] = f.Path
		inCorpus[f.Path] = true
	}
	for _, q := range qs {
		for _, rel := range q.Relevant {
			if !inCorpus[rel] {
				return nil, fmt.Errorf("question %q: relevant file %s is not in the corpus (a wrong label)", q.Question, rel)
			}
		}
	}
	return paths, nil
}

// buildIndex builds Toolshed's index of view as the server builds it
// (contextindex.Live), prints its size, build time and memory, and
// returns it with the corpus to search. The caller closes the index.
func buildIndex(view *repo.Local, emb contextindex.Embedder) (*contextindex.Live, *contextindex.Corpus) {
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
	docs := 0
	for _, p := range st.Parts {
		docs += p.Seg.Len()
	}
	fmt.Printf("index: %d files, %d chunks (sum of Segment.Len: %d, %d part(s)); built in %s",
		st.Progress.FilesIndexed, st.Progress.Chunks, docs, len(st.Parts), build.Round(time.Millisecond))
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

// system is one way of answering the questions: a ranking of files per
// question, and for Toolshed, the time of each search.
type system struct {
	name  string
	ranks [][]string
	times []time.Duration
}

// rankAll answers the questions with Toolshed (lexical, and hybrid with an
// embedder) and with the rg baseline over paths in root, and prints
// Toolshed's latency and the baseline's time. The baseline comes last.
func rankAll(ctx context.Context, corpus *contextindex.Corpus, emb contextindex.Embedder, root string, paths []string, qs []question) ([]*system, error) {
	lexical := search(corpus, qs, nil)
	lexical.name = "toolshed"
	systems := []*system{lexical}
	if emb != nil {
		vectors := make([][]float32, len(qs))
		for i, q := range qs {
			var err error
			if vectors[i], err = contextindex.EmbedQuery(ctx, emb, q.Question); err != nil {
				return nil, fmt.Errorf("embed question %q: %w", q.Question, err)
			}
		}
		hybrid := search(corpus, qs, vectors)
		hybrid.name = "toolshed-hybrid"
		lexical.name = "toolshed-lexical"
		systems = append(systems, hybrid)
	}
	t0 := time.Now()
	baseRanks, err := baseline(root, paths, qs)
	if err != nil {
		return nil, err
	}
	baseTime := time.Since(t0)
	systems = append(systems, &system{name: "rg-baseline", ranks: baseRanks})
	for _, s := range systems {
		if s.times == nil {
			continue
		}
		t := slices.Clone(s.times)
		slices.Sort(t)
		fmt.Printf("latency: %s search (warm, %d chunks asked): p50 %s, max %s\n", s.name, searchLimit,
			t[len(t)/2].Round(10*time.Microsecond), t[len(t)-1].Round(10*time.Microsecond))
	}
	fmt.Printf("baseline: %d rg counts over %d files in %s\n", len(uniq(allWords(qs))), len(paths), baseTime.Round(time.Millisecond))
	return systems, nil
}

// search answers each question with context_search's ranking (with the
// question's vector, when vectors is not nil), turned into files: the
// first occurrence of a file's chunk gives its rank. It searches twice,
// the first time to warm up, and times the second.
func search(corpus *contextindex.Corpus, qs []question, vectors [][]float32) *system {
	s := &system{ranks: make([][]string, len(qs))}
	for pass := range 2 {
		s.times = s.times[:0]
		for i, q := range qs {
			query := contextindex.Query{Text: q.Question, Limit: searchLimit}
			if vectors != nil {
				query.Vector = vectors[i]
			}
			t0 := time.Now()
			hits, _ := corpus.Search(query)
			s.times = append(s.times, time.Since(t0))
			if pass == 1 {
				var ranked []string
				for _, h := range hits {
					if !slices.Contains(ranked, h.Doc.Path) {
						ranked = append(ranked, h.Doc.Path)
					}
				}
				s.ranks[i] = ranked
			}
		}
	}
	return s
}

// results are the systems' answers to the questions.
type results struct {
	qs      []question
	systems []*system // the baseline last
	ranks   [][]int   // system → question → rank of the first relevant file (0: not in the first ten)
}

func newResults(qs []question, systems []*system) results {
	r := results{qs: qs, systems: systems, ranks: make([][]int, len(systems))}
	for si, s := range systems {
		r.ranks[si] = make([]int, len(qs))
		for qi, q := range qs {
			r.ranks[si][qi] = firstRelevant(s.ranks[qi], q)
		}
	}
	return r
}

// firstRelevant is the rank of the first of q's relevant files in ranked,
// 0 when none is in the first depth.
func firstRelevant(ranked []string, q question) int {
	for i, p := range ranked {
		if i >= depth {
			break
		}
		if slices.Contains(q.Relevant, p) {
			return i + 1
		}
	}
	return 0
}

// printQuestions prints, per question, each system's rank of the first
// relevant file, the relevant files and each system's top 5.
func (r results) printQuestions() {
	fmt.Println()
	for qi, q := range r.qs {
		var rs []string
		for si, s := range r.systems {
			rank := "-"
			if r.ranks[si][qi] > 0 {
				rank = strconv.Itoa(r.ranks[si][qi])
			}
			rs = append(rs, fmt.Sprintf("%s %2s", s.name, rank))
		}
		fmt.Printf("[%s] %s  %q\n", q.Class, strings.Join(rs, "  "), q.Question)
		fmt.Printf("    relevant: %s\n", strings.Join(q.Relevant, ", "))
		for _, s := range r.systems {
			fmt.Printf("    %s top 5: %s\n", s.name, strings.Join(s.ranks[qi][:min(5, len(s.ranks[qi]))], ", "))
		}
	}
}

// score is a system's figures over some questions.
type score struct{ r5, r10, mrr float64 }

// measure returns system si's score over the questions of class ("": all)
// and how many there are.
func (r results) measure(si int, class string) (score, int) {
	var sc score
	n := 0
	for qi, q := range r.qs {
		if class != "" && q.Class != class {
			continue
		}
		n++
		rank := r.ranks[si][qi]
		if rank > 0 && rank <= 5 {
			sc.r5++
		}
		if rank > 0 {
			sc.r10++
			sc.mrr += 1 / float64(rank)
		}
	}
	if n > 0 {
		sc.r5, sc.r10, sc.mrr = sc.r5/float64(n), sc.r10/float64(n), sc.mrr/float64(n)
	}
	return sc, n
}

// printTable prints each system's scores per class and overall, then how
// each of Toolshed's systems stands to the baseline.
func (r results) printTable() {
	fmt.Println()
	fmt.Println("recall@k: share of questions with a relevant file among the first k files; MRR@10: mean 1/rank of the first relevant file (0 past 10)")
	fmt.Printf("%-14s %3s  %-17s %6s %6s %7s\n", "class", "n", "system", "R@5", "R@10", "MRR@10")
	var verdicts []string
	for _, class := range append(slices.Clone(classes), "") {
		label := classLabel(class)
		for si, s := range r.systems {
			sc, n := r.measure(si, class)
			if si == 0 {
				fmt.Printf("%-14s %3d  %-17s %6.3f %6.3f %7.3f\n", label, n, s.name, sc.r5, sc.r10, sc.mrr)
			} else {
				fmt.Printf("%-14s %3s  %-17s %6.3f %6.3f %7.3f\n", "", "", s.name, sc.r5, sc.r10, sc.mrr)
			}
		}
		for si := range r.base() {
			d := r.againstBaseline(si, class)
			verdicts = append(verdicts, fmt.Sprintf("%-14s %s %s the baseline (R@5 %+.3f, R@10 %+.3f, MRR@10 %+.3f)",
				label+":", r.systems[si].name, compare(d), d[0], d[1], d[2]))
		}
	}
	fmt.Println()
	for _, v := range verdicts {
		fmt.Println(v)
	}
}

// classLabel names a class ("": all the questions) in the table.
func classLabel(class string) string {
	if class == "" {
		return "overall"
	}
	return class
}

// base is the baseline's index among the systems.
func (r results) base() int { return len(r.systems) - 1 }

// againstBaseline returns system si's differences from the baseline in
// R@5, R@10 and MRR@10 over the questions of class ("": all).
func (r results) againstBaseline(si int, class string) [3]float64 {
	sc, _ := r.measure(si, class)
	b, _ := r.measure(r.base(), class)
	return [3]float64{sc.r5 - b.r5, sc.r10 - b.r10, sc.mrr - b.mrr}
}

// printGoals prints whether Toolshed's lexical search meets its goals:
// ahead of the baseline in every class, and recall@5 of 0.70 overall; and
// for how many questions its chunks came from fewer than depth files.
func (r results) printGoals() {
	var notAhead []string
	for _, class := range classes {
		if verdict := compare(r.againstBaseline(0, class)); verdict != "ahead of" {
			notAhead = append(notAhead, class+" "+strings.TrimSuffix(verdict, " of"))
		}
	}
	lex, _ := r.measure(0, "")
	goal := "meets"
	if lex.r5 < 0.7 {
		goal = "misses"
	}
	if len(notAhead) == 0 {
		fmt.Println("goal: lexical ahead of the baseline in every class: yes")
	} else {
		fmt.Printf("goal: lexical ahead of the baseline in every class: no (%s)\n", strings.Join(notAhead, ", "))
	}
	fmt.Printf("goal: overall lexical recall@5 %.3f %s the target of 0.70\n", lex.r5, goal)
	short := 0
	for _, ranked := range r.systems[0].ranks {
		if len(ranked) < depth {
			short++
		}
	}
	if short > 0 {
		fmt.Printf("note: for %d question(s), Toolshed's %d chunks came from fewer than %d files\n", short, searchLimit, depth)
	}
}

// compare says how a system stands to the baseline, from its differences
// in R@5, R@10 and MRR@10: ahead when none is lower and one is higher,
// behind the other way round, mixed when some are higher and some lower.
func compare(d [3]float64) string {
	const eps = 1e-9
	up, down := false, false
	for _, x := range d {
		up = up || x > eps
		down = down || x < -eps
	}
	switch {
	case up && !down:
		return "ahead of"
	case down && !up:
		return "behind"
	case up && down:
		return "mixed against"
	}
	return "level with"
}

// baseline ranks the files of paths (relative to root) for each question
// by the idf-weighted counts of its words, as rg counts them:
// score(file) = Σ over the question's words of ln(1 + N/df) × (1 + ln count).
func baseline(root string, paths []string, qs []question) ([][]string, error) {
	if err := rgSearches(root, paths); err != nil {
		return nil, err
	}
	counts := map[string]map[string]int{} // word → file → matches
	for _, w := range uniq(allWords(qs)) {
		c, err := rgCount(root, paths, w)
		if err != nil {
			return nil, err
		}
		counts[w] = c
	}
	n := float64(len(paths))
	out := make([][]string, len(qs))
	for i, q := range qs {
		score := map[string]float64{}
		for _, w := range uniq(contentWords(q.Question)) {
			c := counts[w]
			if len(c) == 0 {
				continue
			}
			idf := math.Log(1 + n/float64(len(c)))
			for p, k := range c {
				score[p] += idf * (1 + math.Log(float64(k)))
			}
		}
		ranked := make([]string, 0, len(score))
		for p := range score {
			ranked = append(ranked, p)
		}
		slices.SortFunc(ranked, func(a, b string) int {
			if score[a] != score[b] {
				if score[a] > score[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		out[i] = ranked[:min(len(ranked), 2*depth)]
	}
	return out, nil
}

// rgCount counts, with rg, the case-insensitive whole-word matches of word
// in each of paths (relative to root), given on the command line; files
// without a match are left out.
func rgCount(root string, paths []string, word string) (map[string]int, error) {
	counts := map[string]int{}
	for _, batch := range batches(paths) {
		out, err := rg(root, batch, "--count-matches", "--ignore-case", "--word-regexp", "-e", word)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(out) {
			p, count, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\x00")
			k, err := strconv.Atoi(count)
			if err != nil {
				return nil, fmt.Errorf("rg -e %s: unexpected output %q", word, line)
			}
			counts[p] += k
		}
	}
	return counts, nil
}

// rgSearches checks that rg searches exactly paths when given them: none
// is skipped as ignored, hidden or unreadable.
func rgSearches(root string, paths []string) error {
	listed := map[string]bool{}
	for _, batch := range batches(paths) {
		out, err := rg(root, batch, "--files")
		if err != nil {
			return err
		}
		for p := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
			listed[p] = true
		}
	}
	for _, p := range paths {
		if !listed[p] {
			return fmt.Errorf("rg does not search %s, a file of the corpus", p)
		}
	}
	if len(listed) != len(paths) {
		return fmt.Errorf("rg lists %d files for the corpus's %d", len(listed), len(paths))
	}
	return nil
}

// rg runs ripgrep in root on files with args and returns its output (no
// match is no error).
func rg(root string, files []string, args ...string) (string, error) {
	args = append([]string{"--no-config", "--no-require-git", "--with-filename", "--null"}, args...)
	args = append(append(args, "--"), files...)
	cmd := exec.Command("rg", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || stderr.Len() > 0 { // 1 alone: no match
			return "", fmt.Errorf("rg %s: %w: %s", strings.Join(args[:min(len(args), 10)], " "), err, stderr.String())
		}
	}
	return string(out), nil
}

// batches splits paths into command lines of at most rgArgBytes.
func batches(paths []string) [][]string {
	var out [][]string
	for start := 0; start < len(paths); {
		size, end := 0, start
		for end < len(paths) && (end == start || size+len(paths[end])+1 <= rgArgBytes) {
			size += len(paths[end]) + 1
			end++
		}
		out = append(out, paths[start:end])
		start = end
	}
	return out
}

// stopWords are left out of the baseline's query words: English function
// words.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at
		be because been before being below between both but by can could did do does doing done down during
		each either else ever every few for from further get gets got had has have having he her here hers
		him his how however i if in into is it its itself just let lets like made make makes many may me
		might more most much must my no nor not now of off on once one only or other our out over own
		same she should so some such than that the their them then there these they this those though
		through to too under until up upon us use used uses using very via was we were what whatever when
		where whether which while who whom whose why will with within without would yet you your`) {
		stopWords[w] = true
	}
}

// wordRE finds words: runs of letters and digits.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// contentWords returns the baseline's words of a question: lower-cased
// runs of letters and digits of three characters or more, stop words
// left out.
func contentWords(q string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(q), -1) {
		if len([]rune(w)) >= 3 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// allWords returns the content words of every question.
func allWords(qs []question) []string {
	var out []string
	for _, q := range qs {
		out = append(out, contentWords(q.Question)...)
	}
	return out
}

func uniq(words []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
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
