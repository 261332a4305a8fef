package contextindex

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/repo"
)

// RepoSnapshots reads the code to index from a repository source: a
// tenant's current snapshot, with exactly the files grep_codebase searches
// (repo's searchable files: .gitignore respected, excluded folders, hidden
// and binary files skipped).
type RepoSnapshots struct {
	Source repo.Source
}

// Open returns the tenant's snapshot as a Snapshot to index; a tenant
// without a repository gets repo.ErrNoRepository.
func (r RepoSnapshots) Open(ctx context.Context, tenant string) (Snapshot, error) {
	snap, err := r.Source.Open(ctx, tenant)
	if err != nil {
		return Snapshot{}, err
	}
	files, err := snap.Searchable(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("list the searchable files of %s: %w", tenant, err)
	}
	out := Snapshot{FS: snap, Commit: snap.Commit(), Files: make([]File, len(files))}
	for i, f := range files {
		out.Files[i] = File{Path: f.Path, Content: f.Data, ModTime: f.ModTime}
	}
	return out, nil
}
