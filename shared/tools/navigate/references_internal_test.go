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
// search whose time ran out answers with some), and the count says how
// many were looked at.
func TestLinesAfterTheDeadline(t *testing.T) {
	const n = 600
	const text = "Serve(x) // Serve"
	file := repo.NewFile("a.go", []byte(strings.Repeat(text+"\n", n)), time.Time{})
	var matches []textsearch.Match
	for i := range n {
		matches = append(matches, textsearch.Match{File: "a.go", Line: i + 1, Column: 1, Text: text})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		in      refsInput
		columns string
	}{
		{"every occurrence", refsInput{Name: "Serve"}, "[1 13]"},
		{"comments left out", refsInput{Name: "Serve", ExcludeComments: true}, "[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := refFinder{word: regexp.MustCompile(`\bServe\b`), files: map[string]*repo.File{"a.go": file}, in: tt.in, symbols: &symbols.State{}}
			lines, looked := f.lines(ctx, matches)
			if len(lines) != textsearch.MadeInFull || looked != textsearch.MadeInFull {
				t.Fatalf("%d lines of %d looked at; want the first %d", len(lines), looked, textsearch.MadeInFull)
			}
			if got := fmt.Sprint(lines[0].columns); got != tt.columns {
				t.Errorf("columns %s, want %s", got, tt.columns)
			}
		})
	}
}

// TestSearchStoppedByTheDeadline: a search whose time ran out before it
// looked at any line finds none, and says where the next page goes on
// from (the start of the first file); gone on from there, it finds every
// line.
func TestSearchStoppedByTheDeadline(t *testing.T) {
	files := []*repo.File{
		repo.NewFile("a.go", []byte("package a\n\nvar x = Serve\n"), time.Time{}),
		repo.NewFile("b.go", []byte("package a\n\nfunc Serve() {}\n"), time.Time{}),
	}
	q, err := textsearch.Compile(`\bServe\b`, true)
	if err != nil {
		t.Fatal(err)
	}
	f := refFinder{word: regexp.MustCompile(`\bServe\b`), files: map[string]*repo.File{"a.go": files[0], "b.go": files[1]},
		in: refsInput{Name: "Serve", Limit: 10}, symbols: &symbols.State{}}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	lines, _, stop := f.search(ended, files, q, refsPosition{}, nil)
	if len(lines) != 0 || stop != (textsearch.Position{Path: "a.go"}) {
		t.Fatalf("after the deadline: %d lines, stopped at %+v; want none, stopped before a.go", len(lines), stop)
	}
	lines, total, stop := f.search(context.Background(), files, q, refsPosition{path: stop.Path, line: stop.Line}, nil)
	if len(lines) != 2 || total != 2 || stop != (textsearch.Position{}) {
		t.Errorf("gone on from there: %d lines of %d, stopped at %+v; want both, to the end", len(lines), total, stop)
	}
}

// TestPage: a page holds the first lines found from its position, a
// total of the lines before it and those counted from it, and a cursor
// after its last line when more were found than it shows; when the search
// stopped before the end and it shows all it found (some or none), a
// cursor after the last line the search looked at.
func TestPage(t *testing.T) {
	lines := make([]refLine, 150)
	for i := range lines {
		lines[i] = refLine{path: "a.go", line: 101 + i, columns: []int{1}}
	}
	stopped := textsearch.Position{Path: "b.go", Line: 900}
	tests := []struct {
		name         string
		found        int // lines found, of lines
		counted      int
		stop         textsearch.Position
		at           refsPosition
		shown, total int
		next         refsPosition // zero: no cursor
	}{
		{"first of two", 150, 150, textsearch.Position{}, refsPosition{}, 100, 150, refsPosition{"a.go", 200, 100}},
		{"last", 50, 50, textsearch.Position{}, refsPosition{"a.go", 100, 100}, 50, 150, refsPosition{}},
		{"exactly a page", 100, 100, textsearch.Position{}, refsPosition{}, 100, 100, refsPosition{}},
		{"stopped, more found than a page", 150, 150, stopped, refsPosition{}, 100, 150, refsPosition{"a.go", 200, 100}},
		{"stopped, fewer found than a page", 50, 50, stopped, refsPosition{"a.go", 100, 100}, 50, 150, refsPosition{"b.go", 900, 150}},
		{"stopped, none found", 0, 0, stopped, refsPosition{"a.go", 100, 100}, 0, 100, refsPosition{"b.go", 900, 100}},
	}
	pages := cursor.RandomKey().Scope(FindReferencesTool, "acme", "main", refsInput{Name: "Serve"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out refsOutput
			shown := out.page(lines[:tt.found], tt.counted, tt.stop, tt.at, pages, 100)
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
