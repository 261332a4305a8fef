package wiring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// CodeIndex is how far the code index of a repository (context_search's)
// is, for list_repos.
type CodeIndex struct {
	State        string // contextindex.StateReady, StateBuilding, or CodeIndexNone
	Commit       string // the commit indexed, when known
	FilesIndexed int
	FilesTotal   int
}

// CodeIndexNone is the state of a repository without a code index.
const CodeIndexNone = "none"

// CodeIndexes answers CodeIndex for the code indexes a family keeps in
// process (the local server's context_search).
type CodeIndexes func(ctx context.Context, r reposcope.Ref) (CodeIndex, error)

// KeepCodeIndexes makes fn answer CodeIndex: the family that keeps code
// indexes in process calls it.
func (e *Env) KeepCodeIndexes(fn CodeIndexes) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.codeIndexes = fn
}

// CodeIndex returns how far the code index of the repository r is: as the
// family keeping code indexes in process says, else as the indexer
// recorded it in the bucket (its pointer and build record), else none.
func (e *Env) CodeIndex(ctx context.Context, r reposcope.Ref) (CodeIndex, error) {
	e.mu.Lock()
	kept := e.codeIndexes
	e.mu.Unlock()
	switch {
	case kept != nil:
		return kept(ctx, r)
	case e.Config.Bucket == "":
		return CodeIndex{State: CodeIndexNone}, nil
	}
	bucket, err := e.S3(ctx)
	if err != nil {
		return CodeIndex{}, err
	}
	st := contextindex.NewStore(&contextindex.S3Blobs{Bucket: bucket, Prefix: contextindex.BucketPrefix})
	p, _, err := st.Pointer(ctx, r.Key(), "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return CodeIndex{}, fmt.Errorf("read the code index pointer of %s: %w", r, err)
	}
	out := CodeIndex{State: CodeIndexNone}
	if err == nil {
		out = CodeIndex{State: contextindex.StateReady, Commit: p.Commit}
	}
	b, _, err := st.Build(ctx, r.Key(), "")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return CodeIndex{}, fmt.Errorf("read the build record of %s: %w", r, err)
	case b.State == contextindex.BuildRunning && b.Commit != out.Commit:
		out = CodeIndex{State: contextindex.StateBuilding, Commit: b.Commit,
			FilesIndexed: contextindex.Totals(b.Done).Files, FilesTotal: b.Files}
	}
	return out, nil
}
