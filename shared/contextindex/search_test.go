package contextindex

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// wordEmbedder is a deterministic embedder for tests: each token adds 1 to
// one of 64 dimensions (feature hashing), so texts sharing words point the
// same way. It counts the texts it embeds.
type wordEmbedder struct {
	mu    sync.Mutex
	texts []string
	fail  error
}

func (e *wordEmbedder) Model() string { return "test-words/64" }

func (e *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != nil {
		return nil, e.fail
	}
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		v[0] = 0.01 // never the zero vector
		for _, tok := range Tokens(t) {
			h := fnv.New32a()
			h.Write([]byte(tok))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

func (e *wordEmbedder) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.texts)
}

func day(d int) time.Time { return time.Date(2025, 1, d, 10, 0, 0, 0, time.UTC) }

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Doc.ID
	}
	return out
}

var notes = []Doc{
	{ID: "a", Source: SourceDiscovery, Type: TypePattern, Module: "auth", Date: day(15), Content: "Use JWT tokens stored in httpOnly cookies for auth"},
	{ID: "b", Source: SourceDiscovery, Type: TypePattern, Module: "auth", Date: day(14), Content: "Implement token refresh with mutex locks to prevent race conditions"},
	{ID: "c", Source: SourceDiscovery, Type: TypeIssue, Module: "auth", Date: day(10), Content: "Token refresh race condition fixed with mutex lock"},
	{ID: "d", Source: SourceDiscovery, Type: TypeDecision, Module: "db", Date: day(3), Content: "Chose PostgreSQL over MongoDB for relational billing data"},
	{ID: "e", Source: SourceSession, Type: TypeSession, Module: "db", Date: day(4), Content: "Migrated the billing tables; background workers now batch writes"},
	{ID: "f", Source: SourceCode, Type: "func", Module: "src/server/auth", Path: "src/server/auth/AuthService.go", Content: "func (s *AuthService) RefreshToken(ctx context.Context) error"},
}

func TestSearchLexical(t *testing.T) {
	c := NewCorpus("", []*Segment{NewSegment(notes)})
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"prefix both ways and module field", Query{Text: "authentication"}, []string{"a", "f", "b", "c"}},
		{"forward prefix", Query{Text: "work"}, []string{"e"}},
		{"filtered by type and module", Query{Text: "token refresh issue", Type: TypeIssue, Module: "auth"}, []string{"c"}},
		{"module filter takes code folders", Query{Text: "token", Module: "auth"}, []string{"c", "b", "a", "f"}},
		{"camelCase code identifiers", Query{Text: "RefreshToken"}, []string{"f", "c", "b", "a"}},
		{"stemmed words", Query{Text: "batched writing worker"}, []string{"e"}},
		{"type filter keeps its discoveries only", Query{Text: "billing", Type: TypeDecision}, []string{"d"}},
		{"limit", Query{Text: "auth", Limit: 2}, []string{"a", "f"}},
		{"no match", Query{Text: "kubernetes"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, mode := c.Search(tt.q)
			if got := ids(hits); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if mode != ModeLexical {
				t.Errorf("mode %s", mode)
			}
			for i, h := range hits {
				if h.Score <= 0 || h.Score > 1 || (i > 0 && h.Score > hits[i-1].Score) {
					t.Errorf("scores not in (0,1] descending: %v", hits)
				}
			}
		})
	}
}

// TestSearchStopsWhenDone: a query whose time is up scores no more of its
// words; with time, every one.
func TestSearchStopsWhenDone(t *testing.T) {
	c := NewCorpus("", []*Segment{NewSegment(notes)})
	done := make(chan struct{})
	close(done)
	if hits, _ := c.Search(Query{Text: "token refresh billing", Done: done}); len(hits) != 0 {
		t.Errorf("after its time: %v, want nothing ranked", ids(hits))
	}
	if hits, _ := c.Search(Query{Text: "token refresh billing", Done: make(chan struct{})}); len(hits) == 0 {
		t.Error("with time: nothing ranked")
	}
}

