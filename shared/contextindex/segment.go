package contextindex

import (
	"bytes"
	"slices"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
)

// Segment holds documents with their lexical statistics. Its documents
// are either whole Docs (NewSegment: a tenant's notes) or code chunks held
// compactly (built from files: BuildCode, a live index; see chunks). A
// Segment is immutable.
type Segment struct {
	docs []Doc   // nil for code
	code *chunks // nil for whole documents
	lex  *lexicon

	hashOnce sync.Once
	hashList []string
}

// NewSegment tokenizes docs and returns their segment.
func NewSegment(docs []Doc) *Segment {
	b := lexiconBuilders.Get().(*lexiconBuilder)
	defer lexiconBuilders.Put(b)
	for i := range docs {
		b.addDoc(&docs[i])
	}
	return &Segment{docs: docs, lex: b.lexicon()}
}

// Len returns the number of documents.
func (s *Segment) Len() int {
	if s.code != nil {
		return s.code.len()
	}
	return len(s.docs)
}

// Doc returns document i.
func (s *Segment) Doc(i int) Doc {
	if s.code != nil {
		return s.code.doc(i, true)
	}
	return s.docs[i]
}

// Files returns the number of files the segment's documents come from:
// for code, the files it was built from (some may have no chunk); for
// whole documents, each document is a file of its own. Part.Dead counts
// in files.
func (s *Segment) Files() int {
	if s.code != nil {
		return len(s.code.files)
	}
	return len(s.docs)
}

// fileOf returns the file of document i (see Files).
func (s *Segment) fileOf(i int) int {
	if s.code != nil {
		return int(s.code.heads[i].file)
	}
	return i
}

// isCode reports whether the segment holds code.
func (s *Segment) isCode() bool {
	return s.code != nil || len(s.docs) > 0 && s.docs[0].Source == SourceCode
}

// isTest reports whether document i is code in a test (see isTest).
func (s *Segment) isTest(i int) bool {
	if s.code != nil {
		return s.code.files[s.code.heads[i].file].test
	}
	d := &s.docs[i]
	return d.Source == SourceCode && isTest(d.Path)
}

// light returns document i without its content (a code chunk's text is
// read when a search shows it; see fill).
func (s *Segment) light(i int) Doc {
	if s.code != nil {
		return s.code.doc(i, false)
	}
	return s.docs[i]
}

// text returns document i's content.
func (s *Segment) text(i int) string {
	if s.code != nil {
		return s.code.text(i)
	}
	return s.docs[i].Content
}

// eachEmbedText calls fn with each document's EmbedText, in order.
func (s *Segment) eachEmbedText(fn func(i int, text string)) {
	if s.code == nil {
		for i, d := range s.docs {
			fn(i, d.EmbedText())
		}
		return
	}
	s.code.eachText(func(i int, text string) {
		d := Doc{Source: SourceCode, Path: s.code.files[s.code.heads[i].file].path, Content: text}
		fn(i, d.EmbedText())
	})
}

// hashes returns the TextHash of each document's EmbedText, computed once.
func (s *Segment) hashes() []string {
	s.hashOnce.Do(func() {
		s.hashList = make([]string, s.Len())
		s.eachEmbedText(func(i int, text string) { s.hashList[i] = TextHash(text) })
	})
	return s.hashList
}

// WithoutVectors returns the segment's documents that have no vector in v
// (every document when v is nil).
func (s *Segment) WithoutVectors(v *Vectors) []Doc {
	var out []Doc
	for i, h := range s.hashes() {
		if _, ok := v.Get(h); !ok {
			out = append(out, s.Doc(i))
		}
	}
	return out
}

// Part is a segment of a corpus with the files to leave out of it:
// Dead[f] leaves out file f of the segment (see Segment.Files) and its
// documents, the chunks of a file that changed since the segment was
// built, superseded by a later part. nil: none.
type Part struct {
	Seg  *Segment
	Dead []bool
}

