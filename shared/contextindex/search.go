package contextindex

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"sync"

	"github.com/toolshed/toolshed/shared/codechunk"
)

// Ranking constants.
const (
	// rrfK is the reciprocal rank fusion constant: a document ranked r in
	// a list adds 1/(rrfK+r).
	rrfK = 60
	// fusionDepth is how many of each list's best documents are fused.
	fusionDepth = 100
	// fileEvidence weighs the evidence of a chunk's file: a chunk's
	// lexical score gains this share of the best score among the other
	// chunks of its file. A declaration whose neighbours (its callers,
	// its siblings, its type) match the question too is more likely the
	// answer than one alone in a file about something else.
	fileEvidence = 0.5
)

// Mode is how a search ranked its results, as context_search reports it.
type Mode string

// The modes.
const (
	ModeLexical Mode = "lexical"
	ModeHybrid  Mode = "hybrid"
)

// Corpus is what a search ranks: collections of documents, each ranked
// on its own statistics (see Collection), the results merged by score.
// It is immutable and safe for concurrent searches.
type Corpus struct {
	colls []*Collection
}

// Collection is documents ranked together, on the same word frequencies
// and field lengths, with their vectors: a tenant's memory (discoveries
// and session notes), or the code of a repository. Ranked together, a few
// notes would be scored with the word frequencies of a hundred thousand
// chunks of code, and drowned by them. A Collection is immutable and safe
// for concurrent searches; one of a repository's code is shared by every
// tenant that reads it.
type Collection struct {
	parts []Part
	base  []int // number of each part's first document
	n     int
	avg   [numFields]float64
	test  []bool   // per document: code in a test (see testPrior)
	file  []uint32 // per document: its file, numbered across the parts (see fileEvidence)
	files int
	vecs  [][]float32 // per document; nil when it has no vector
	nvecs int
}

// Join makes a corpus of collections (nil ones are left out).
func Join(colls ...*Collection) *Corpus {
	c := &Corpus{}
	for _, cl := range colls {
		if cl != nil {
			c.colls = append(c.colls, cl)
		}
	}
	return c
}

// NewCorpus joins segments: those of code in one collection, the others
// in another (see NewPartsCorpus).
func NewCorpus(model string, segs []*Segment, vectors ...*Vectors) *Corpus {
	parts := make([]Part, len(segs))
	for i, s := range segs {
		parts[i] = Part{Seg: s}
	}
	return NewPartsCorpus(model, parts, vectors...)
}

// NewPartsCorpus is NewCorpus over parts: a part belongs to the code
// collection when its first document is code, else to memory (parts are
// made of one kind).
func NewPartsCorpus(model string, parts []Part, vectors ...*Vectors) *Corpus {
	var memory, code []Part
	for _, p := range parts {
		switch {
		case p.Seg == nil || p.Seg.Len() == 0:
		case p.Seg.isCode():
			code = append(code, p)
		default:
			memory = append(memory, p)
		}
	}
	return Join(NewCollection(model, memory, vectors...), NewCollection(model, code, vectors...))
}

// NewCollection makes a collection of parts, nil when they have no
// documents. Their dead files' documents are never found (they still
// count in the statistics until the parts are merged). A document gets the vector
// of its EmbedText hash from the first of vectors that has one; sets of
// other models than model are ignored.
func NewCollection(model string, parts []Part, vectors ...*Vectors) *Collection {
	c := &Collection{}
	var total [numFields]float64
	for _, p := range parts {
		if p.Seg == nil || p.Seg.Len() == 0 {
			continue
		}
		c.parts = append(c.parts, p)
		c.base = append(c.base, c.n)
		c.n += p.Seg.Len()
		for _, l := range p.Seg.lex.lens {
			for f := range numFields {
				total[f] += float64(l[f])
			}
		}
	}
	if c.n == 0 {
		return nil
	}
	// Looked up for every document a search scores: at hand here, not
	// through its segment's chunks.
	c.test, c.file = make([]bool, 0, c.n), make([]uint32, 0, c.n)
	for _, p := range c.parts {
		for i := range p.Seg.Len() {
			c.test = append(c.test, p.Seg.isTest(i))
			c.file = append(c.file, uint32(c.files+p.Seg.fileOf(i)))
		}
		c.files += p.Seg.Files()
	}
	for f := range numFields {
		c.avg[f] = max(total[f]/float64(c.n), 1)
	}
	var usable []*Vectors
	for _, v := range vectors {
		if v != nil && v.Model == model && v.Len() > 0 {
			usable = append(usable, v)
		}
	}
	if len(usable) > 0 {
		c.vecs = make([][]float32, c.n)
		for si, p := range c.parts {
			for i, h := range p.Seg.hashes() {
				for _, v := range usable {
					if vec, ok := v.Get(h); ok {
						c.vecs[c.base[si]+i] = vec
						c.nvecs++
						break
					}
				}
			}
		}
	}
	return c
}

