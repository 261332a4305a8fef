package fromscip_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

const (
	sym  = "scip-go gomod example.com/m v1 `example.com/m/p`/F()."
	text = "a = \"é🚀\" + f\n"
)

// small is an index of two documents that use F.
func small() *scip.Index {
	return &scip.Index{
		Metadata: &scip.Metadata{ToolInfo: &scip.ToolInfo{Name: "scip-go", Version: "0.1.26"}},
		Documents: []*scip.Document{
			{RelativePath: "p/a.go", Language: "go", Occurrences: []*scip.Occurrence{{Range: []int32{2, 5, 6}, Symbol: sym, SymbolRoles: 1}},
				Symbols: []*scip.SymbolInformation{{Symbol: sym, Documentation: []string{"```go\nfunc F()\n```", "F does.\n"}}}},
			{RelativePath: "p/b.go", Language: "go", Occurrences: []*scip.Occurrence{{Range: []int32{0, 1, 2}, Symbol: sym}}},
		},
	}
}

func marshal(t testing.TB, x *scip.Index) []byte {
	t.Helper()
	b, err := proto.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func build(data []byte, o fromscip.Options) (fromscip.Stats, *precise.Index, error) {
	var out bytes.Buffer
	st, err := fromscip.Build(context.Background(), bytes.NewReader(data), &out, o)
	if err != nil {
		return st, nil, err
	}
	ix, err := precise.Open(context.Background(), bytes.NewReader(out.Bytes()), int64(out.Len()))
	return st, ix, err
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// withDoc is small with another document.
func withDoc(t testing.TB, d *scip.Document) []byte {
	x := small()
	x.Documents = append(x.Documents, d)
	return marshal(t, x)
}

// TestRefused: what is not SCIP, too large, or outside the snapshot is
// refused, saying why.
func TestRefused(t *testing.T) {
	valid := marshal(t, small())
	huge := binary.AppendUvarint([]byte{0x12}, 1<<40)
	tests := []struct {
		name  string
		input []byte
		o     fromscip.Options
		want  error
		text  string
	}{
		{"text", []byte("hello, world"), fromscip.Options{}, fromscip.ErrNotSCIP, "does not start an index field"},
		{"gzip", gzipped(valid), fromscip.Options{}, fromscip.ErrNotSCIP, "gzip"},
		{"empty", nil, fromscip.Options{}, fromscip.ErrNotSCIP, "empty"},
		{"truncated", valid[:len(valid)-3], fromscip.Options{}, fromscip.ErrNotSCIP, "middle of a message"},
		{"a length that does not end", append([]byte{0x12}, bytes.Repeat([]byte{0xff}, 11)...), fromscip.Options{}, fromscip.ErrNotSCIP, "does not end"},
		{"not a message", []byte{0x12, 0x03, 0xff, 0xff, 0xff}, fromscip.Options{}, fromscip.ErrNotSCIP, ""},
		{"a message of a terabyte", huge, fromscip.Options{}, fromscip.ErrTooLarge, "at most"},
		{"over MaxBytes", valid, fromscip.Options{MaxBytes: int64(len(valid) / 2)}, fromscip.ErrTooLarge, "over"},
		{"a message over MaxBytes", binary.AppendUvarint([]byte{0x12}, 1000), fromscip.Options{MaxBytes: 100}, fromscip.ErrTooLarge, "over 100 bytes"},
		{"outside the snapshot", valid, fromscip.Options{Docs: map[string][32]byte{"p/a.go": {}}}, fromscip.ErrOutside, "p/b.go is not in the snapshot"},
		{"nothing in the snapshot", valid, fromscip.Options{Docs: map[string][32]byte{"q/z.go": {}}, SkipOutside: true}, fromscip.ErrOutside, "none of its 2 documents"},
		{"nothing under Root", valid, fromscip.Options{Docs: map[string][32]byte{"p/a.go": {}}, Root: "src", SkipOutside: true}, fromscip.ErrOutside, "none of its 2 documents"},
		{"parent", withDoc(t, &scip.Document{RelativePath: "../x.go"}), fromscip.Options{}, fromscip.ErrOutside, `"../x.go"`},
		{"absolute", withDoc(t, &scip.Document{RelativePath: "/etc/x.go"}), fromscip.Options{}, fromscip.ErrOutside, `"/etc/x.go"`},
		{"unclean", withDoc(t, &scip.Document{RelativePath: "p/../x.go"}), fromscip.Options{}, fromscip.ErrOutside, `"p/../x.go"`},
		{"backslash", withDoc(t, &scip.Document{RelativePath: `p\x.go`}), fromscip.Options{}, fromscip.ErrOutside, `"p\\x.go"`},
		{"no spill space", valid, fromscip.Options{TempDir: "/nonexistent/spill", MemoryBytes: 100}, nil, "spill space"},
		{"UTF-16 without text", withDoc(t, &scip.Document{RelativePath: "x.ts", PositionEncoding: scip.PositionEncoding_UTF16CodeUnitOffsetFromLineStart}),
			fromscip.Options{}, nil, "Options.Text is needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := build(tt.input, tt.o)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("got %v, want %v saying %q", err, tt.want, tt.text)
			}
		})
	}
}

