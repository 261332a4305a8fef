package repo

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestScratchNeverHoldsContent: building a file's trigram filter, or
// compressing one, through the shared scratch buffers leaves the content
// of a file held as it is untouched (a buffer once made a file's own
// content was written over by the next file compressed into it).
func TestScratchNeverHoldsContent(t *testing.T) {
	text := strings.Repeat("func Plain() {}\n", 256)
	plain := newFile("plain.go", []byte(text), time.Time{}, false)
	for i := range 20 {
		plain.gramsOnce = sync.Once{} // build the filter again
		plain.Trigrams()
		other := NewFile("other.go", []byte("package other // smaller than plain.go\n"), time.Time{})
		other.Trigrams()
		if got := plain.Text(); got != text {
			t.Fatalf("round %d: the plain file's content became %q", i, got[:min(len(got), 40)])
		}
	}
}