// Len returns the number of documents.
func (c *Corpus) Len() int {
	n := 0
	for _, cl := range c.colls {
		n += cl.n
	}
	return n
}

// Vectors returns how many documents have a vector.
func (c *Corpus) Vectors() int {
	n := 0
	for _, cl := range c.colls {
		n += cl.nvecs
	}
	return n
}

// locate returns the segment of the document with a number, and its
// number there.
func (c *Collection) locate(g int) (*Segment, int) {
	pi, _ := slices.BinarySearch(c.base, g+1)
	pi--
	return c.parts[pi].Seg, g - c.base[pi]
}

// hit returns the hit of the document with a number, without its content
// (see fill).
func (c *Collection) hit(g int, score float64) Hit {
	s, i := c.locate(g)
	d := s.light(i)
	return Hit{Doc: &d, Score: score, seg: s, i: i}
}

// Query is one search.
type Query struct {
	Text   string
	Type   string // a discovery type, or "" / "all" for everything
	Module string // "" for any module
	Limit  int
	// Vector is the query's embedding, of the corpus's model; nil for a
	// lexical search.
	Vector []float32
	// Done, when it closes (the call's time for the search is up), stops
	// the lexical ranking after the query word it is at: the results then
	// rank the documents by the words scored so far. nil: never.
	Done <-chan struct{}
}

// Hit is one result.
type Hit struct {
	Doc   *Doc
	Score float64 // 0..1, higher is better

	seg *Segment // where the document is
	i   int
}

// fill gives the hits' documents their content.
func fill(hits []Hit) {
	for _, h := range hits {
		h.Doc.Content = h.seg.text(h.i)
	}
}

// Search ranks the documents that pass the query's filters and returns
// the best Limit of them, with the mode that ranked them. Each collection
// ranks its own documents, scored from 0 to 1 (see collection.search), and
// the two lists are merged by score; ties go to the newer document, then
// the smaller id. With a query vector and documents that have vectors,
// the search is hybrid, else lexical.
func (c *Corpus) Search(q Query) ([]Hit, Mode) {
	mode := ModeLexical
	if q.Vector != nil && c.Vectors() > 0 {
		mode = ModeHybrid
	}
	var hits []Hit
	for _, cl := range c.colls {
		hits = append(hits, cl.search(q)...)
	}
	hits = top(hits, q.Limit)
	fill(hits)
	return hits, mode
}

// search ranks the collection's documents that pass the query's filters.
// Lexically, a document's score is the best document's query coverage
// scaled by its BM25 score, so 1 means every query word matched the best
// document and the order is BM25's. With a query vector and documents that
// have vectors, BM25 and cosine rankings are fused by reciprocal rank
// (scored so that first in both is 1), a document without a vector
// counting its BM25 rank twice.
func (c *Collection) search(q Query) []Hit {
	sc := c.scratch()
	defer c.release(sc)
	allowed := c.filter(q, sc.allowed)
	hybrid := q.Vector != nil && c.nvecs > 0
	depth := q.Limit // documents the ranking must order: the rest only count
	if hybrid {
		depth = fusionDepth
	}
	lexical := c.lexical(q.Text, allowed, sc, depth, q.Done)
	if !hybrid {
		// The limit's best and those that tie the last of them (see
		// order): top breaks the ties.
		keep := lexical.ranked
		hits := make([]Hit, 0, len(keep))
		scale := 0.0
		if len(keep) > 0 {
			g := keep[0]
			scale = lexical.cover[g] / lexical.scores[g]
		}
		for _, g := range keep {
			hits = append(hits, c.hit(g, min(lexical.scores[g]*scale, 1)))
		}
		return hits
	}
	dense := c.cosine(q.Vector, allowed, &sc.heap)
	fused := map[int]float64{}
	for r, g := range lexical.ranked[:min(len(lexical.ranked), fusionDepth)] {
		fused[g] += 1 / float64(rrfK+r+1)
		if c.vecs[g] == nil {
			// No vector yet (a note written a moment ago): its lexical
			// rank stands in for the missing one, so it is not buried
			// until the background embedding catches up.
			fused[g] += 1 / float64(rrfK+r+1)
		}
	}
	for r, g := range dense {
		fused[g] += 1 / float64(rrfK+r+1)
	}
	best := 2 / float64(rrfK+1)
	hits := make([]Hit, 0, len(fused))
	for g, s := range fused {
		hits = append(hits, c.hit(g, s/best))
	}
	return hits
}

