package contextindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// BM25 and query-expansion constants.
const (
	// bm25K1 is BM25's term-frequency saturation: 2.0 (from 1.2, tuned on
	// contextbench's tuning half with the field weights) lets a word a
	// chunk repeats count more before it saturates.
	bm25K1 = 2.0
	// prefixWeight scales a match through prefix expansion: a query word
	// of minPrefix letters or more matches the terms it starts
	// ("auth" → "authentication") and the terms of minPrefix letters or
	// more that start it ("authentication" → "auth").
	prefixWeight = 0.6
	minPrefix    = 4
	// maxExpansions bounds the terms one query word expands to (the most
	// frequent are kept).
	maxExpansions = 64
)

// posting is one document's term frequencies in each field.
type posting struct {
	doc uint32
	tf  [numFields]uint16
}

// lexicon is the lexical statistics of a segment's documents: each
// document's field lengths and, per term (sorted), the documents that
// contain it, encoded back to back in one byte arena. A posting is a
// uvarint of the document number's delta from the previous posting, the
// mask of the fields the term occurs in and a bit set when it occurs once
// in each (delta<<(numFields+1) | mask<<1 | once), then, without that
// bit, the term's frequency in each of those fields, as uvarints. A term
// once in a chunk's content costs one or two bytes (the bit saves a
// quarter of the arena of the Go tree).
type lexicon struct {
	lens  []fieldLens // per document
	terms termList
	dfs   []uint32 // documents per term
	offs  []uint32 // term i's postings are arena[offs[i]:offs[i+1]]
	arena []byte
}

// fieldLens are a document's number of terms in each field, at most
// math.MaxUint16 (a chunk is at most 32 KB).
type fieldLens [numFields]uint16

// termList is sorted terms held back to back in one string: an index of
// the Go source tree has some 600,000 distinct terms, which as strings of
// their own would cost twice the memory and give the garbage collector
// as many pointers to follow.
type termList struct {
	data string
	ends []uint32 // term i is data[ends[i-1]:ends[i]], the first from 0
}

func (l *termList) len() int { return len(l.ends) }

// at returns term i.
func (l *termList) at(i int) string {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.data[start:l.ends[i]]
}

// find returns where term is, or would be, in the list.
func (l *termList) find(term string) (int, bool) {
	i := sort.Search(l.len(), func(i int) bool { return l.at(i) >= term })
	return i, i < l.len() && l.at(i) == term
}

// termListBuilder makes a termList from terms given in order.
type termListBuilder struct {
	data strings.Builder
	ends []uint32
}

func (b *termListBuilder) add(term string) {
	b.data.WriteString(term)
	b.ends = append(b.ends, uint32(b.data.Len()))
}

func (b *termListBuilder) list() termList {
	return termList{data: built(&b.data), ends: slices.Clip(b.ends)}
}

// built returns what b built, copied when b has much more room than it
// holds (it grew by doubling): an index keeps it for as long as it lives.
func built(b *strings.Builder) string {
	s := b.String()
	if b.Cap() > len(s)+len(s)/8 {
		return strings.Clone(s)
	}
	return s
}

// lexiconBuilder counts the terms of documents added one after the other
// (addDoc says what goes in which field) and lays them out as a lexicon.
// Terms are interned: each distinct term is stored once and known by its
// number, and a document's terms are counted in a slice, not a map.
type lexiconBuilder struct {
	tok  tokenizer
	ids  map[string]uint32 // term → number
	byID []string          // number → term
	// The document being counted: its terms with their frequencies, its
	// field lengths, and per term number, its place in cur plus one (0:
	// not in this document).
	cur     []docTerm
	curLens fieldLens
	slot    []uint32
	// What the documents counted so far gave.
	lens     []fieldLens
	postings []termPosting // in document order
	// Per field, the last text given to shared and its terms' numbers.
	last [numFields]sharedText
	// Room for lexicon to work in.
	order, rank, start, next, sorted []uint32
	arena                            []byte
}

