package precise

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// The writer gathers what it learns of each symbol from every document
// (information, relationships pointing at it, occurrences) as records,
// and the symbol table needs them grouped by symbol, then by document
// path and position. The sorter sorts them within a memory budget: a full
// batch is sorted and spilled to a temporary file (a run), and at the end
// the runs and the last batch are merged (an external merge sort).

// The kinds of record, in the order a symbol's records come out.
const (
	recInfo uint8 = iota // data: what a document says of the symbol (info, relationships)
	recImpl              // data: another symbol and the flags of its relationship to this one
	recRef               // an occurrence
)

// external is the document number of what the index's external symbols
// say: it sorts after every document.
const external = math.MaxUint32

// span is a Range in 16 bytes (positions are int32 in SCIP).
type span [4]int32

func toSpan(r Range) span {
	return span{int32(r.Line), int32(r.Column), int32(r.EndLine), int32(r.EndColumn)}
}

func (s span) rng() Range { return Range{int(s[0]), int(s[1]), int(s[2]), int(s[3])} }

// record is one fact about a symbol.
type record struct {
	sym   uint32 // the symbol's number in its batch (see sorter.syms)
	kind  uint8
	doc   uint32 // the document's number (Writer.docs), or external
	roles Roles
	r     span
	encl  span
	data  string
}

// recordBytes is what a record costs in memory, besides its data; a
// batch's symbol costs its length and symbolBytes.
const (
	recordBytes = 80
	symbolBytes = 64
)

// maxFanIn bounds the runs merged at once (each holds a file and a
// buffer); more are merged in groups first.
const maxFanIn = 64

// item is a record with its symbol, as the merge gives it.
type item struct {
	sym string
	rec record
}

// compareItems orders items by symbol, kind, document (by rank: its
// path's place), position, and the rest, so equal facts come together.
func compareItems(a, b *item, rank func(doc uint32) uint32) int {
	return cmp.Or(strings.Compare(a.sym, b.sym), compareFacts(&a.rec, &b.rec, rank))
}

func compareFacts(a, b *record, rank func(doc uint32) uint32) int {
	return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(rank(a.doc), rank(b.doc)),
		slices.Compare(a.r[:], b.r[:]), cmp.Compare(a.roles, b.roles),
		slices.Compare(a.encl[:], b.encl[:]), strings.Compare(a.data, b.data))
}

type sorter struct {
	dir    string
	budget int64
	path   func(doc uint32) string // a document's path
	symNum map[string]uint32
	syms   []string
	recs   []record
	used   int64
	runs   []*os.File
	spills int
	err    error // a spill that failed: the sort is lost
}

func newSorter(dir string, budget int64, path func(uint32) string) *sorter {
	return &sorter{dir: dir, budget: budget, path: path, symNum: map[string]uint32{}}
}

// add gathers a record of sym, spilling the batch when it is full.
func (s *sorter) add(sym string, r record) error {
	if s.err != nil {
		return s.err
	}
	n, ok := s.symNum[sym]
	if !ok {
		n = uint32(len(s.syms))
		s.symNum[sym] = n
		s.syms = append(s.syms, sym)
		s.used += int64(len(sym)) + symbolBytes
	}
	r.sym = n
	s.recs = append(s.recs, r)
	s.used += recordBytes + int64(len(r.data))
	if s.used < s.budget {
		return nil
	}
	s.err = s.spill()
	return s.err
}

