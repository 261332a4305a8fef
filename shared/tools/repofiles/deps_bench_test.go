package repofiles

import (
	"strings"
	"testing"
)

// BenchmarkStripComments: a script of about 870 KB with a block comment on
// every line (read_file's dependencies of a 1 MB file). Each comment's end
// is found in place; copying the rest of the file per comment made this
// take seconds.
func BenchmarkStripComments(b *testing.B) {
	src := strings.Repeat("/* c */ import x from './x';\n", 30000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		stripComments(src)
	}
}