type docTerm struct {
	term uint32
	tf   [numFields]uint16
}

type termPosting struct {
	term uint32
	posting
}

type sharedText struct {
	text string
	ids  []uint32
}

// text counts the terms (Tokens) of text in field f of the document.
func (b *lexiconBuilder) text(f int, text string) {
	b.tok.each(text, func(term string) { b.count(f, b.intern(term)) })
}

// terms counts terms, as they are, in field f of the document.
func (b *lexiconBuilder) terms(f int, terms []string) {
	for _, t := range terms {
		b.count(f, b.intern(t))
	}
}

// shared is text for a text every chunk of a file has (its path, its
// folder): tokenized once for the chunks of a file in a row.
func (b *lexiconBuilder) shared(f int, text string) {
	c := &b.last[f]
	if c.ids == nil || c.text != text {
		c.text, c.ids = text, c.ids[:0]
		b.tok.each(text, func(term string) { c.ids = append(c.ids, b.intern(term)) })
	}
	for _, id := range c.ids {
		b.count(f, id)
	}
}

// intern returns the number of a term, numbering it when it is new.
func (b *lexiconBuilder) intern(term string) uint32 {
	if id, ok := b.ids[term]; ok {
		return id
	}
	if b.ids == nil {
		b.ids = map[string]uint32{}
	}
	id := uint32(len(b.byID))
	term = strings.Clone(term) // the tokenizer's buffer
	b.ids[term] = id
	b.byID = append(b.byID, term)
	b.slot = append(b.slot, 0)
	return id
}

// count counts one occurrence of a term in field f of the document.
func (b *lexiconBuilder) count(f int, id uint32) {
	s := b.slot[id]
	if s == 0 {
		b.cur = append(b.cur, docTerm{term: id})
		s = uint32(len(b.cur))
		b.slot[id] = s
	}
	if tf := &b.cur[s-1].tf[f]; *tf < math.MaxUint16 {
		*tf++
	}
	if b.curLens[f] < math.MaxUint16 {
		b.curLens[f]++
	}
}

// endDoc ends the document: its terms become postings.
func (b *lexiconBuilder) endDoc() {
	doc := uint32(len(b.lens))
	b.lens = append(b.lens, b.curLens)
	for _, t := range b.cur {
		b.postings = append(b.postings, termPosting{term: t.term, posting: posting{doc: doc, tf: t.tf}})
		b.slot[t.term] = 0
	}
	b.cur, b.curLens = b.cur[:0], fieldLens{}
}