// TestSkipOutside leaves out what the snapshot does not have.
func TestSkipOutside(t *testing.T) {
	st, ix, err := build(marshal(t, small()), fromscip.Options{Docs: map[string][32]byte{"p/a.go": {1}}, SkipOutside: true})
	if err != nil || st.Skipped != 1 || st.Documents != 1 {
		t.Fatalf("%+v, %v", st, err)
	}
	refs, _, _ := ix.References(context.Background(), sym, precise.Location{}, 0)
	if _, ok := ix.Document("p/b.go"); ok || len(refs) != 1 || refs[0].Path != "p/a.go" {
		t.Errorf("p/b.go is left out: %+v", refs)
	}
	if d, _ := ix.Document("p/a.go"); d.Hash != [32]byte{1} {
		t.Errorf("the snapshot's hash: %x", d.Hash)
	}
	cgo := withDoc(t, &scip.Document{RelativePath: "../../../root/.cache/go-build/3c/3ce880-d"})
	if st, _, err := build(cgo, fromscip.Options{SkipOutside: true}); err != nil || st.Skipped != 1 || st.Documents != 2 {
		t.Errorf("a document outside the repository: %+v, %v", st, err)
	}
}

// TestRoot: an index made in a project's folder names documents from it;
// they become the snapshot's files at their path from its root, checked
// against Docs and read with Text by that path, and a document without a
// language takes its file's.
func TestRoot(t *testing.T) {
	x := small()
	x.Documents[1].Language = ""
	x.Documents[1].RelativePath = "p/b.ts"
	docs := map[string][32]byte{"web/p/a.go": sha256.Sum256([]byte("a")), "web/p/b.ts": sha256.Sum256([]byte("b"))}
	var read []string
	text := func(p string) ([]byte, error) {
		read = append(read, p)
		return []byte(strings.TrimSuffix(path.Base(p), path.Ext(p))), nil
	}
	st, ix, err := build(marshal(t, x), fromscip.Options{Root: "web", Docs: docs, Text: text})
	if err != nil || st.Documents != 2 || st.Stale != 0 {
		t.Fatalf("%+v, %v", st, err)
	}
	a, okA := ix.Document("web/p/a.go")
	b, okB := ix.Document("web/p/b.ts")
	if !okA || !okB || a.Language != "go" || b.Language != "typescript" || !slices.Equal(read, []string{"web/p/a.go", "web/p/b.ts"}) {
		t.Errorf("a %+v, b %+v; read %v", a, b, read)
	}
	refs, _, _ := ix.References(context.Background(), sym, precise.Location{}, 0)
	if len(refs) != 2 || refs[0].Path != "web/p/a.go" || refs[1].Path != "web/p/b.ts" {
		t.Errorf("references %+v", refs)
	}
	for _, root := range []string{"../up", "/abs", "a/../b"} {
		if _, _, err := build(marshal(t, small()), fromscip.Options{Root: root}); err == nil {
			t.Errorf("root %q was taken", root)
		}
	}
	if _, _, err := build(withDoc(t, &scip.Document{RelativePath: "../x.go"}), fromscip.Options{Root: "web"}); !errors.Is(err, fromscip.ErrOutside) {
		t.Errorf("a document above the root: %v, want ErrOutside", err)
	}
}

// TestColumns converts columns of each unit to bytes: f is at byte 15
// of text, UTF-16 unit 12, code point 11.
func TestColumns(t *testing.T) {
	fileText := func(string) ([]byte, error) { return []byte(text), nil }
	tests := []struct {
		name string
		tool string
		enc  scip.PositionEncoding
		col  int32
		doc  string // the document's own text
		o    fromscip.Options
	}{
		{"bytes by default", "scip-go", scip.PositionEncoding_UnspecifiedPositionEncoding, 15, "", fromscip.Options{}},
		{"bytes", "scip-typescript", scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart, 15, "", fromscip.Options{}},
		{"scip-typescript counts UTF-16", "scip-typescript", scip.PositionEncoding_UnspecifiedPositionEncoding, 12, "", fromscip.Options{Text: fileText}},
		{"scip-python counts UTF-16", "scip-python", scip.PositionEncoding_UnspecifiedPositionEncoding, 12, "", fromscip.Options{Text: fileText}},
		{"UTF-16", "other", scip.PositionEncoding_UTF16CodeUnitOffsetFromLineStart, 12, "", fromscip.Options{Text: fileText}},
		{"UTF-32", "other", scip.PositionEncoding_UTF32CodeUnitOffsetFromLineStart, 11, "", fromscip.Options{Text: fileText}},
		{"the document's own text", "other", scip.PositionEncoding_UTF16CodeUnitOffsetFromLineStart, 12, text, fromscip.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &scip.Index{Metadata: &scip.Metadata{ToolInfo: &scip.ToolInfo{Name: tt.tool}}, Documents: []*scip.Document{{
				RelativePath: "a.ts", PositionEncoding: tt.enc, Text: tt.doc,
				Occurrences: []*scip.Occurrence{{Range: []int32{0, tt.col, tt.col + 1}, Symbol: sym}, {Range: []int32{3, 4, 5}, Symbol: sym}},
			}}}
			_, ix, err := build(marshal(t, x), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			refs, _, _ := ix.References(context.Background(), sym, precise.Location{}, 0)
			want := []precise.Range{{Line: 1, Column: 16, EndLine: 1, EndColumn: 17}, {Line: 4, Column: 5, EndLine: 4, EndColumn: 6}}
			if len(refs) != 2 || refs[0].Range != want[0] || refs[1].Range != want[1] {
				t.Errorf("got %+v, want %v (a line past the text keeps its columns)", refs, want)
			}
		})
	}
}

