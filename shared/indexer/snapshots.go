package indexer

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
)

// Snapshots reads published repository snapshots from the bucket
// (snapshots/<tenant>/<commit>.zip, see shared/repo) with the files the
// repository tools see: the deployment's policy, ignore rules, no binary
// files. It keeps the last zip it opened: the batches of one build,
// handled one after another by a warm function, read the same one.
type Snapshots struct {
	Bucket   *objects.Bucket
	Policy   *repo.Policy // nil: repo's default deny list
	MaxBytes int64        // the largest zip read

	mu   sync.Mutex
	key  string
	view repo.View
}

var _ SnapshotReader = (*Snapshots)(nil)

// Current returns the tenant's current snapshot: its commit and its
// searchable files, with their content. A tenant without one gets
// repo.ErrNoRepository.
func (s *Snapshots) Current(ctx context.Context, tenant string) (contextindex.Snapshot, error) {
	p, ok, err := repo.ReadPointer(ctx, s.Bucket, tenant)
	if err != nil {
		return contextindex.Snapshot{}, fmt.Errorf("read the snapshot pointer of %s: %w", tenant, err)
	}
	if !ok {
		return contextindex.Snapshot{}, repo.ErrNoRepository
	}
	view, err := s.open(ctx, tenant, p.Commit)
	if err != nil {
		return contextindex.Snapshot{}, err
	}
	files, err := view.Searchable(ctx)
	if err != nil {
		return contextindex.Snapshot{}, fmt.Errorf("list the searchable files of %s: %w", tenant, err)
	}
	out := contextindex.Snapshot{FS: view, Commit: p.Commit, Files: make([]contextindex.File, len(files))}
	for i, f := range files {
		out.Files[i] = contextindex.File{Path: f.Path, Content: f.Data, ModTime: f.ModTime}
	}
	return out, nil
}

// Files reads some files of the tenant's snapshot of a commit, as Current
// lists them (a file that has become binary is left out).
func (s *Snapshots) Files(ctx context.Context, tenant, commit string, paths []string) ([]contextindex.File, error) {
	view, err := s.open(ctx, tenant, commit)
	if err != nil {
		return nil, err
	}
	out := make([]contextindex.File, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := repo.ReadSearchable(view, p)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s at %s: %w", p, tenant, commit, err)
		}
		if f != nil {
			out = append(out, contextindex.File{Path: f.Path, Content: f.Data, ModTime: f.ModTime})
		}
	}
	return out, nil
}

// open returns the view of the tenant's snapshot of commit, downloading
// its zip unless it is the one in hand.
func (s *Snapshots) open(ctx context.Context, tenant, commit string) (repo.View, error) {
	if commit == "" || path.Base(commit) != commit || commit == ".." {
		return nil, fmt.Errorf("snapshot commit %q is not one key segment", commit)
	}
	key := repo.ZipKey(tenant, commit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == key {
		return s.view, nil
	}
	s.key, s.view = "", nil // let the old one go before the new one comes
	data, _, err := s.Bucket.Read(ctx, key, "", s.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", key, err)
	}
	view, err := repo.OpenZip(data, commit, s.Policy)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", key, err)
	}
	s.key, s.view = key, view
	return view, nil
}