// dead reports whether document i of the part is left out.
func (p Part) dead(i int) bool { return p.Dead != nil && p.Dead[p.Seg.fileOf(i)] }

// textsWithoutVectors returns the EmbedText of each document of p, not
// left out, that has no vector in v (every one when v is nil), in order: a
// text as often as documents have it. It tells them by the segment's kept
// hashes, so the texts of a part whose documents all have a vector are not
// read.
func (p Part) textsWithoutVectors(v *Vectors) []string {
	missing := map[int]bool{}
	for i, h := range p.Seg.hashes() {
		if _, ok := v.Get(h); !ok && !p.dead(i) {
			missing[i] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var texts []string
	p.Seg.eachEmbedText(func(i int, text string) {
		if missing[i] {
			texts = append(texts, text)
		}
	})
	return texts
}

// MergeSegments joins parts, all of code or all of whole documents, into
// one segment without their dead files, keeping the order of the parts
// and of the documents in each. Nothing is tokenized again: the postings
// are renumbered. Chunks keep their text where it is.
func MergeSegments(parts []Part) *Segment {
	code := len(parts) > 0 && parts[0].Seg.code != nil
	for _, p := range parts {
		if (p.Seg.code != nil) != code {
			panic("contextindex: merging segments of code with segments of whole documents")
		}
	}
	lens, renumber := liveDocs(parts)
	s := &Segment{lex: mergeLexicons(parts, renumber, lens)}
	if !code {
		s.docs = make([]Doc, 0, len(lens))
		for _, p := range parts {
			for i, d := range p.Seg.docs {
				if !p.dead(i) {
					s.docs = append(s.docs, d)
				}
			}
		}
		return s
	}
	s.code = mergeChunks(parts, len(lens))
	return s
}

// liveDocs returns the field lengths of the live documents of parts in
// order, and per part each document's number among them (-1 when dead).
func liveDocs(parts []Part) ([]fieldLens, [][]int32) {
	n := 0
	for _, p := range parts {
		n += p.Seg.Len()
	}
	lens := make([]fieldLens, 0, n)
	renumber := make([][]int32, len(parts))
	for pi, p := range parts {
		renumber[pi] = make([]int32, p.Seg.Len())
		for i := range renumber[pi] {
			if p.dead(i) {
				renumber[pi][i] = -1
				continue
			}
			renumber[pi][i] = int32(len(lens))
			lens = append(lens, p.Seg.lex.lens[i])
		}
	}
	return slices.Clip(lens), renumber
}

// withTexts returns the segment with the text of the chunks of each file
// fileOf gives (a view's file of the same content they were cut from)
// taken from that file; the other chunks keep the blocks their text is
// in, copied, so that the memory they were read into can go.
func (s *Segment) withTexts(fileOf func(path string) (*repo.File, bool)) *Segment {
	c := *s.code
	c.heads = slices.Clone(c.heads)
	c.texts = nil
	kept := map[uint32]uint32{} // old text → new
	for fi, r := range c.fileChunks() {
		file, ok := fileOf(c.files[fi].path)
		if ok && r[1] > r[0] && int(c.heads[r[1]-1].from+c.heads[r[1]-1].size) > file.Size() {
			ok = false // not the content the chunks were cut from
		}
		if ok && r[1] > r[0] {
			t := uint32(len(c.texts))
			c.texts = append(c.texts, textSource{file: file})
			for i := r[0]; i < r[1]; i++ {
				c.heads[i].text, c.heads[i].off = t, c.heads[i].from
			}
			continue
		}
		for i := r[0]; i < r[1]; i++ {
			h := &c.heads[i]
			t, ok := kept[h.text]
			if !ok {
				src := s.code.texts[h.text]
				src.packed = bytes.Clone(src.packed)
				t = uint32(len(c.texts))
				kept[h.text] = t
				c.texts = append(c.texts, src)
			}
			h.text = t
		}
	}
	return &Segment{code: &c, lex: s.lex}
}
