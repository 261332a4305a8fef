package githistory

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
)

// Trees holds views of commits' files (a zip git archive writes, read
// through the repository's policy, as a snapshot is), the most recently
// used first, within a memory budget: read_file, list_files and
// grep_codebase read a "ref" through them with the code that reads the
// current files.
type Trees struct {
	MaxBytes int64 // the zips kept; 0 means DefaultTreeBytes

	mu    sync.Mutex
	order *list.List // of *tree, most recent first
	bytes int64
}

// DefaultTreeBytes is the zips Trees keeps by default.
const DefaultTreeBytes = 256 << 20

type tree struct {
	dir, commit string
	view        repo.View
	size        int64
}

// At returns the view of the files of the commit rev names in r, whose
// current view is current (its policy applies), and the commit id.
func (t *Trees) At(ctx context.Context, r *Repo, current repo.View, field, rev string) (repo.View, string, error) {
	commit, err := r.Resolve(ctx, field, rev)
	if err != nil {
		return nil, "", err
	}
	if v := t.get(r.Dir(), commit); v != nil {
		return v, commit, nil
	}
	data, err := r.Archive(ctx, commit)
	if err != nil {
		return nil, "", err
	}
	p, ok := current.(policed)
	if !ok {
		return nil, "", fmt.Errorf("the repository's view has no policy")
	}
	v, err := repo.OpenZip(data, commit, p.Policy())
	if err != nil {
		return nil, "", fmt.Errorf("read the files of %s: %w", commit, err)
	}
	t.put(&tree{dir: r.Dir(), commit: commit, view: v, size: int64(len(data))})
	return v, commit, nil
}

func (t *Trees) get(dir, commit string) repo.View {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.order == nil {
		return nil
	}
	for e := t.order.Front(); e != nil; e = e.Next() {
		if tr := e.Value.(*tree); tr.dir == dir && tr.commit == commit {
			t.order.MoveToFront(e)
			return tr.view
		}
	}
	return nil
}

func (t *Trees) put(tr *tree) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.order == nil {
		t.order = list.New()
	}
	budget := t.MaxBytes
	if budget <= 0 {
		budget = DefaultTreeBytes
	}
	t.order.PushFront(tr)
	t.bytes += tr.size
	for t.bytes > budget && t.order.Len() > 1 {
		last := t.order.Back()
		t.bytes -= last.Value.(*tree).size
		t.order.Remove(last)
	}
}

// Revisions give the file tools (read_file, grep_codebase) the files of
// other commits: their "ref". The zero value has no history: every ref is
// RESOURCE_NOT_FOUND saying so.
type Revisions struct {
	Histories Histories
	Trees     *Trees
}

// At returns view itself when rev is "", or the view of the files of the
// commit rev names in the history of view (the repository name), under
// view's policy.
func (v Revisions) At(ctx context.Context, view repo.View, name, rev string) (repo.View, error) {
	if rev == "" {
		return view, nil
	}
	if err := CheckRev("ref", rev); err != nil {
		return nil, err
	}
	if v.Histories == nil || v.Trees == nil {
		return nil, NoHistory(name, ErrNoHistory)
	}
	r, err := v.Histories.Open(ctx, view)
	if err != nil {
		return nil, NoHistory(name, err)
	}
	at, _, err := v.Trees.At(ctx, r, view, "ref", rev)
	return at, err
}
