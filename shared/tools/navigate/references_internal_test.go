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

// TestPage: a page holds the lines from its offset, and a cursor only
// when there are more lines and the page moved forward: a page of a search
// that stopped before finding offset lines is empty and the last.
func TestPage(t *testing.T) {
	lines := make([]refLine, 150)
	for i := range lines {
		lines[i] = refLine{path: "a.go", line: i + 1, columns: []int{1}}
	}
	tests := []struct {
		name                 string
		offset, limit, total int
		shown, next          int // next 0: no cursor
	}{
		{"first of two", 0, 100, 150, 100, 100},
		{"last", 100, 100, 150, 50, 0},
		{"incomplete, more counted than found", 100, 100, 1000, 50, 150},
		{"incomplete, beyond what was found", 200, 100, 1000, 0, 0},
	}
	pages := cursor.RandomKey().Scope(FindReferencesTool, "acme", refsInput{Name: "Serve"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := refsOutput{TotalLines: tt.total}
			shown := out.page(lines, pages, tt.offset, tt.limit)
			next := 0
			if out.NextCursor != nil {
				if err := pages.Decode(*out.NextCursor, &next); err != nil {
					t.Fatalf("the next cursor %q: %v", *out.NextCursor, err)
				}
			}
			if shown != tt.shown || next != tt.next {
				t.Errorf("shows %d, next at %d; want %d, %d", shown, next, tt.shown, tt.next)
			}
		})
	}
}