// top sorts hits (score, then newer date, then id) and keeps limit.
func top(hits []Hit, limit int) []Hit {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := b.Doc.Date.Compare(a.Doc.Date); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc.ID, b.Doc.ID)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// filter sets which documents the query's type and module filters let
// through in allowed (cleared: its dead documents are left false). A type
// other than "all" keeps discoveries of that type only.
func (c *Collection) filter(q Query, allowed []bool) []bool {
	typed := q.Type != "" && q.Type != "all"
	for pi, p := range c.parts {
		base := c.base[pi]
		if code := p.Seg.code; code != nil {
			// Code is no discovery; a chunk's module is its file's.
			if typed {
				continue
			}
			file, ok := -1, false
			for i, h := range code.heads {
				if int(h.file) != file {
					file = int(h.file)
					ok = (p.Dead == nil || !p.Dead[file]) &&
						(q.Module == "" || ModuleMatches(codechunk.Module(code.files[file].path), q.Module))
				}
				allowed[base+i] = ok
			}
			continue
		}
		for i := range p.Seg.docs {
			d := &p.Seg.docs[i]
			ok := !p.dead(i)
			if ok && typed {
				ok = d.Source == SourceDiscovery && d.Type == q.Type
			}
			if ok && q.Module != "" {
				ok = ModuleMatches(d.Module, q.Module)
			}
			allowed[base+i] = ok
		}
	}
	return allowed
}

// lexicalRanking is BM25's answer: the matching documents best first, and
// their raw scores and query coverage, indexed by global document number.
type lexicalRanking struct {
	ranked []int
	scores []float64
	// cover is, per document, the share of the query's words it matches:
	// a word counts 1 when it occurs once (in the content or module), 0.6
	// through prefix expansion, half in the path alone.
	cover []float64
}

// expansion is one term a query word matches, with its weight.
type expansion struct {
	term   string
	weight float64
}

// idf is BM25's inverse document frequency.
func (c *Collection) idf(df int) float64 {
	return math.Log(1 + (float64(c.n)-float64(df)+0.5)/(float64(df)+0.5))
}

func (c *Collection) df(term string) int {
	n := 0
	for _, p := range c.parts {
		if i, ok := p.Seg.lex.find(term); ok {
			n += int(p.Seg.lex.dfs[i])
		}
	}
	return n
}

// expand returns the terms a query word matches: itself, and with
// minPrefix letters or more, the terms it starts and the terms that start
// it, at prefixWeight, the most frequent maxExpansions of them.
func (c *Collection) expand(word string) []expansion {
	out := []expansion{{term: word, weight: 1}}
	if len(word) < minPrefix {
		return out
	}
	seen := map[string]bool{word: true}
	var more []string
	for _, p := range c.parts {
		p.Seg.withPrefix(word, func(t string) {
			if !seen[t] {
				seen[t] = true
				more = append(more, t)
			}
		})
	}
	for n := minPrefix; n < len(word); n++ {
		if p := word[:n]; !seen[p] && c.df(p) > 0 {
			seen[p] = true
			more = append(more, p)
		}
	}
	if len(more) > maxExpansions {
		// Each term's count once: a collection of many segments (an index
		// built in batches) would look it up in each, at every comparison.
		dfs := make(map[string]int, len(more))
		for _, t := range more {
			dfs[t] = c.df(t)
		}
		slices.SortFunc(more, func(a, b string) int {
			return cmp.Or(cmp.Compare(dfs[b], dfs[a]), cmp.Compare(a, b))
		})
		more = more[:maxExpansions]
	}
	for _, t := range more {
		out = append(out, expansion{term: t, weight: prefixWeight})
	}
	return out
}

// lexical ranks the allowed documents for the query text with BM25F,
// until done closes: the best k of them (all when k ≤ 0) and those that
// tie the k-th (see order).
func (c *Collection) lexical(text string, allowed []bool, sc *scratch, k int, done <-chan struct{}) lexicalRanking {
	terms := QueryTerms(text)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	return c.bm25(terms, allowed, sc, k, done)
}