// sortBatch sorts the batch's records in merge order, by the ranks of its
// symbols and documents among the batch's.
func (s *sorter) sortBatch() {
	symRank := make([]uint32, len(s.syms))
	for i, n := range sortedBy(len(s.syms), func(i int) string { return s.syms[i] }) {
		symRank[n] = uint32(i)
	}
	docs := map[uint32]uint32{}
	for _, r := range s.recs {
		docs[r.doc] = 0
	}
	nums := make([]uint32, 0, len(docs))
	for d := range docs {
		nums = append(nums, d)
	}
	slices.SortFunc(nums, func(a, b uint32) int {
		if a == external || b == external {
			return cmp.Compare(a, b) // external is the largest number
		}
		return strings.Compare(s.path(a), s.path(b))
	})
	for i, d := range nums {
		docs[d] = uint32(i)
	}
	rank := func(doc uint32) uint32 { return docs[doc] }
	slices.SortFunc(s.recs, func(a, b record) int {
		return cmp.Or(cmp.Compare(symRank[a.sym], symRank[b.sym]), compareFacts(&a, &b, rank))
	})
}

// sortedBy returns 0..n-1 in the order of key.
func sortedBy(n int, key func(int) string) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(key(a), key(b)) })
	return order
}

// spill sorts the batch and writes it to a run.
func (s *sorter) spill() error {
	s.sortBatch()
	f, err := newRun(s.dir)
	if err != nil {
		return err
	}
	w := newRunWriter(f)
	for i := range s.recs {
		w.write(&item{sym: s.syms[s.recs[i].sym], rec: s.recs[i]})
	}
	if err := w.finish(); err != nil {
		f.Close()
		return err
	}
	s.runs = append(s.runs, f)
	s.spills++
	s.symNum, s.syms, s.recs, s.used = map[string]uint32{}, nil, nil, 0
	return nil
}

// newRun makes a temporary file that disappears when closed (it is
// removed at once: nothing is left behind if the process dies).
func newRun(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "precise-run-*")
	if err != nil {
		return nil, fmt.Errorf("precise: spill space: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// merge returns the records of every run and the batch in merge order,
// each fact once. rank gives a document's place among all by path.
func (s *sorter) merge(rank func(uint32) uint32) (*merger, error) {
	s.sortBatch()
	for len(s.runs) > maxFanIn {
		f, err := s.mergeRuns(s.runs[:maxFanIn], rank)
		if err != nil {
			return nil, err
		}
		s.runs = append(s.runs[maxFanIn:], f)
	}
	sources := []source{&batchSource{s: s}}
	for _, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("precise: spill space: %w", err)
		}
		sources = append(sources, &runSource{r: bufio.NewReaderSize(f, 64<<10)})
	}
	return newMerger(sources, rank)
}

// mergeRuns merges some runs into one, closing them.
func (s *sorter) mergeRuns(runs []*os.File, rank func(uint32) uint32) (*os.File, error) {
	var sources []source
	for _, f := range runs {
		defer f.Close()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("precise: spill space: %w", err)
		}
		sources = append(sources, &runSource{r: bufio.NewReaderSize(f, 64<<10)})
	}
	m, err := newMerger(sources, rank)
	if err != nil {
		return nil, err
	}
	out, err := newRun(s.dir)
	if err != nil {
		return nil, err
	}
	w := newRunWriter(out)
	for {
		it, ok, err := m.next()
		if err != nil || !ok {
			if err == nil {
				err = w.finish()
			}
			if err != nil {
				out.Close()
				return nil, err
			}
			return out, nil
		}
		w.write(it)
	}
}

// close releases the runs.
func (s *sorter) close() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
}

// runWriter writes items to a run: the symbol front-coded against the
// one before, the kind, the document, then the position (occurrences) or
// the data (the others).
type runWriter struct {
	w    *bufio.Writer
	prev string
	e    enc
	err  error
}

func newRunWriter(f *os.File) *runWriter { return &runWriter{w: bufio.NewWriterSize(f, 64<<10)} }

func (w *runWriter) write(it *item) {
	e := &w.e
	e.b = e.b[:0]
	e.prefixed(w.prev, it.sym)
	w.prev = it.sym
	r := &it.rec
	e.b = append(e.b, r.kind)
	e.uint(uint64(r.doc))
	if r.kind == recRef {
		for _, v := range r.r {
			e.uint(uint64(uint32(v)))
		}
		for _, v := range r.encl {
			e.uint(uint64(uint32(v)))
		}
		e.uint(uint64(r.roles))
	} else {
		e.str(r.data)
	}
	if w.err == nil {
		_, w.err = w.w.Write(e.b)
	}
}

