package textsearch

import (
	"slices"
	"strings"
	"testing"
)

// TestWindowEnd checks that the windows of a text hold its lines, each
// once and whole, in at most size bytes unless a window is a single line.
func TestWindowEnd(t *testing.T) {
	texts := []string{"", "\n", "\n\n", "a", "a\n", "a\nb", "a\n\nb\n", "abc\nd\n\n\nlonger line\nx",
		strings.Repeat("x", 50) + "\nshort\n" + strings.Repeat("y", 30), "\n\n\nabc\n\n"}
	for _, text := range texts {
		// The lines, as scan in search_test.go splits them.
		var want []string
		if text != "" {
			want = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		}
		for size := 1; size <= len(text)+2; size++ {
			data := []byte(text)
			var got []string
			for a := 0; a < len(data); {
				b := windowEnd(data, a, size)
				if b < a || b > len(data) || b < len(data) && data[b] != '\n' {
					t.Fatalf("%q size %d: window [%d, %d)", text, size, a, b)
				}
				lines := strings.Split(string(data[a:b]), "\n")
				n := b - a // bytes, with the "\n" at b
				if b < len(data) {
					n++
				}
				if n > size && len(lines) > 1 {
					t.Errorf("%q size %d: window [%d, %d) of %d lines", text, size, a, b, len(lines))
				}
				got = append(got, lines...)
				a = b + 1
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q size %d: windows hold lines %q, want %q", text, size, got, want)
			}
		}
	}
}
