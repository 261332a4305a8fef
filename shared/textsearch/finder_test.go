package textsearch

import (
	"bytes"
	"strings"
	"testing"
)

// TestFinder compares finder.index with bytes.Index, including haystacks
// full of the literal's rarest byte (where it falls back to bytes.Index),
// and a folding finder with bytes.Index on the lower-cased text.
func TestFinder(t *testing.T) {
	hays := []string{"", "a", "func", "xfunc", "funfunc", "fun", "unc", strings.Repeat("z", 1000) + "zq",
		strings.Repeat("func ", 200) + "zq", strings.Repeat("q", 5000) + "xq", "qqqqx", "xyznonexistent12", "xyznonexistent123"}
	lits := []string{"func", "zq", "xq", "q", "xyznonexistent123", "qx", "nonexistent"}
	for _, h := range hays {
		for _, l := range lits {
			f := newFinder([]byte(l), false)
			if got, want := f.index([]byte(h)), bytes.Index([]byte(h), []byte(l)); got != want {
				t.Errorf("index(%.20q, %q) = %d, want %d", h, l, got, want)
			}
			// Folding: the same in any case, and in a text of mixed case.
			for _, hay := range []string{h, strings.ToUpper(h), mixedCase(h)} {
				f := newFinder([]byte(l), true)
				if got, want := f.index([]byte(hay)), bytes.Index([]byte(strings.ToLower(hay)), []byte(l)); got != want {
					t.Errorf("folding index(%.20q, %q) = %d, want %d", hay, l, got, want)
				}
			}
		}
	}
}

// mixedCase upper-cases every other ASCII letter of s.
func mixedCase(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i += 2 {
		if 'a' <= b[i] && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}
