package textsearch

import (
	"bytes"
	"strings"
	"testing"
)

// TestFinder compares finder.index with bytes.Index, including haystacks
// full of the literal's rarest byte (where it falls back to bytes.Index).
func TestFinder(t *testing.T) {
	hays := []string{"", "a", "func", "xfunc", "funfunc", "fun", "unc", strings.Repeat("z", 1000) + "zq",
		strings.Repeat("func ", 200) + "zq", strings.Repeat("q", 5000) + "xq", "qqqqx", "xyznonexistent12", "xyznonexistent123"}
	lits := []string{"func", "zq", "xq", "q", "xyznonexistent123", "qx", "nonexistent"}
	for _, h := range hays {
		for _, l := range lits {
			f := newFinder([]byte(l))
			if got, want := f.index([]byte(h)), bytes.Index([]byte(h), []byte(l)); got != want {
				t.Errorf("index(%.20q, %q) = %d, want %d", h, l, got, want)
			}
		}
	}
}
