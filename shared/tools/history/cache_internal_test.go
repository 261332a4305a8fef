package history

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// TestAnUnchangedFileIsNeverBlamedTwice: a blame at a commit is kept by
// (path, blob, lines), so asking again, at that commit or at a later one
// where the file is the same, answers from what was kept.
func TestAnUnchangedFileIsNeverBlamedTwice(t *testing.T) {
	src := repotest.Local(t, repotest.GitHistory(t))
	s := &service{src: src, histories: &githistory.Local{}, cursors: cursor.RandomKey(), blames: newBlameCache(blameCacheBytes)}
	blame := func(ref string) blameOutput {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": "README.md", "ref": ref})
		res, err := toolkit.Typed(s.blame)(context.Background(), toolkit.Call{Tenant: "t", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Data.(blameOutput)
	}
	blame("v1.0")
	if len(s.blames.entries) != 1 {
		t.Fatalf("%d blames kept, want 1", len(s.blames.entries))
	}
	for _, e := range s.blames.entries {
		e.Value.(*blameEntry).blame.Hunks[0].Summary = "from the cache"
	}
	// README.md is the same at main as at v1.0.
	if got := blame("main").Hunks[0].Summary; got != "from the cache" {
		t.Errorf("the second blame ran git again: %q", got)
	}
}

// TestBlameOutputNamesWhatWasNotAttributed: when the time runs out, the
// lines no hunk covers are listed.
func TestBlameOutputNamesWhatWasNotAttributed(t *testing.T) {
	b := githistory.Blame{Hunks: []githistory.BlameHunk{{Line: 3, Lines: 2, Commit: githistory.ZeroID}}}
	o := opened{checkPath: func(string) error { return nil }}
	out := o.blameOutput("f", githistory.BlameQuery{}, 10, b)
	if out.Complete || len(out.Unattributed) != 2 || out.Unattributed[0] != [2]int{1, 2} || out.Unattributed[1] != [2]int{5, 10} {
		t.Errorf("unattributed %v", out.Unattributed)
	}
}
