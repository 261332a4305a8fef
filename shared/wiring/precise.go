package wiring

import (
	"context"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// PreciseIndexes answers the precise indexes a call reads: those of the
// repository r (whose view is view) and, for global symbols, those of the
// other repositories of r's tenant that allowed names (nil: every one),
// with how far r's indexing is. A repository with no index yet answers an
// empty Set and the State that says why. The Set names r's repository
// r.Name (the tools tell its occurrences from other repositories' by it).
type PreciseIndexes func(ctx context.Context, r reposcope.Ref, view repo.View, allowed []string) (*precise.Set, precise.State, error)

// PreciseKeeper keeps precise indexes in process: the local server's
// (shared/preciselocal), handed over with KeepPreciseIndexes so that no
// Lambda function links the SCIP converter it runs.
type PreciseKeeper interface {
	Indexes(ctx context.Context, r reposcope.Ref, view repo.View, allowed []string) (*precise.Set, precise.State, error)
	State(view repo.View) precise.State
}

// KeepPreciseIndexes makes k answer PreciseIndexes and PreciseState for
// the repositories of this process: the local server calls it.
func (e *Env) KeepPreciseIndexes(k PreciseKeeper) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.precise = k
}

// keeper is what KeepPreciseIndexes handed over, or nil.
func (e *Env) keeper() PreciseKeeper {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.precise
}

// PreciseIndexes returns where the precise indexes of this process's
// repositories come from. Deployed (snapshots in the bucket), they are
// the stores the indexer converted from what was pushed with each
// snapshot (precisebucket.go).
func (e *Env) PreciseIndexes(ctx context.Context) (PreciseIndexes, error) {
	if k := e.keeper(); k != nil {
		// The local repositories': the indexes the local server keeps.
		return k.Indexes, nil
	}
	if e.Config.Bucket != "" {
		return e.bucketPreciseIndexes(ctx)
	}
	return NoPreciseIndexes, nil
}

// PreciseState returns how far the precise indexing of the repository r
// is (list_repos), without reading its snapshot: deployed, from the
// statuses the indexer wrote for its current pointer.
func (e *Env) PreciseState(ctx context.Context, r reposcope.Ref) (precise.State, error) {
	if k := e.keeper(); k != nil {
		// The local repositories': opening one reads nothing.
		src, err := e.Repo(ctx)
		if err != nil {
			return precise.State{}, err
		}
		view, err := src.Open(ctx, r)
		if err != nil {
			return precise.State{}, err
		}
		return k.State(view), nil
	}
	if e.Config.Bucket != "" {
		rd, err := e.preciseReader(ctx)
		if err != nil {
			return precise.State{}, err
		}
		return rd.State(ctx, r)
	}
	return precise.State{}, nil
}

// NoPreciseIndexes answers an empty Set for every repository, and the
// State that says no precise index covers it.
func NoPreciseIndexes(_ context.Context, r reposcope.Ref, _ repo.View, _ []string) (*precise.Set, precise.State, error) {
	set, err := precise.NewSet(r.Tenant, precise.Repository{Name: r.Name})
	return set, precise.State{}, err
}