func (w *runWriter) finish() error {
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("precise: spill space: %w", w.err)
	}
	return nil
}

// source gives items in merge order.
type source interface {
	next() (item, bool, error)
}

// batchSource gives the sorter's last batch.
type batchSource struct {
	s *sorter
	i int
}

func (b *batchSource) next() (item, bool, error) {
	if b.i == len(b.s.recs) {
		return item{}, false, nil
	}
	r := b.s.recs[b.i]
	b.i++
	return item{sym: b.s.syms[r.sym], rec: r}, true, nil
}

// runSource reads a run back.
type runSource struct {
	r    *bufio.Reader
	prev string
}

func (s *runSource) next() (item, bool, error) {
	shared, err := binary.ReadUvarint(s.r)
	if errors.Is(err, io.EOF) {
		return item{}, false, nil
	}
	var it item
	suffix, err := s.readString(err)
	if err == nil && shared > uint64(len(s.prev)) {
		err = errors.New("bad symbol prefix")
	}
	if err != nil {
		return item{}, false, fmt.Errorf("precise: reading spilled records: %w", err)
	}
	it.sym = s.prev[:shared] + suffix
	s.prev = it.sym
	err = s.readRecord(&it.rec)
	if err != nil {
		return item{}, false, fmt.Errorf("precise: reading spilled records: %w", err)
	}
	return it, true, nil
}

func (s *runSource) readRecord(r *record) error {
	kind, err := s.r.ReadByte()
	r.kind = kind
	doc, err := s.readUint(err)
	r.doc = uint32(doc)
	if kind != recRef {
		r.data, err = s.readString(err)
		return err
	}
	for i := range 8 {
		v, e := s.readUint(err)
		err = e
		if i < 4 {
			r.r[i] = int32(uint32(v))
		} else {
			r.encl[i-4] = int32(uint32(v))
		}
	}
	roles, err := s.readUint(err)
	r.roles = Roles(roles)
	return err
}

// readUint and readString read on unless err (an earlier read's) is set.
func (s *runSource) readUint(err error) (uint64, error) {
	if err != nil {
		return 0, err
	}
	return binary.ReadUvarint(s.r)
}

func (s *runSource) readString(err error) (string, error) {
	n, err := s.readUint(err)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(s.r, b)
	return string(b), err
}

// merger merges sources (a heap of their next items), dropping repeats.
type merger struct {
	heads  []head
	rank   func(uint32) uint32
	last   item
	primed bool
}

type head struct {
	it  item
	src source
}

func newMerger(sources []source, rank func(uint32) uint32) (*merger, error) {
	m := &merger{rank: rank}
	for _, src := range sources {
		it, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.heads = append(m.heads, head{it, src})
		}
	}
	heap.Init(m)
	return m, nil
}

// next returns the next item, false at the end.
func (m *merger) next() (*item, bool, error) {
	for len(m.heads) > 0 {
		top := &m.heads[0]
		it := top.it
		nxt, ok, err := top.src.next()
		if err != nil {
			return nil, false, err
		}
		if ok {
			top.it = nxt
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
		if m.primed && compareItems(&it, &m.last, m.rank) == 0 {
			continue
		}
		m.last, m.primed = it, true
		return &m.last, true, nil
	}
	return nil, false, nil
}

func (m *merger) Len() int           { return len(m.heads) }
func (m *merger) Less(i, j int) bool { return compareItems(&m.heads[i].it, &m.heads[j].it, m.rank) < 0 }
func (m *merger) Swap(i, j int)      { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *merger) Push(x any)         { m.heads = append(m.heads, x.(head)) }
func (m *merger) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}
