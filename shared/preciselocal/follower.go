package preciselocal

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// follower keeps the indexes of one view. Its run goroutine alone touches
// projects and stored; answers read what it published.
type follower struct {
	k    *Keeper
	name string
	view repo.View
	src  string // the view's directory, which indexers read
	dir  string // its stores' folder
	log  *slog.Logger

	published atomic.Pointer[published]

	projects []*project
	stored   map[projectKey]*record // read from the manifest, not yet claimed by a project
}

// published is what answers read: it never changes once published.
type published struct {
	indexes []*precise.Index
	state   precise.State
	status  []ProjectStatus
}

func newFollower(k *Keeper, name string, view repo.View, src, dir string) *follower {
	f := &follower{k: k, name: name, view: view, src: src, dir: dir,
		log: k.o.Log.With("repository", name)}
	f.published.Store(&published{})
	return f
}

// current returns what answers read now.
func (f *follower) current() *published { return f.published.Load() }

// run indexes the view once it is read, then follows it until ctx ends.
func (f *follower) run(ctx context.Context) {
	if _, _, ok := repo.LatestSearchable(ctx, f.view, f.log, "precise"); !ok {
		return
	}
	if f.k.o.Ready != nil {
		f.k.o.Ready(ctx, f.view)
	}
	f.load(ctx)
	for ctx.Err() == nil {
		v := f.view.Version()
		f.pass(ctx)
		if !f.settle(ctx, v) {
			return
		}
	}
}

// settle waits for the view to change past v and then to be quiet for
// Options.Quiet; false when ctx ends first.
func (f *follower) settle(ctx context.Context, v uint64) bool {
	select {
	case <-f.view.Changed(v):
	case <-ctx.Done():
		return false
	}
	quiet := time.NewTimer(f.k.o.Quiet)
	defer quiet.Stop()
	for {
		v = f.view.Version()
		select {
		case <-f.view.Changed(v):
			quiet.Reset(f.k.o.Quiet)
		case <-quiet.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// pass finds the view's projects and brings each one up to date.
func (f *follower) pass(ctx context.Context) {
	found, err := sciprun.Projects(ctx, f.view)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("precise: finding the projects failed; trying again at the next change", "error", err)
		}
		return
	}
	f.reconcile(found)
	for _, p := range f.projects {
		if ctx.Err() != nil {
			return
		}
		f.bring(ctx, p)
	}
}

// bring indexes what changed in project p, if anything did, when its
// turn comes.
func (f *follower) bring(ctx context.Context, p *project) {
	if f.plan(ctx, p).none() {
		return
	}
	if p.stores == nil && p.status != precise.Queued {
		p.set(precise.Queued, "")
		f.publish()
	}
	if !f.k.take(ctx) {
		return
	}
	defer f.k.give()
	w := f.plan(ctx, p) // what changed while it waited counts too
	if w.none() {
		return
	}
	if p.stores == nil {
		p.set(precise.Running, "")
	} else {
		p.reason = "re-indexing: " + w.why
	}
	f.publish()
	err := f.index(ctx, p, w)
	switch {
	case ctx.Err() != nil:
		return // closing: what is stored stays as it was
	case err != nil:
		p.failed(err, w.inputs, f.log)
	default:
		p.set(precise.Ready, "")
	}
	f.publish()
}

// publish makes the projects' stores and states what answers read.
func (f *follower) publish() {
	now := &published{}
	roots := make([]sciprun.Project, len(f.projects))
	for i, p := range f.projects {
		roots[i] = p.Project
		for _, s := range p.stores {
			now.indexes = append(now.indexes, s.ix)
		}
		now.state.Projects = append(now.state.Projects, p.state())
		now.status = append(now.status, p.report())
	}
	now.state.Cover = cover(roots)
	f.published.Store(now)
}

// close closes the stores (the keeper has stopped run).
func (f *follower) close() {
	for _, p := range f.projects {
		closeStores(p.stores)
	}
	for _, r := range f.stored {
		closeStores(r.stores)
	}
}
