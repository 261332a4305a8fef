package contextindex

import "time"

// Docs returns every document of seg, for tests.
func Docs(seg *Segment) []Doc {
	out := make([]Doc, seg.Len())
	for i := range out {
		out[i] = seg.Doc(i)
	}
	return out
}

// LiveDocs returns the documents of p that are not left out, for tests.
func LiveDocs(p Part) []Doc {
	var out []Doc
	for i := range p.Seg.Len() {
		if !p.dead(i) {
			out = append(out, p.Seg.Doc(i))
		}
	}
	return out
}

// SlowBuilds makes every batch a live index adds take d longer, until the
// test ends.
func SlowBuilds(t interface{ Cleanup(func()) }, d time.Duration) {
	batchAdded = func() { time.Sleep(d) }
	t.Cleanup(func() { batchAdded = nil })
}
