package wiring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// RepoIndex is how far the code index of a repository (context_search's)
// is, for list_repos.
type RepoIndex struct {
	State        contextindex.State // contextindex.StateReady, StateBuilding, or RepoIndexNone
	Commit       string             // the commit indexed, when known
	FilesIndexed int
	FilesTotal   int
}

// RepoIndexNone is the state of a repository without a code index.
const RepoIndexNone contextindex.State = "none"

// RepoIndexes answers RepoIndex for the code indexes a family keeps in
// process (the local server's context_search).
type RepoIndexes func(ctx context.Context, r reposcope.Ref) (RepoIndex, error)

// KeepRepoIndexes makes fn answer RepoIndex: the family that keeps code
// indexes in process calls it.
func (e *Env) KeepRepoIndexes(fn RepoIndexes) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.repoIndexes = fn
}

// RepoIndex returns how far the code index of the repository r is: as the
// family keeping code indexes in process says, else as the indexer
// recorded it in the bucket (its pointer and build record), else none.
func (e *Env) RepoIndex(ctx context.Context, r reposcope.Ref) (RepoIndex, error) {
	e.mu.Lock()
	kept := e.repoIndexes
	e.mu.Unlock()
	switch {
	case kept != nil:
		return kept(ctx, r)
	case e.Config.Bucket == "":
		return RepoIndex{State: RepoIndexNone}, nil
	}
	blobs, err := e.IndexBlobs(ctx)
	if err != nil {
		return RepoIndex{}, err
	}
	st := indexfile.NewStore(blobs)
	p, _, err := st.Pointer(ctx, r.Key(), "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return RepoIndex{}, fmt.Errorf("read the code index pointer of %s: %w", r, err)
	}
	out := RepoIndex{State: RepoIndexNone}
	if err == nil {
		out = RepoIndex{State: contextindex.StateReady, Commit: p.Commit}
	}
	b, _, err := st.Build(ctx, r.Key(), "")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return RepoIndex{}, fmt.Errorf("read the build record of %s: %w", r, err)
	case b.State == indexfile.BuildRunning && b.Commit != out.Commit:
		out = RepoIndex{State: contextindex.StateBuilding, Commit: b.Commit,
			FilesIndexed: indexfile.Totals(b.Done).Files, FilesTotal: b.Files}
	}
	return out, nil
}
