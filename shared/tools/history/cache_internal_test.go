package history

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// memStore is a BlameStore in a map, as the bucket would keep it.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (m *memStore) Load(_ context.Context, r reposcope.Ref, name string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[r.Key()+"/"+name]
	return data, ok, nil
}

func (m *memStore) Save(_ context.Context, r reposcope.Ref, name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[r.Key()+"/"+name] = data
	return nil
}

// rewrite changes every stored blame with edit.
func (m *memStore) rewrite(edit func([]byte) []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.objects {
		m.objects[k] = edit(v)
	}
}

// blamer calls blame on a service over src with its own memory level and
// store.
func blamer(t *testing.T, src repo.Source, store BlameStore) (*service, func(path, ref string) blameOutput) {
	s := &service{src: src, histories: &githistory.Local{}, cursors: cursor.RandomKey(), blames: newBlames(blameCacheBytes, store)}
	return s, func(path, ref string) blameOutput {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": path, "ref": ref})
		res, err := toolkit.Typed(s.blame)(context.Background(), toolkit.Call{Tenant: "t", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Data.(blameOutput)
	}
}

// TestAnUnchangedFileIsNeverBlamedTwice: a blame at a commit is kept, in
// memory and in the store, so asking again, at that commit or at a later
// one where the file is the same, answers from what was kept; another
// process (a cold start) answers from the store.
func TestAnUnchangedFileIsNeverBlamedTwice(t *testing.T) {
	src := repotest.Local(t, repotest.GitHistory(t))
	store := &memStore{}
	s, blame := blamer(t, src, store)
	blame("README.md", "v1.0")
	if len(s.blames.entries) != 1 || len(store.objects) != 1 {
		t.Fatalf("%d blames kept, %d stored, want 1 and 1", len(s.blames.entries), len(store.objects))
	}
	for _, e := range s.blames.entries {
		e.Value.(*blameEntry).blame.Hunks[0].Summary = "from memory"
	}
	// README.md is the same at main as at v1.0.
	if got := blame("README.md", "main").Hunks[0].Summary; got != "from memory" {
		t.Errorf("the second blame ran git again: %q", got)
	}
	store.rewrite(func(b []byte) []byte {
		return []byte(strings.ReplaceAll(string(b), "Add the server", "from the store"))
	})
	_, cold := blamer(t, src, store)
	if got := cold("README.md", "main").Hunks[0].Summary; got != "from the store" {
		t.Errorf("a new process ran git again: %q", got)
	}
}

// TestABlobReachedAgainHasItsOwnBlame: a file changed from A to B and
// back to A has the same blob as at first, but its lines are last
// changed by the commit that brought A back.
func TestABlobReachedAgainHasItsOwnBlame(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { t.Helper(); return repotest.Git(t, dir, args...) }
	git("init", "-q", "-b", "main")
	var commits []string
	for i, content := range []string{"A\n", "B\n", "A\n"} {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644)
		git("add", "f.txt")
		git("commit", "-q", "-m", "step "+string(rune('1'+i)))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	_, blame := blamer(t, repotest.Local(t, dir), &memStore{})
	if got := *blame("f.txt", commits[0]).Hunks[0].Commit; got != commits[0] {
		t.Errorf("at the first commit: %s, want %s", got, commits[0])
	}
	if got := *blame("f.txt", commits[2]).Hunks[0].Commit; got != commits[2] {
		t.Errorf("A again: attributed to %s, want %s (the commit that brought it back)", got, commits[2])
	}
}

// TestABrokenStoredBlameIsIgnored: a stored blame that cannot be read, or
// that does not cover the lines, is a miss: git answers, and the right
// blame replaces it.
func TestABrokenStoredBlameIsIgnored(t *testing.T) {
	src := repotest.Local(t, repotest.GitHistory(t))
	edits := map[string]func([]byte) []byte{
		"cut short": func(b []byte) []byte { return b[:len(b)/2] },
		"not JSON":  func([]byte) []byte { return []byte("\x00\x01garbage") },
		"another key": func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"path":"src/app.go"`, `"path":"src/x.go"`, 1))
		},
		"a line short": func(b []byte) []byte {
			var s storedBlame
			json.Unmarshal(b, &s)
			s.Blame.Hunks[0].Lines--
			out, _ := json.Marshal(s)
			return out
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			store := &memStore{}
			_, blame := blamer(t, src, store)
			want, _ := json.Marshal(blame("src/app.go", "main"))
			store.rewrite(edit)
			_, cold := blamer(t, src, store)
			if got, _ := json.Marshal(cold("src/app.go", "main")); string(got) != string(want) {
				t.Errorf("got %s\nwant %s", got, want)
			}
			_, again := blamer(t, src, store)
			if got, _ := json.Marshal(again("src/app.go", "main")); string(got) != string(want) {
				t.Errorf("the right blame was not stored again: %s", got)
			}
		})
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
