package repofiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// TestReadPage: lines start to end of a stream, each with its ending, at
// most maxBytes of them (cut after a whole line), whatever pieces the
// stream comes in.
func TestReadPage(t *testing.T) {
	const text = "one\ntwo\r\nthree\nfour" // no newline at the end
	tests := []struct {
		name            string
		start, end, max int
		want            string
		r               rangeJSON
		cut             bool
		code            toolerr.Code // an error's, with its field
		field           string
	}{
		{"whole", 1, 4, 100, text, rangeJSON{1, 4, false}, false, "", ""},
		{"first line", 1, 1, 100, "one\n", rangeJSON{1, 1, true}, false, "", ""},
		{"middle, CRLF kept", 2, 3, 100, "two\r\nthree\n", rangeJSON{2, 3, true}, false, "", ""},
		{"last line without newline", 4, 4, 100, "four", rangeJSON{4, 4, false}, false, "", ""},
		{"from a line to the end", 3, 0, 100, "three\nfour", rangeJSON{3, 4, false}, false, "", ""},
		{"from the start to a line", 0, 2, 100, "one\ntwo\r\n", rangeJSON{1, 2, true}, false, "", ""},
		{"end past the last line", 2, 99, 100, "two\r\nthree\nfour", rangeJSON{2, 4, false}, false, "", ""},
		{"exactly the limit", 1, 2, 9, "one\ntwo\r\n", rangeJSON{1, 2, true}, false, "", ""},
		{"cut after the last whole line within the limit", 1, 4, 10, "one\ntwo\r\n", rangeJSON{1, 2, true}, true, "", ""},
		{"cut in the middle", 2, 0, 12, "two\r\nthree\n", rangeJSON{2, 3, true}, true, "", ""},
		{"a first line over the limit alone", 3, 4, 5, "", rangeJSON{}, false, toolerr.SizeLimitExceeded, ""},
		{"start past the last line", 5, 0, 100, "", rangeJSON{}, false, toolerr.InvalidInput, "startLine"},
		{"end before start", 3, 2, 100, "", rangeJSON{}, false, toolerr.InvalidInput, "endLine"},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"halves":   func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for how, reader := range readers {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				pg, err := readPage(context.Background(), reader(text), "f.txt", tt.start, tt.end, tt.max, 6)
				if tt.code != "" {
					te := toolerr.From(err)
					if te == nil || te.Code != tt.code || !strings.HasPrefix(te.Message, tt.field) {
						t.Fatalf("error %v, want %s on %q", err, tt.code, tt.field)
					}
					return
				}
				got := rangeJSON{pg.start, pg.end, pg.end < pg.lines}
				if err != nil || string(pg.content) != tt.want || got != tt.r || pg.cut != tt.cut {
					t.Errorf("readPage(%d, %d) = %q, %+v, cut %t, %v; want %q, %+v, cut %t", tt.start, tt.end, pg.content, got, pg.cut, err, tt.want, tt.r, tt.cut)
				}
				if pg.lines != repo.CountLines([]byte(text)) || pg.size != int64(len(text)) || string(pg.head) != text[:6] {
					t.Errorf("lines %d, size %d, head %q", pg.lines, pg.size, pg.head)
				}
			})
		}
	}
	if pg, err := readPage(context.Background(), strings.NewReader(""), "empty", 1, 0, 100, 6); toolerr.From(err).Code != toolerr.InvalidInput {
		t.Errorf("a range of an empty file: %+v, %v; want INVALID_INPUT", pg, err)
	}
}

// TestReadPageOfALargeFile: a range far into a file many buffers long is
// the same as cut from the whole text, and the counts are the whole file's.
func TestReadPageOfALargeFile(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 300_000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	text := b.String()
	pg, err := readPage(context.Background(), strings.NewReader(text), "big.txt", 250_001, 250_020, FileMaxBytes, headBytes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(text, "\n")
	if want := strings.Join(lines[250_000:250_020], ""); string(pg.content) != want || pg.end != 250_020 || pg.cut {
		t.Errorf("lines 250001-250020: %q, end %d, cut %t; want %q", pg.content, pg.end, pg.cut, want)
	}
	if pg.lines != 300_000 || pg.size != int64(len(text)) || string(pg.head) != text[:headBytes] {
		t.Errorf("lines %d, size %d, head of %d bytes", pg.lines, pg.size, len(pg.head))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readPage(ctx, strings.NewReader(text), "big.txt", 1, 2, FileMaxBytes, headBytes); !errors.Is(err, context.Canceled) {
		t.Errorf("with the call's context ended: %v", err)
	}
}

// TestReadPageReadsToTheEnd: whatever lines a page keeps, readPage reads
// the stream to its end, so a reader that fails only there (a view's
// secret check, which refuses a file whose key lies past the range) fails
// the page: no range of a refused file is answered.
func TestReadPageReadsToTheEnd(t *testing.T) {
	text := strings.Repeat("a line\n", 100_000) // 700 KB, many buffers
	refused := errors.New("refused at the end")
	for _, r := range []struct{ start, end, max int }{
		{1, 1, FileMaxBytes},      // the first line
		{5, 6, FileMaxBytes},      // a few lines in the first buffer
		{2, 0, 1000},              // a page cut long before the end
		{99_999, 0, FileMaxBytes}, // the last lines
	} {
		stream := io.MultiReader(strings.NewReader(text), iotest.ErrReader(refused))
		if pg, err := readPage(context.Background(), stream, "f.txt", r.start, r.end, r.max, headBytes); !errors.Is(err, refused) {
			t.Errorf("lines %d-%d (at most %d bytes): %d bytes, %v; want the error at the end", r.start, r.end, r.max, len(pg.content), err)
		}
	}
}

// BenchmarkReadPageEmptyLines: the worst case of a page's line counting,
// a file of 1 MiB of empty lines read whole as a range: every byte is a
// line kept. Counting the rest of the buffer at every line kept made this
// take about 330 ms; counted once per buffer, about 10 ms.
func BenchmarkReadPageEmptyLines(b *testing.B) {
	text := strings.Repeat("\n", 1<<20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		pg, err := readPage(context.Background(), strings.NewReader(text), "empty.txt", 1, 0, 2<<20, headBytes)
		if err != nil || pg.end != len(text) {
			b.Fatalf("readPage: end %d, %v", pg.end, err)
		}
	}
}
