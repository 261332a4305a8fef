package contextindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
)

// The fields BM25 scores, each with its own weight and length
// normalisation (BM25F): a word in a document's module (a label chosen for
// what the item is about) counts three times a word of its content, the
// path half as much.
const (
	fieldContent = iota
	fieldModule
	fieldPath
	numFields
)

var (
	fieldWeight = [numFields]float64{1.0, 3.0, 0.5}
	fieldB      = [numFields]float64{0.75, 0.3, 0.5}
)

// BM25 and query-expansion constants.
const (
	bm25K1 = 1.2
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

// Segment holds documents with their lexical statistics: field lengths
// and, per term, the documents that contain it. A Segment is immutable.
type Segment struct {
	Docs     []Doc
	lens     [][numFields]uint32
	postings map[string][]posting
	terms    []string // sorted, for prefix expansion
	hashCache
}

// NewSegment tokenizes docs and returns their segment.
func NewSegment(docs []Doc) *Segment {
	s := &Segment{Docs: docs, lens: make([][numFields]uint32, len(docs)), postings: map[string][]posting{}}
	for i, d := range docs {
		tf := map[string]*[numFields]uint16{}
		for f, text := range [numFields]string{d.Content, d.Module, d.Path} {
			toks := Tokens(text)
			s.lens[i][f] = uint32(len(toks))
			for _, t := range toks {
				c := tf[t]
				if c == nil {
					c = new([numFields]uint16)
					tf[t] = c
				}
				if c[f] < math.MaxUint16 {
					c[f]++
				}
			}
		}
		for t, c := range tf {
			s.postings[t] = append(s.postings[t], posting{doc: uint32(i), tf: *c})
		}
	}
	s.sortTerms()
	return s
}

func (s *Segment) sortTerms() {
	s.terms = make([]string, 0, len(s.postings))
	for t := range s.postings {
		s.terms = append(s.terms, t)
	}
	slices.Sort(s.terms)
}

// withPrefix calls fn for every term of the segment starting with p.
func (s *Segment) withPrefix(p string, fn func(term string)) {
	i := sort.SearchStrings(s.terms, p)
	for ; i < len(s.terms) && strings.HasPrefix(s.terms[i], p); i++ {
		fn(s.terms[i])
	}
}

// MergeSegments joins parts into one segment without their dead
// documents, keeping the order of the parts and of the documents in each.
// Nothing is tokenized again: the postings are renumbered.
func MergeSegments(parts []Part) *Segment {
	n := 0
	for _, p := range parts {
		n += len(p.Seg.Docs)
	}
	out := &Segment{Docs: make([]Doc, 0, n), lens: make([][numFields]uint32, 0, n), postings: map[string][]posting{}}
	renumber := make([][]int32, len(parts)) // per part, old document → new, -1 when dead
	for pi, p := range parts {
		renumber[pi] = make([]int32, len(p.Seg.Docs))
		for i, d := range p.Seg.Docs {
			if p.Dead != nil && p.Dead[i] {
				renumber[pi][i] = -1
				continue
			}
			renumber[pi][i] = int32(len(out.Docs))
			out.Docs = append(out.Docs, d)
			out.lens = append(out.lens, p.Seg.lens[i])
		}
	}
	for pi, p := range parts {
		for term, ps := range p.Seg.postings {
			merged := out.postings[term]
			for _, q := range ps {
				if nd := renumber[pi][q.doc]; nd >= 0 {
					merged = append(merged, posting{doc: uint32(nd), tf: q.tf})
				}
			}
			if len(merged) > 0 {
				out.postings[term] = merged
			}
		}
	}
	out.sortTerms()
	return out
}

// ---- encoding ----

// lexicalMagic starts an encoded segment (lexical.bin).
const lexicalMagic = "TSLEX1\n"

// MarshalLexical encodes the segment's lexical statistics (not its
// documents): field lengths, then each term, sorted, with its postings.
// All numbers are unsigned varints; document numbers are delta-coded.
func (s *Segment) MarshalLexical() []byte {
	var b bytes.Buffer
	b.WriteString(lexicalMagic)
	put := func(v uint64) { b.Write(binary.AppendUvarint(nil, v)) }
	put(uint64(len(s.lens)))
	for _, l := range s.lens {
		for _, v := range l {
			put(uint64(v))
		}
	}
	put(uint64(len(s.terms)))
	for _, t := range s.terms {
		put(uint64(len(t)))
		b.WriteString(t)
		ps := s.postings[t]
		put(uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps {
			put(uint64(p.doc - prev))
			prev = p.doc
			for _, v := range p.tf {
				put(uint64(v))
			}
		}
	}
	return b.Bytes()
}

// UnmarshalSegment rebuilds a segment from its documents and the output of
// MarshalLexical, checking that they belong together.
func UnmarshalSegment(docs []Doc, lexical []byte) (*Segment, error) {
	r := bufio.NewReader(bytes.NewReader(lexical))
	magic := make([]byte, len(lexicalMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != lexicalMagic {
		return nil, errors.New("lexical statistics: not a lexical.bin file")
	}
	var err error
	get := func(max uint64) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = binary.ReadUvarint(r)
		if err == nil && v > max {
			err = fmt.Errorf("value %d out of range", v)
		}
		return v
	}
	n := get(math.MaxUint32)
	if err == nil && n != uint64(len(docs)) {
		return nil, fmt.Errorf("lexical statistics: %d documents, the chunks have %d", n, len(docs))
	}
	s := &Segment{Docs: docs, lens: make([][numFields]uint32, len(docs)), postings: map[string][]posting{}}
	for i := range s.lens {
		for f := range numFields {
			s.lens[i][f] = uint32(get(math.MaxUint32))
		}
	}
	terms := get(uint64(len(lexical)))
	for range terms {
		if err != nil {
			break
		}
		tb := make([]byte, get(maxTokenBytes*4))
		if err == nil {
			_, err = io.ReadFull(r, tb)
		}
		count := get(n)
		ps := make([]posting, 0, count)
		doc := uint64(0)
		for j := uint64(0); j < count && err == nil; j++ {
			delta := get(n)
			if j > 0 && delta == 0 {
				err = errors.New("postings out of order")
			}
			doc += delta
			if doc >= n {
				err = fmt.Errorf("posting for document %d of %d", doc, n)
			}
			p := posting{doc: uint32(doc)}
			for f := range numFields {
				p.tf[f] = uint16(get(math.MaxUint16))
			}
			ps = append(ps, p)
		}
		s.postings[string(tb)] = ps
	}
	if err != nil {
		return nil, fmt.Errorf("lexical statistics: %w", err)
	}
	s.sortTerms()
	return s, nil
}