// TestStale marks a document whose text is not the snapshot's.
func TestStale(t *testing.T) {
	docs := map[string][32]byte{"p/a.go": sha256.Sum256([]byte("a")), "p/b.go": sha256.Sum256([]byte("b"))}
	read := func(p string) ([]byte, error) {
		if p == "p/b.go" {
			return []byte("b, edited"), nil
		}
		return []byte("a"), nil
	}
	st, ix, err := build(marshal(t, small()), fromscip.Options{Docs: docs, Text: read})
	if err != nil || st.Stale != 1 {
		t.Fatalf("%+v, %v", st, err)
	}
	a, _ := ix.Document("p/a.go")
	b, _ := ix.Document("p/b.go")
	if a.Stale || a.Changed(docs["p/a.go"]) || !b.Stale || !b.Changed(docs["p/b.go"]) {
		t.Errorf("a %+v, b %+v", a, b)
	}
	if !a.Changed(sha256.Sum256([]byte("a, edited since"))) {
		t.Error("a document changed since indexing")
	}
	if _, _, err := build(marshal(t, small()), fromscip.Options{Docs: docs, Text: func(string) ([]byte, error) { return nil, errors.New("gone") }}); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("text that cannot be read: %v", err)
	}
}

// TestSymbolInformation splits documentation into signature and doc, and
// fills kind and display name from the symbol when the indexer did not.
func TestSymbolInformation(t *testing.T) {
	long := strings.Repeat("ü", 20<<10)
	infos := []*scip.SymbolInformation{
		{Symbol: sym, Documentation: []string{"```go\nfunc F()\n```", "F does.\n", "```go\nmore\n```"}},
		{Symbol: sym + "G#", Kind: scip.SymbolInformation_Interface, DisplayName: "Gee", SignatureDocumentation: &scip.Document{Text: "interface G"}, Documentation: []string{"G is."}},
		{Symbol: sym + "H.", Documentation: []string{"just prose"}},
		{Symbol: sym + "L.", Documentation: []string{long}},
	}
	x := &scip.Index{Metadata: &scip.Metadata{}, Documents: []*scip.Document{{RelativePath: "a.go", Symbols: infos}}}
	_, ix, err := build(marshal(t, x), fromscip.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ symbol, kind, name, sig, doc string }{
		{sym, "Method", "F", "func F()", "F does.\n\n```go\nmore\n```"},
		{sym + "G#", "Interface", "Gee", "interface G", "G is."},
		{sym + "H.", "Term", "H", "", "just prose"},
	}
	for _, tt := range tests {
		info, ok, err := ix.Symbol(context.Background(), tt.symbol)
		if !ok || err != nil || info.Kind != tt.kind || info.DisplayName != tt.name || info.Signature != tt.sig || info.Doc != tt.doc {
			t.Errorf("%s: %+v, %v, %v", tt.symbol, info, ok, err)
		}
	}
	if info, _, _ := ix.Symbol(context.Background(), sym+"L."); len(info.Doc) > 33<<10 || !strings.HasSuffix(info.Doc, "ü…") {
		t.Errorf("a long doc is clipped at a character: %d bytes ending %q", len(info.Doc), info.Doc[len(info.Doc)-8:])
	}
}

// TestCancelled stops with the context.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fromscip.Build(ctx, bytes.NewReader(marshal(t, small())), &bytes.Buffer{}, fromscip.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// FuzzBuild converts any input without panicking; what it accepts opens
// and answers.
func FuzzBuild(f *testing.F) {
	valid := marshal(f, small())
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(gzipped(valid))
	f.Add([]byte{0x12, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Add(withDoc(f, &scip.Document{RelativePath: "x.ts", Text: "é\n", PositionEncoding: 2, Occurrences: []*scip.Occurrence{{Range: []int32{0, 1, 9, 9}, Symbol: "local 1"}}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, ix, err := build(data, fromscip.Options{MaxBytes: 1 << 20, TempDir: t.TempDir(), MemoryBytes: 1 << 10})
		if err != nil {
			return
		}
		ctx := context.Background()
		occs, err := ix.Occurrences(ctx, "p/a.go", 1, 1<<20)
		for _, o := range occs {
			if _, _, err := ix.Symbol(ctx, o.Symbol); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ix.References(ctx, o.Symbol, precise.Location{}, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
