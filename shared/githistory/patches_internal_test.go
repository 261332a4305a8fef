package githistory

import (
	"strings"
	"testing"
)

// TestACommitCutShortIsNotSeen: when git is stopped at the deadline, the
// commit it was writing is not passed on as if whole (a search would
// count it searched and its next page would skip it).
func TestACommitCutShortIsNotSeen(t *testing.T) {
	out := "\x1eaaa\n\ndiff --git a/f b/f\n@@ -1 +1 @@\n-x\n+y\n\x1ebbb\n\ndiff --git a/g b/g\n@@ -1,3 +1,3 @@\n-p\n"
	for _, killed := range []bool{false, true} {
		var got []string
		readPatches(strings.NewReader(out), func() bool { return killed }, func(p CommitPatch) bool {
			got = append(got, p.Hash)
			return true
		})
		want := "aaa bbb"
		if killed {
			want = "aaa"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("killed %v: saw %v, want %s", killed, got, want)
		}
	}
}
