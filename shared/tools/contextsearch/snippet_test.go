package contextsearch

import (
	"fmt"
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	var long strings.Builder
	long.WriteString("func Handle(w Writer, r *Request) {\n")
	for i := range 40 {
		fmt.Fprintf(&long, "\tstep%d(w)\n", i)
	}
	long.WriteString("\ttoken := refreshToken(r) // the mutex guards the refresh\n\tmutex.Lock()\n}\n")
	tests := []struct {
		name        string
		content     string
		first       int
		query       string
		wantStart   int
		wantEnd     int
		mustContain string
	}{
		{"a short chunk is whole", "func A() {}\n", 7, "anything", 7, 7, "func A"},
		{"the window with the most query words", long.String(), 100, "refresh token mutex", 100 + 31, 100 + 42, "refreshToken"},
		{"no query word: the start", long.String(), 1, "kubernetes", 1, 12, "func Handle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, start, end := snippet(tt.content, tt.first, queryWords(tt.query))
			if start != tt.wantStart || end != tt.wantEnd || !strings.Contains(text, tt.mustContain) {
				t.Errorf("lines %d-%d %q; want %d-%d holding %q", start, end, text, tt.wantStart, tt.wantEnd, tt.mustContain)
			}
			if n := strings.Count(text, "\n"); n > snippetLines || len(text) > snippetBytes+len("…") {
				t.Errorf("%d lines, %d bytes: over the bounds", n, len(text))
			}
			if got := strings.Count(text, "\n"); got != end-start+1 {
				t.Errorf("%d lines of text for lines %d-%d", got, start, end)
			}
		})
	}
	// One line over the budget: its start, marked as cut.
	text, start, end := snippet(strings.Repeat("x", 5000)+"\n", 3, queryWords("x"))
	if start != 3 || end != 3 || len(text) > snippetBytes+len("…") || !strings.HasSuffix(text, "…") {
		t.Errorf("a 5,000-byte line: lines %d-%d, %d bytes", start, end, len(text))
	}
}