// scratch is the memory a search works in, one value per document of the
// collection searched (or more): kept for the next search (a search of
// the Go source tree would otherwise make 5 MB of garbage), and given back
// as it was found.
type scratch struct {
	allowed       []bool    // set for every live document by filter
	scores, cover []float64 // the ranking's; zero but for ranked
	best, bestCov []float64 // per query word; always zero between words
	ranked        []int     // every document scored, the ranked ones first
	touched       []int
	heap          simHeap   // see kthBest and cosine
	fileBest      []float64 // per file, its best two scores; zero between searches
}

// scratches are kept apart from collections: a pool inside one would keep
// it, and the index state it belongs to, alive after the state is gone.
var scratches sync.Pool // of *scratch

// scratch takes a scratch for the collection.
func (c *Collection) scratch() *scratch {
	if sc, ok := scratches.Get().(*scratch); ok && len(sc.allowed) >= c.n {
		clear(sc.allowed[:c.n])
		return sc
	}
	return &scratch{allowed: make([]bool, c.n), scores: make([]float64, c.n), cover: make([]float64, c.n),
		best: make([]float64, c.n), bestCov: make([]float64, c.n)}
}

// release clears what a search left in sc and keeps it for the next.
func (c *Collection) release(sc *scratch) {
	for _, g := range sc.ranked {
		sc.scores[g], sc.cover[g] = 0, 0
	}
	sc.ranked, sc.touched = sc.ranked[:0], sc.touched[:0]
	scratches.Put(sc)
}

// bm25 scores the allowed documents against the query's words with BM25F.
// For each query word a document scores its best matching term; the
// document's score is the sum over the query's words. Once done closes, the
// words left are not scored.
func (c *Collection) bm25(words []string, allowed []bool, sc *scratch, k int, done <-chan struct{}) lexicalRanking {
	out := lexicalRanking{scores: sc.scores, cover: sc.cover, ranked: sc.ranked[:0]}
	best := sc.best           // this word's best score per document
	cover := sc.bestCov       // and its best coverage
	touched := sc.touched[:0] // documents with a score for this word
	for _, w := range words {
		if closed(done) {
			break
		}
		for _, e := range c.expand(w) {
			// A common word expands to many terms of long postings: stop
			// between terms too, not only between words.
			if closed(done) {
				break
			}
			df := c.df(e.term)
			if df == 0 {
				continue
			}
			idf := c.idf(df) * e.weight
			for pi := range c.parts {
				touched = c.scoreTerm(pi, e, idf, allowed, best, cover, touched)
			}
		}
		for _, g := range touched {
			if out.scores[g] == 0 {
				out.ranked = append(out.ranked, g)
			}
			out.scores[g] += best[g]
			out.cover[g] += cover[g] / float64(len(words))
			best[g], cover[g] = 0, 0
		}
		touched = touched[:0]
	}
	sc.ranked, sc.touched = out.ranked, touched // grown: kept for the next search
	out.ranked = c.order(out, k, sc)
	return out
}

// scoreTerm scores the allowed documents of part pi that hold the expanded
// term e, of (weighted) inverse document frequency idf: each keeps in best
// and cover its best score and coverage for the query word e comes from.
// It returns touched with the documents scored for that word for the
// first time added.
func (c *Collection) scoreTerm(pi int, e expansion, idf float64, allowed []bool, best, cover []float64, touched []int) []int {
	lx := c.parts[pi].Seg.lex
	ti, ok := lx.find(e.term)
	if !ok {
		return touched
	}
	// The postings decoded here, not through lx.each: a long question
	// reads a million of them, and a call for each costs a tenth of the
	// search.
	base, buf := c.base[pi], lx.arena[lx.offs[ti]:lx.offs[ti+1]]
	var p posting
	for len(buf) > 0 {
		var delta uint64
		buf, delta, _ = readPosting(buf, &p) // checked when the lexicon was made or read
		p.doc += uint32(delta)
		g := base + int(p.doc)
		if !allowed[g] {
			continue
		}
		var tf float64
		for f := range numFields {
			if p.tf[f] > 0 {
				norm := 1 - fieldB[f] + fieldB[f]*float64(lx.lens[p.doc][f])/c.avg[f]
				tf += fieldWeight[f] * float64(p.tf[f]) / norm
			}
		}
		score := idf * tf * (bm25K1 + 1) / (tf + bm25K1)
		if best[g] == 0 {
			touched = append(touched, g)
		}
		best[g] = max(best[g], score)
		cover[g] = max(cover[g], e.weight*min(tf, 1))
	}
	return touched
}

