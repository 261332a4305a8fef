// Package preciselocal keeps the precise indexes of the local server's
// repositories. For each local view (repo.View of a directory) it waits
// until the view is read (and whatever Options.Ready waits for: the
// server's symbol table), finds the projects an indexer reads
// (sciprun.Projects), runs their indexers in the background, one at a time
// across every repository and niced (sciprun.Runner), converts each SCIP
// index into a precise store (fromscip.Build, run by the binary's
// precise-convert subcommand as a process of its own: ConvertCommand)
// written aside in the data directory and renamed into place, and opens
// it (precise.Open over the file). Keeper.Indexes answers a call with a precise.Set of the view's
// stores (and, for global symbols, the other local repositories the
// caller may read), and a precise.State that says per project how far
// indexing is. Stores are made with tenant "": the local repositories are
// every tenant's.
//
// # Keeping current
//
// A follower waits on the view's change feed; once the view has been
// quiet for Options.Quiet (a burst of saves is one re-index), it brings
// every project whose files or configuration changed up to date:
//   - a Go project re-indexes only the packages (folders) whose files
//     changed, as an overlay store: a Set answers a path from the latest
//     store that has it. It is indexed whole instead (compacted: one store
//     again) when it already has maxOverlays overlays, when the change
//     touches more than maxOverlayPackages packages, when a file was
//     removed (an overlay cannot hide a document it does not have), or
//     when its go.mod changed;
//   - any other project is indexed whole.
//
// While a re-index runs, the stores it will replace keep answering; a file
// changed since they were made is answered by search
// (precise.DocInfo.Changed, which the tools check).
//
// # Restarts and failures
//
// Each folder holds a manifest (manifest.json) of the stores and of what
// they were made of: every covered file's content hash and the project's
// configuration file's. It is written after the stores it names, so a
// crash leaves the last good one. At start the stores it names are opened,
// and only what changed since is indexed again; a store that does not
// open (damaged) is dropped and its project indexed whole.
//
// An indexer that breaks a limit, crashes or is not installed leaves its
// project Failed or Unavailable (or, with stores made before, Ready on
// them), with a reason that names the limit or what to install and never
// quotes what the indexer printed (which may quote the repository); the
// log has the whole error. It is tried again when the project's files
// change, or at the next start.
package preciselocal

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// DefaultNice is the niceness indexers run at unless Options.Runner gives
// one: answers come first.
const DefaultNice = 10

// Options configure a Keeper.
type Options struct {
	// Dir holds the stores, a folder per view named by repo.Key; ""
	// keeps them in a temporary folder, removed on Close.
	Dir string
	// Runner runs the indexers. Its GoIndexer is the binary's index-go
	// command ({os.Executable(), "index-go"}): each run adds -tests and
	// -module-version. Nice is the niceness runs take (DefaultNice
	// unless set).
	Runner sciprun.Runner
	// Converter is the binary's precise-convert command
	// ({os.Executable(), ConvertName}), which turns each SCIP index into
	// a store as a process of its own (held to Limits, at Runner.Nice);
	// without it nothing is indexed.
	Converter []string
	// Limits bound each indexer and converter run.
	Limits sciprun.Limits
	// Quiet is how long a view must go without a change before what
	// changed is indexed again (the local server's
	// config.PreciseQuiet); zero: as soon as a change is seen.
	Quiet time.Duration
	// Ready, when not nil, waits until a view may be indexed (its symbol
	// table, which the server builds first, is ready), or ctx ends.
	Ready func(ctx context.Context, view repo.View)
	// Log reports runs and failures (nil: discard).
	Log *slog.Logger
}

// Keeper keeps the precise indexes of the views it follows.
type Keeper struct {
	o      Options
	turn   chan struct{} // held by the one indexer run at a time
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	tmp    string // the temporary Dir, when Options had none

	mu        sync.Mutex
	followers []*follower

	// Runs counts indexer runs, Reused the stores reopened at start (for
	// tests and logs).
	Runs, Reused atomic.Int64
}

// New returns a Keeper that follows no view yet.
func New(o Options) (*Keeper, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Runner.Nice == 0 {
		o.Runner.Nice = DefaultNice
	}
	k := &Keeper{o: o, turn: make(chan struct{}, 1)}
	if k.o.Dir == "" {
		dir, err := os.MkdirTemp("", "toolshed-precise-")
		if err != nil {
			return nil, fmt.Errorf("precise indexes: %w", err)
		}
		k.o.Dir, k.tmp = dir, dir
	}
	// The indexers and the converter run in the repository's folder: a
	// relative Dir (make run's .toolshed) would name another folder there.
	dir, err := filepath.Abs(k.o.Dir)
	if err != nil {
		return nil, fmt.Errorf("precise indexes: %w", err)
	}
	k.o.Dir = dir
	k.ctx, k.cancel = context.WithCancel(context.Background())
	return k, nil
}

// Follow starts keeping the indexes of view, a local directory's view,
// served as name. A view of no directory (a snapshot) is not followed.
func (k *Keeper) Follow(name string, view repo.View) {
	d, ok := view.(interface{ Dir() string })
	key := repo.Key(view)
	if !ok || key == "" {
		k.o.Log.Warn("precise: not a local directory; not indexed", "repository", name)
		return
	}
	f := newFollower(k, name, view, d.Dir(), filepath.Join(k.o.Dir, filepath.FromSlash(key)))
	k.mu.Lock()
	k.followers = append(k.followers, f)
	k.mu.Unlock()
	k.wg.Go(func() { f.run(k.ctx) })
}

// Close stops every follower (an indexer running is killed), waits for
// them and closes their stores.
func (k *Keeper) Close() {
	k.cancel()
	k.wg.Wait()
	for _, f := range k.list() {
		f.close()
	}
	if k.tmp != "" {
		os.RemoveAll(k.tmp)
	}
}

// list returns the followers.
func (k *Keeper) list() []*follower {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.followers)
}

// of returns the follower of view, or nil.
func (k *Keeper) of(view repo.View) *follower {
	for _, f := range k.list() {
		if f.view == view {
			return f
		}
	}
	return nil
}

// Indexes answers the precise indexes of a call on the repository r,
// whose view is view: the view's stores, and for global symbols those of
// the other followed repositories that allowed names (nil: every one),
// with the State of r's indexing. A view not followed has none.
func (k *Keeper) Indexes(_ context.Context, r reposcope.Ref, view repo.View, allowed []string) (*precise.Set, precise.State, error) {
	home := k.of(view)
	if home == nil {
		set, err := precise.NewSet(r.Tenant, precise.Repository{Name: r.Name})
		return set, precise.State{}, err
	}
	now := home.current()
	var others []precise.Repository
	for _, f := range k.list() {
		if f != home && f.name != r.Name && reposcope.Allows(allowed, f.name) {
			others = append(others, precise.Repository{Name: f.name, Indexes: f.current().indexes})
		}
	}
	set, err := precise.NewSet(r.Tenant, precise.Repository{Name: r.Name, Indexes: now.indexes}, others...)
	return set, now.state, err
}

// State returns how far the indexing of view is (none for a view not
// followed).
func (k *Keeper) State(view repo.View) precise.State {
	if f := k.of(view); f != nil {
		return f.current().state
	}
	return precise.State{}
}

// take waits for the turn to run an indexer; false when ctx ends first.
func (k *Keeper) take(ctx context.Context) bool {
	select {
	case k.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// give hands the turn on.
func (k *Keeper) give() { <-k.turn }
