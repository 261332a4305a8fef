package navigate

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/textsearch"
)

// TestLinesAfterTheDeadline: when the call's time has run out before the
// matches are classified, the first textsearch.MadeInFull still are (a
// search whose time ran out answers with what it found), and the answer
// says not every line was looked at.
func TestLinesAfterTheDeadline(t *testing.T) {
	const n = 600
	const text = "Serve(x) // Serve"
	file := repo.NewFile("a.go", []byte(strings.Repeat(text+"\n", n)), time.Time{})
	res := textsearch.Result{Total: n}
	for i := range n {
		res.Matches = append(res.Matches, textsearch.Match{File: "a.go", Line: i + 1, Column: 1, Text: text})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		in        refsInput
		wantTotal int
		columns   string
	}{
		{"every occurrence", refsInput{Name: "Serve"}, n, "[1 13]"},
		{"comments left out", refsInput{Name: "Serve", ExcludeComments: true}, textsearch.MadeInFull, "[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := refFinder{word: regexp.MustCompile(`\bServe\b`), files: map[string]*repo.File{"a.go": file}, in: tt.in, symbols: &symbols.State{}}
			lines, total, classified := f.lines(ctx, res)
			if classified || len(lines) != textsearch.MadeInFull || total != tt.wantTotal {
				t.Fatalf("%d lines of %d, classified %v; want the first %d of %d, not all classified",
					len(lines), total, classified, textsearch.MadeInFull, tt.wantTotal)
			}
			if got := fmt.Sprint(lines[0].columns); got != tt.columns {
				t.Errorf("columns %s, want %s", got, tt.columns)
			}
		})
	}
}

// TestPage: a page holds the first lines found from its position, a
// total of the lines before it and those counted from it, and a cursor
// only when more were counted than it shows and it shows some: a page of
// a search that stopped before finding any is empty and the last.
func TestPage(t *testing.T) {
	lines := make([]refLine, 150)
	for i := range lines {
		lines[i] = refLine{path: "a.go", line: 101 + i, columns: []int{1}}
	}
	tests := []struct {
		name         string
		found        int // lines found, of lines
		counted      int
		at           refsPosition
		shown, total int
		next         refsPosition // zero: no cursor
	}{
		{"first of two", 100, 150, refsPosition{}, 100, 150, refsPosition{"a.go", 200, 100}},
		{"last", 50, 50, refsPosition{"a.go", 100, 100}, 50, 150, refsPosition{}},
		{"exactly a page", 100, 100, refsPosition{}, 100, 100, refsPosition{}},
		{"incomplete, more counted than found", 50, 1000, refsPosition{"a.go", 100, 100}, 50, 1100, refsPosition{"a.go", 150, 150}},
		{"incomplete, none found", 0, 1000, refsPosition{"a.go", 100, 100}, 0, 1100, refsPosition{}},
	}
	pages := cursor.RandomKey().Scope(FindReferencesTool, "acme", "main", refsInput{Name: "Serve"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out refsOutput
			shown := out.page(lines[:tt.found], tt.counted, tt.at, pages, 100)
			var next refsPosition
			if out.NextCursor != nil {
				var err error
				if next, err = readPosition(pages, *out.NextCursor); err != nil {
					t.Fatalf("the next cursor %q: %v", *out.NextCursor, err)
				}
			}
			if shown != tt.shown || out.TotalLines != tt.total || next != tt.next {
				t.Errorf("shows %d of %d, next at %+v; want %d of %d, %+v", shown, out.TotalLines, next, tt.shown, tt.total, tt.next)
			}
		})
	}
}