// lexicon lays the postings out by term, in term order, and empties the
// builder for the next segment (keeping its memory: see
// lexiconBuilders).
func (b *lexiconBuilder) lexicon() *lexicon {
	n := len(b.byID)
	order := grow(b.order, n) // term numbers in term order
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return strings.Compare(b.byID[x], b.byID[y]) })
	rank := grow(b.rank, n) // number → place in order
	termBytes := 0
	for r, id := range order {
		rank[id] = uint32(r)
		termBytes += len(b.byID[id])
	}
	// A counting sort by term keeps each term's postings in document
	// order.
	start := grow(b.start, n+1)
	clear(start)
	for _, p := range b.postings {
		start[rank[p.term]+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	sorted := grow(b.sorted, len(b.postings)) // postings by term: their places in b.postings
	next := append(b.next[:0], start...)
	for i, p := range b.postings {
		r := rank[p.term]
		sorted[next[r]] = uint32(i)
		next[r]++
	}
	lx := &lexicon{lens: slices.Clone(b.lens), dfs: make([]uint32, n), offs: make([]uint32, n+1)}
	var terms termListBuilder
	terms.data.Grow(termBytes)
	terms.ends = make([]uint32, 0, n)
	enc := postingEncoder{arena: b.arena[:0]}
	for r, id := range order {
		terms.add(b.byID[id])
		lx.dfs[r] = start[r+1] - start[r]
		enc.last = 0
		for _, i := range sorted[start[r]:start[r+1]] {
			enc.add(b.postings[i].posting)
		}
		lx.offs[r+1] = uint32(len(enc.arena))
	}
	lx.terms = terms.list()
	lx.arena = slices.Clone(enc.arena)
	b.order, b.rank, b.start, b.sorted, b.next, b.arena = order, rank, start, sorted, next, enc.arena
	b.reset()
	return lx
}

// maxKeptPostings bounds the postings a builder keeps room for: a batch
// of large files (generated tables) would otherwise have every builder
// in the pool hold room for them.
const maxKeptPostings = 1 << 19

// reset empties the builder, keeping its memory (up to maxKeptPostings).
func (b *lexiconBuilder) reset() {
	if cap(b.postings) > maxKeptPostings {
		*b = lexiconBuilder{}
		return
	}
	clear(b.ids)
	clear(b.byID) // let the terms go
	b.byID, b.slot, b.lens, b.postings, b.cur = b.byID[:0], b.slot[:0], b.lens[:0], b.postings[:0], b.cur[:0]
	b.curLens, b.last = fieldLens{}, [numFields]sharedText{}
}

// lexiconBuilders are kept for the next segment: a build cuts a segment
// per batch of files, and a builder that made one has the room the next
// needs (a build of the Go source tree allocates a third less).
var lexiconBuilders = sync.Pool{New: func() any { return new(lexiconBuilder) }}

// grow returns s resized to n, reusing its memory when it has room.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// postingEncoder appends postings to an arena.
type postingEncoder struct {
	arena []byte
	last  uint32 // the previous posting's document in this term's list
}

func (e *postingEncoder) add(p posting) {
	mask, ones := uint64(0), uint64(1)
	for f := range numFields {
		if p.tf[f] > 0 {
			mask |= 1 << f
		}
		if p.tf[f] > 1 {
			ones = 0
		}
	}
	e.arena = binary.AppendUvarint(e.arena, uint64(p.doc-e.last)<<postingShift|mask<<1|ones)
	for f := range numFields {
		if p.tf[f] > 0 && ones == 0 {
			e.arena = binary.AppendUvarint(e.arena, uint64(p.tf[f]))
		}
	}
	e.last = p.doc
}

// postingShift is where a posting's first uvarint holds the document's
// delta (see lexicon).
const postingShift = numFields + 1

// readPosting decodes the posting at the start of buf into p (its term
// frequencies) and returns the rest of buf and the delta of its document;
// ok is false when buf does not start with a well-formed posting.
func readPosting(buf []byte, p *posting) (rest []byte, delta uint64, ok bool) {
	v, n := binary.Uvarint(buf)
	mask, ones := v>>1&(1<<numFields-1), v&1 == 1
	if n <= 0 || mask == 0 {
		return nil, 0, false
	}
	buf = buf[n:]
	for f := range numFields {
		p.tf[f] = 0
		switch {
		case mask&(1<<f) == 0:
		case ones:
			p.tf[f] = 1
		default:
			tf, n := binary.Uvarint(buf)
			if n <= 0 || tf == 0 || tf > math.MaxUint16 {
				return nil, 0, false
			}
			buf = buf[n:]
			p.tf[f] = uint16(tf)
		}
	}
	return buf, v >> postingShift, true
}

// find returns the index of term in the lexicon.
func (lx *lexicon) find(term string) (int, bool) { return lx.terms.find(term) }

// each calls fn for every posting of terms[i], in document order.
func (lx *lexicon) each(i int, fn func(p posting)) {
	buf := lx.arena[lx.offs[i]:lx.offs[i+1]]
	var p posting
	for len(buf) > 0 {
		var delta uint64
		buf, delta, _ = readPosting(buf, &p) // checked when the lexicon was made or read
		p.doc += uint32(delta)
		fn(p)
	}
}

// withPrefix calls fn for every term of the segment starting with p.
func (s *Segment) withPrefix(p string, fn func(term string)) {
	terms := &s.lex.terms
	i, _ := terms.find(p)
	for ; i < terms.len() && strings.HasPrefix(terms.at(i), p); i++ {
		fn(terms.at(i))
	}
}

// mergeLexicons joins the parts' lexicons into one over the documents
// numbered by renumber, whose field lengths are lens: it walks the parts'
// sorted terms together, and a term left with no live document goes.
func mergeLexicons(parts []Part, renumber [][]int32, lens []fieldLens) *lexicon {
	next := make([]int, len(parts)) // per part, its next term
	arenaSize, termsCap, termBytes := 0, 0, 0
	for _, p := range parts {
		arenaSize += len(p.Seg.lex.arena)
		termsCap = max(termsCap, p.Seg.lex.terms.len())
		termBytes = max(termBytes, len(p.Seg.lex.terms.data))
	}
	lx := &lexicon{lens: lens, dfs: make([]uint32, 0, termsCap), offs: []uint32{0}}
	var terms termListBuilder
	terms.data.Grow(termBytes)
	enc := postingEncoder{arena: make([]byte, 0, arenaSize)}
	for {
		term, ok := smallestNextTerm(parts, next)
		if !ok {
			break
		}
		enc.last = 0
		df := uint32(0)
		for pi, p := range parts {
			plx := p.Seg.lex
			if next[pi] >= plx.terms.len() || plx.terms.at(next[pi]) != term {
				continue
			}
			plx.each(next[pi], func(q posting) {
				if nd := renumber[pi][q.doc]; nd >= 0 {
					q.doc = uint32(nd)
					enc.add(q)
					df++
				}
			})
			next[pi]++
		}
		if df > 0 {
			terms.add(term)
			lx.dfs = append(lx.dfs, df)
			lx.offs = append(lx.offs, uint32(len(enc.arena)))
		}
	}
	lx.terms, lx.dfs, lx.offs = terms.list(), slices.Clip(lx.dfs), slices.Clip(lx.offs)
	lx.arena = enc.arena
	if cap(lx.arena) > len(lx.arena)+len(lx.arena)/8 { // dead documents left out
		lx.arena = slices.Clone(lx.arena) // exactly its size: the arena is most of an index
	}
	return lx
}

// smallestNextTerm returns the smallest of the parts' next terms, and
// false when every part's terms are done.
func smallestNextTerm(parts []Part, next []int) (string, bool) {
	term, found := "", false
	for pi, p := range parts {
		if terms := &p.Seg.lex.terms; next[pi] < terms.len() && (!found || terms.at(next[pi]) < term) {
			term, found = terms.at(next[pi]), true
		}
	}
	return term, found
}

// ---- encoding ----

// lexicalMagic starts lexical.bin.
const lexicalMagic = "TSLEX4\n"

// EncodeLexical writes the segment's BM25 statistics, lexical.bin (not
// its documents): the document count and each document's field lengths, the
// term count, each term's length, document count and byte length of its
// postings, then the terms back to back and the arena. Numbers are
// uvarints. The terms and the arena load without a copy.
func (s *Segment) EncodeLexical(w io.Writer) error {
	lx := s.lex
	n := lx.terms.len()
	b := make([]byte, 0, n*5+len(lx.lens)*6+64)
	b = append(b, lexicalMagic...)
	b = binary.AppendUvarint(b, uint64(len(lx.lens)))
	for _, l := range lx.lens {
		for _, v := range l {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i := range n {
		b = binary.AppendUvarint(b, uint64(len(lx.terms.at(i))))
	}
	for i := range n {
		b = binary.AppendUvarint(b, uint64(lx.dfs[i]))
	}
	for i := range n {
		b = binary.AppendUvarint(b, uint64(lx.offs[i+1]-lx.offs[i]))
	}
	b = append(b, lx.terms.data...)
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err := w.Write(lx.arena)
	return err
}

// decodeLexicon reads the output of EncodeLexical for a segment of docs
// documents, checking that every posting is well formed. The lexicon
// keeps lexical (its terms and arena are read in place): it must not
// change.
func decodeLexicon(docs int, lexical []byte) (*lexicon, error) {
	if !bytes.HasPrefix(lexical, []byte(lexicalMagic)) {
		return nil, fmt.Errorf("%s: not a lexical statistics file of this version", LexicalFile)
	}
	r := reader{buf: lexical[len(lexicalMagic):]}
	n := r.uvarint(math.MaxUint32)
	if r.err == nil && n != uint64(docs) {
		return nil, fmt.Errorf("%s: %d documents, the chunks have %d", LexicalFile, n, docs)
	}
	lx := &lexicon{lens: make([]fieldLens, docs)}
	for i := range lx.lens {
		for f := range numFields {
			lx.lens[i][f] = uint16(r.uvarint(math.MaxUint16))
		}
	}
	terms := r.uvarint(uint64(len(lexical)))
	lx.terms.ends = make([]uint32, terms)
	lx.dfs = make([]uint32, terms)
	lx.offs = make([]uint32, terms+1)
	end := uint32(0)
	for i := range terms {
		end += uint32(r.uvarint(maxTokenBytes * 4))
		lx.terms.ends[i] = end
	}
	for i := range terms {
		lx.dfs[i] = uint32(r.uvarint(n))
	}
	for i := range terms {
		lx.offs[i+1] = lx.offs[i] + uint32(r.uvarint(math.MaxUint32))
	}
	data := r.bytes(uint64(end))
	if r.err == nil && uint64(len(r.buf)) != uint64(lx.offs[terms]) {
		r.err = fmt.Errorf("the postings take %d bytes, the terms say %d", len(r.buf), lx.offs[terms])
	}
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", LexicalFile, r.err)
	}
	lx.terms.data = unsafe.String(unsafe.SliceData(data), len(data))
	lx.arena = r.buf
	for i := 1; i < lx.terms.len(); i++ {
		if lx.terms.at(i-1) >= lx.terms.at(i) {
			return nil, fmt.Errorf("%s: terms out of order", LexicalFile)
		}
	}
	if err := lx.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", LexicalFile, err)
	}
	return lx, nil
}

// check decodes every posting once: in range, in order, as many as the
// terms say, each in at least one field.
func (lx *lexicon) check() error {
	n := uint64(len(lx.lens))
	for i := range lx.terms.len() {
		buf := lx.arena[lx.offs[i]:lx.offs[i+1]]
		doc, count := uint64(0), uint32(0)
		var p posting
		for len(buf) > 0 {
			var delta uint64
			var ok bool
			if buf, delta, ok = readPosting(buf, &p); !ok {
				return fmt.Errorf("term %q: a bad posting", lx.terms.at(i))
			}
			if count > 0 && delta == 0 {
				return fmt.Errorf("term %q: postings out of order", lx.terms.at(i))
			}
			if doc += delta; doc >= n {
				return fmt.Errorf("term %q: posting for document %d of %d", lx.terms.at(i), doc, n)
			}
			count++
		}
		if count != lx.dfs[i] || count == 0 {
			return fmt.Errorf("term %q: %d postings, %d said", lx.terms.at(i), count, lx.dfs[i])
		}
	}
	return nil
}

// reader reads uvarints, remembering the first error.
type reader struct {
	buf []byte
	err error
}

func (r *reader) uvarint(max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	switch {
	case n <= 0:
		r.err = io.ErrUnexpectedEOF
		return 0
	case v > max:
		r.err = fmt.Errorf("value %d out of range", v)
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}