func TestSearchTiesByDateThenID(t *testing.T) {
	docs := []Doc{
		{ID: "old", Source: SourceDiscovery, Type: TypeRule, Date: day(1), Content: "retry idempotent requests"},
		{ID: "new-b", Source: SourceDiscovery, Type: TypeRule, Date: day(9), Content: "retry idempotent requests"},
		{ID: "new-a", Source: SourceDiscovery, Type: TypeRule, Date: day(9), Content: "retry idempotent requests"},
		{ID: "undated", Source: SourceCode, Type: "block", Content: "retry idempotent requests"},
	}
	hits, _ := NewCorpus("", []*Segment{NewSegment(docs)}).Search(Query{Text: "retry"})
	if got, want := ids(hits), []string{"new-a", "new-b", "old", "undated"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestSearchLimitKeepsTheOrder: a search with a limit orders only its
// best documents (see order); they are the first of the unlimited
// search's, with every document that ties the last of them.
func TestSearchLimitKeepsTheOrder(t *testing.T) {
	var docs []Doc
	for i := range 40 {
		// Scores repeat every 7 documents: ties across the cut.
		docs = append(docs, Doc{ID: fmt.Sprintf("%02d", i), Source: SourceDiscovery, Type: TypeRule, Date: day(1),
			Content: "cache eviction" + strings.Repeat(" lru", i%7) + strings.Repeat(" padding", i%3)})
	}
	c := NewCorpus("", []*Segment{NewSegment(docs)})
	all, _ := c.Search(Query{Text: "cache lru"})
	for _, limit := range []int{1, 3, 5, 6, 10, 39} {
		got, _ := c.Search(Query{Text: "cache lru", Limit: limit})
		if want := ids(all[:limit]); !slices.Equal(ids(got), want) {
			t.Errorf("limit %d: got %v, want %v", limit, ids(got), want)
		}
	}
}

// TestSearchManyTies: when more documents tie the last kept than
// maxTied (generated code, copies), a collection keeps the earliest of
// them, so a search neither makes nor sorts a document for each.
func TestSearchManyTies(t *testing.T) {
	var docs []Doc
	for i := range 1000 {
		docs = append(docs, Doc{ID: fmt.Sprintf("%04d", 999-i), Source: SourceCode, Type: "block", Content: "serve the request"})
	}
	c := NewCorpus("", []*Segment{NewSegment(docs)})
	q := Query{Text: "serve request", Limit: 5}
	if n := len(c.colls[0].search(q)); n != q.Limit+maxTied {
		t.Errorf("the collection kept %d documents, want %d", n, q.Limit+maxTied)
	}
	// The earliest 69 documents are 0999 down to 0931; top breaks their
	// tie by id.
	hits, _ := c.Search(q)
	if got, want := ids(hits), []string{"0931", "0932", "0933", "0934", "0935"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSearchHybrid(t *testing.T) {
	emb := &wordEmbedder{}
	vecs := NewVectors(emb.Model())
	seg := NewSegment(notes[:5]) // the discoveries and the session note
	var texts []string
	for _, d := range Docs(seg) {
		texts = append(texts, d.EmbedText())
	}
	if _, err := vecs.EmbedMissing(context.Background(), emb, texts, 2); err != nil {
		t.Fatal(err)
	}
	// A note written a moment ago, without a vector yet, in its own segment.
	fresh := NewSegment([]Doc{{ID: "g", Source: SourceDiscovery, Type: TypeRule, Module: "auth", Date: day(20), Content: "Rotate refresh tokens on every use"}})
	c := NewCorpus(emb.Model(), []*Segment{seg, fresh}, vecs)
	if c.Vectors() != 5 {
		t.Fatalf("%d documents have vectors, want 5", c.Vectors())
	}
	if n, missing, all := len(seg.WithoutVectors(vecs)), fresh.WithoutVectors(vecs), len(seg.WithoutVectors(nil)); n != 0 || len(missing) != 1 || missing[0].ID != "g" || all != 5 {
		t.Errorf("without vectors: %d of the embedded segment, %v of the fresh one, %d with no vectors at all", n, missing, all)
	}
	q, err := EmbedQuery(context.Background(), emb, "token refresh race")
	if err != nil {
		t.Fatal(err)
	}

	hits, mode := c.Search(Query{Text: "token refresh race", Vector: q})
	if mode != ModeHybrid {
		t.Fatalf("mode %s, want hybrid", mode)
	}
	got := ids(hits)
	if got[0] != "c" && got[0] != "b" {
		t.Errorf("best hit %v, want the race-condition notes first", got)
	}
	if !slices.Contains(got, "g") {
		t.Errorf("the note without a vector is not found lexically: %v", got)
	}
	if hits[0].Score > 1 || hits[len(hits)-1].Score <= 0 {
		t.Errorf("scores out of range: %v", hits)
	}
	// Filters apply before both rankings.
	hits, _ = c.Search(Query{Text: "token refresh race", Vector: q, Type: TypeDecision})
	if got := ids(hits); !slices.Equal(got, []string{"d"}) {
		t.Errorf("decisions only: got %v (the vector list must be filtered too)", got)
	}
	// Vectors of another model are ignored: lexical.
	if _, mode := NewCorpus("other", []*Segment{seg}, vecs).Search(Query{Text: "token", Vector: q}); mode != ModeLexical {
		t.Errorf("vectors of another model: mode %s", mode)
	}
}

func TestLexicalRoundTrip(t *testing.T) {
	seg := NewSegment(notes)
	var lexical bytes.Buffer
	if err := seg.EncodeLexical(&lexical); err != nil {
		t.Fatal(err)
	}
	lx, err := decodeLexicon(len(notes), lexical.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	back := &Segment{docs: notes, lex: lx}
	for _, q := range []string{"token refresh", "auth", "billing workers"} {
		a, _ := NewCorpus("", []*Segment{seg}).Search(Query{Text: q})
		b, _ := NewCorpus("", []*Segment{back}).Search(Query{Text: q})
		if !slices.EqualFunc(a, b, func(x, y Hit) bool { return x.Doc.ID == y.Doc.ID && x.Score == y.Score }) {
			t.Errorf("%q: %v after decoding, %v before", q, b, a)
		}
	}
	if _, err := decodeLexicon(2, lexical.Bytes()); err == nil {
		t.Error("statistics of 6 documents accepted for 2")
	}
	// One document; one term "x" with 1 document and 2 bytes of postings:
	// a posting for document 0 in no field; a posting for document 0 in
	// the content once, then for document 0 again.
	for _, bad := range [][]byte{nil, []byte("TSLEX1\n\xff"), append([]byte(lexicalMagic), 1, 0, 0, 0, 0, 0, 1, 1, 1, 2, 'x', 0, 0),
		append([]byte(lexicalMagic), 1, 0, 0, 0, 0, 0, 1, 1, 1, 2, 'x', 3, 3)} {
		if _, err := decodeLexicon(1, bad); err == nil {
			t.Errorf("corrupt statistics %q accepted", bad)
		}
	}
}

func TestVectorsRoundTrip(t *testing.T) {
	v := NewVectors("m/3")
	for i, vec := range [][]float32{{3, 4, 0}, {0, 0, 2}, {1, 1, 1}} {
		if err := v.Add(TextHash(string(rune('a'+i))), vec); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Add(TextHash("z"), []float32{1, 2}); err == nil {
		t.Error("a vector of 2 dimensions joined vectors of 3")
	}
	if err := v.Add(TextHash("y"), []float32{0, 0, 0}); err == nil {
		t.Error("the zero vector was accepted")
	}
	got, _ := v.Get(TextHash("a"))
	if !slices.Equal(got, []float32{0.6, 0.8, 0}) {
		t.Errorf("normalised %v, want [0.6 0.8 0]", got)
	}
	back, err := UnmarshalVectors(v.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if back.Model != "m/3" || back.Dims != 3 || back.Len() != 3 {
		t.Fatalf("decoded %s %d×%d", back.Model, back.Len(), back.Dims)
	}
	for _, k := range []string{"a", "b", "c"} {
		x, _ := v.Get(TextHash(k))
		y, ok := back.Get(TextHash(k))
		if !ok || !slices.Equal(x, y) {
			t.Errorf("%s: %v, want %v", k, y, x)
		}
	}
	raw := v.Marshal()
	for _, bad := range [][]byte{raw[:len(raw)-1], raw[:10], []byte("nope")} {
		if _, err := UnmarshalVectors(bad); err == nil {
			t.Errorf("corrupt vectors of %d bytes accepted", len(bad))
		}
	}
}

// FuzzUnmarshalVectors: vector files come from storage; corrupt ones are
// errors, never panics.
func FuzzUnmarshalVectors(f *testing.F) {
	v := NewVectors("m")
	_ = v.Add(TextHash("a"), []float32{1, 2})
	f.Add(v.Marshal())
	f.Add([]byte(vectorsMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, err := UnmarshalVectors(data); err == nil {
			_ = got.Marshal()
		}
	})
}

// TestLexicalScores: the best result scores the share of the query it
// matches; the others are scaled from it by BM25.
func TestLexicalScores(t *testing.T) {
	c := NewCorpus("", []*Segment{NewSegment(notes)})
	tests := []struct {
		query string
		want  float64
	}{
		{"mutex lock", 1},                  // both words, exactly
		{"mutex lock kubernetes", 2.0 / 3}, // one word matches nothing
		{"authentication", 0.6},            // through a prefix only
	}
	for _, tt := range tests {
		hits, _ := c.Search(Query{Text: tt.query})
		if len(hits) == 0 || math.Abs(hits[0].Score-tt.want) > 1e-9 {
			t.Errorf("%q: best score %v, want %v", tt.query, hits, tt.want)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%q: scores not descending", tt.query)
			}
		}
	}
}

// TestCollectionsDoNotDrownEachOther: the tenant's notes are ranked on
// their own word frequencies, not those of the code around them, so a
// decision that names a query's subject comes among the first three
// results for it, however many code chunks share its words; and code
// questions still get code.
func TestCollectionsDoNotDrownEachOther(t *testing.T) {
	dir := repotest.GoPackages(t, "net/textproto", "mime", "mime/multipart", "net/mail", "net/http")
	code, _, err := BuildCode(context.Background(), nil, dirSnapshot(t, dir), nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	memory := NewSegment([]Doc{
		{ID: "decision", Source: SourceDiscovery, Type: TypeDecision, Module: "http", Date: day(20),
			Content: "Cap MIME header size at 1 MB: larger multipart headers are refused with 431"},
		{ID: "pattern", Source: SourceDiscovery, Type: TypePattern, Module: "http", Date: day(21),
			Content: "Handlers read request bodies through http.MaxBytesReader"},
		{ID: "session", Source: SourceSession, Type: TypeSession, Date: day(22),
			Content: "Went through the proxy configuration and the deployment scripts"},
	})
	c := NewCorpus("", []*Segment{memory, code.Segment})
	hits, _ := c.Search(Query{Text: "MIME header size", Limit: 10})
	if i := slices.IndexFunc(hits, func(h Hit) bool { return h.Doc.ID == "decision" }); i < 0 || i > 2 {
		t.Errorf("the decision is at %d of %v, want among the first 3", i, ids(hits))
	}
	// Naming what it is (its type) makes it the best match.
	hits, _ = c.Search(Query{Text: "MIME header size decision", Limit: 10})
	if len(hits) == 0 || hits[0].Doc.ID != "decision" {
		t.Errorf("MIME header size decision: %v", ids(hits))
	}
	hits, _ = c.Search(Query{Text: "read MIME header continuation lines", Limit: 5})
	if len(hits) == 0 || hits[0].Doc.Source != SourceCode || !strings.HasPrefix(hits[0].Doc.Path, "net/textproto/") {
		t.Errorf("a code question got %v", ids(hits))
	}
}

// TestSearchFileEvidence: a chunk whose file also answers the question
// (fileEvidence) comes before one that matches a little better alone in
// a file about something else.
func TestSearchFileEvidence(t *testing.T) {
	files := []File{
		{Path: "session/store.go", Content: []byte("package session\n\n" +
			"func (s *Store) sweep() {\n\tfor _, e := range s.all {\n\t\tif e.idle() {\n\t\t\ts.drop(e)\n\t\t}\n\t}\n}\n\n" +
			"func (e *entry) idle() bool { return time.Since(e.seen) > e.ttl }\n\n" +
			"func (s *Store) drop(e *entry) { delete(s.all, e.id) } // expired entries\n")},
		{Path: "report/format.go", Content: []byte("package report\n\n" +
			"func columns(expired, idle, entries int) string {\n\treturn fmt.Sprint(expired, idle, entries)\n}\n")},
	}
	ix, _, err := BuildCode(t.Context(), nil, Snapshot{Files: files}, nil, day(1))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCorpus("", []*Segment{ix.Segment})
	tests := []struct {
		query string
		want  string // the first hit
	}{
		{"idle expired entries", "session/store.go:11-11"},
		{"format columns", "report/format.go:3-5"},
	}
	for _, tt := range tests {
		hits, _ := c.Search(Query{Text: tt.query, Limit: 3})
		if len(hits) == 0 || hits[0].Doc.ID != tt.want {
			t.Errorf("%q: got %v, want %s first", tt.query, ids(hits), tt.want)
		}
	}
}