// closed reports whether done (nil: never) is closed, without waiting.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// order adds each document's file evidence (fileEvidence), weighs down
// the scores of tests in the code (testPrior) and returns the best k ranked
// documents (all when k ≤ 0), and those that tie the k-th (at most
// maxTied of them, see best), sorted best first, the earlier document first on a tie:
// the same as the first of all of them sorted, without sorting a common
// word's hundred thousand documents. It moves them to the front of
// out.ranked, which keeps every scored document (release clears them).
func (c *Collection) order(out lexicalRanking, k int, sc *scratch) []int {
	c.addFileEvidence(out, sc)
	for _, g := range out.ranked {
		if c.test[g] {
			out.scores[g] *= testPrior
		}
	}
	ranked := out.ranked
	if k > 0 && k < len(ranked) {
		ranked = best(ranked, out.scores, k, sc)
	}
	slices.SortFunc(ranked, func(a, b int) int {
		if c := cmp.Compare(out.scores[b], out.scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ranked
}

// addFileEvidence adds to each ranked document's score fileEvidence
// times the best score of the other ranked documents of its file.
func (c *Collection) addFileEvidence(out lexicalRanking, sc *scratch) {
	if len(sc.fileBest) < 2*c.files {
		sc.fileBest = make([]float64, 2*c.files)
	}
	best := sc.fileBest // file f's best score is best[2f], the next best[2f+1]
	for _, g := range out.ranked {
		f, s := 2*c.file[g], out.scores[g]
		switch {
		case s > best[f]:
			best[f], best[f+1] = s, best[f]
		case s > best[f+1]:
			best[f+1] = s
		}
	}
	for _, g := range out.ranked {
		f, s := 2*c.file[g], out.scores[g]
		other := best[f]
		if s == other {
			other = best[f+1] // it is the best: the next is the best of the others
		}
		out.scores[g] = s + fileEvidence*other
	}
	for _, g := range out.ranked {
		f := 2 * c.file[g]
		best[f], best[f+1] = 0, 0
	}
}

// maxTied is how many documents beyond the k best a ranking keeps that
// tie the k-th, for top to break the tie (by date, then id) across
// collections: ties beyond it are broken by document order. A repository of
// generated code can make tens of thousands of chunks score alike, and each
// one kept costs a document and a place in top's sort.
const maxTied = 64

// best moves to the front of ranked the k best documents and those that tie
// the k-th, at most maxTied of these (the earliest documents), and returns
// them, unsorted.
func best(ranked []int, scores []float64, k int, sc *scratch) []int {
	least := kthBest(ranked, scores, k, &sc.heap)
	n := 0
	for i, g := range ranked {
		if scores[g] > least {
			ranked[n], ranked[i] = g, ranked[n]
			n++
		}
	}
	tied := ranked[n:]
	m := 0
	for i, g := range tied {
		if scores[g] == least {
			tied[m], tied[i] = g, tied[m]
			m++
		}
	}
	tied = tied[:m]
	if room := k - n + maxTied; len(tied) > room {
		slices.Sort(tied)
		tied = tied[:room]
	}
	return ranked[:n+len(tied)]
}

// kthBest returns the k-th highest score of the ranked documents (k ≤
// their number), keeping the best k seen in h.
func kthBest(ranked []int, scores []float64, k int, h *simHeap) float64 {
	*h = (*h)[:0]
	for _, g := range ranked {
		h.offer(scored{g, scores[g]}, k)
	}
	return (*h)[0].score
}

// cosine returns the fusionDepth allowed documents most similar to the
// query vector, best first. It keeps the best seen in h, which it empties
// first and leaves empty (the search's scratch heap: kthBest is done with
// it by then).
func (c *Collection) cosine(qv []float32, allowed []bool, h *simHeap) []int {
	*h = (*h)[:0]
	for g, v := range c.vecs {
		if v == nil || !allowed[g] || len(v) != len(qv) {
			continue
		}
		h.offer(scored{g, float64(Dot(qv, v))}, fusionDepth)
	}
	out := make([]int, len(*h))
	for i := len(*h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(scored).g
	}
	return out
}

// scored is a document and its score: a cosine similarity (cosine), or a
// lexical score (kthBest).
type scored struct {
	g     int
	score float64
}

// worse orders by score, then prefers the smaller document number.
func (a scored) worse(b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.g > b.g
}

// simHeap is a min-heap of scored documents, the worst on top.
type simHeap []scored

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].worse(h[j]) }
func (h simHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *simHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps d in h if it is among the k best (k ≥ 1) offered since h
// was emptied: h fills to k, then d replaces the worst when better.
func (h *simHeap) offer(d scored, k int) {
	switch {
	case len(*h) < k:
		heap.Push(h, d)
	case (*h)[0].worse(d):
		(*h)[0] = d
		heap.Fix(h, 0)
	}
}
