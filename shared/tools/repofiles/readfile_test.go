package repofiles

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/toolerr"
)

func TestLineRange(t *testing.T) {
	const text = "one\ntwo\r\nthree\nfour" // no newline at the end
	tests := []struct {
		name       string
		start, end int
		want       string
		r          rangeJSON
		errField   string
	}{
		{"whole", 1, 4, text, rangeJSON{1, 4, false}, ""},
		{"first line", 1, 1, "one\n", rangeJSON{1, 1, true}, ""},
		{"middle, CRLF kept", 2, 3, "two\r\nthree\n", rangeJSON{2, 3, true}, ""},
		{"last line without newline", 4, 4, "four", rangeJSON{4, 4, false}, ""},
		{"from a line to the end", 3, 0, "three\nfour", rangeJSON{3, 4, false}, ""},
		{"from the start to a line", 0, 2, "one\ntwo\r\n", rangeJSON{1, 2, true}, ""},
		{"end past the last line", 2, 99, "two\r\nthree\nfour", rangeJSON{2, 4, false}, ""},
		{"start past the last line", 5, 0, "", rangeJSON{}, "startLine"},
		{"end before start", 3, 2, "", rangeJSON{}, "endLine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r, err := lineRange(text, repo.CountLines([]byte(text)), tt.start, tt.end)
			if tt.errField != "" {
				te := toolerr.From(err)
				if te == nil || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, tt.errField+":") {
					t.Fatalf("error %v, want INVALID_INPUT on %s", err, tt.errField)
				}
				return
			}
			if err != nil || got != tt.want || *r != tt.r {
				t.Errorf("lineRange(%d, %d) = %q, %+v, %v; want %q, %+v", tt.start, tt.end, got, r, err, tt.want, tt.r)
			}
		})
	}
	if got, r, err := lineRange("", 0, 0, 0); err == nil {
		t.Errorf("a range of an empty file: %q %+v, want INVALID_INPUT", got, r)
	}
}
