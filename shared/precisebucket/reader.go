package precisebucket

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Options tune a Reader.
type Options struct {
	// CacheBytes is the block cache of each open store
	// (objects.RangeReader); 0 is DefaultCacheBytes.
	CacheBytes int64
	// Refresh is how long a conversion under way, and what was read of
	// the tenant's other repositories, is trusted before it is read again
	// (0: DefaultRefresh).
	Refresh time.Duration
	Now     func() time.Time // nil: time.Now
	Log     *slog.Logger     // nil: discard
}

// Defaults of Options.
const (
	DefaultCacheBytes = 8 << 20
	DefaultRefresh    = 10 * time.Second
)

// Reader opens the precise indexes a call reads: the stores of the
// snapshot its view is (those its pointer names, as converted so far),
// and, for global symbols, those of the current snapshots of the
// tenant's other repositories. What it opens for a view (each store's
// tables and block cache) is held against the view (repo.View.Hold), so
// that it counts in its source's memory budget, and it goes when the view
// does. It is safe for concurrent use.
type Reader struct {
	bucket *objects.Bucket
	src    repo.Source
	o      Options

	mu    sync.Mutex
	views map[repo.View]*viewIndexes
}

// NewReader returns a Reader of the bucket's stores; src lists a tenant's
// repositories.
func NewReader(b *objects.Bucket, src repo.Source, o Options) *Reader {
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Reader{bucket: b, src: src, o: o, views: map[repo.View]*viewIndexes{}}
}

// Indexes answers the precise indexes of a call of r's tenant reading the
// repository r, whose view is view, with those of the other repositories
// allowed names (nil: every one) for global symbols (see
// wiring.PreciseIndexes). A view the deployment's default repository
// stands in for (reposcope.Fallback) is that repository's, another
// tenant's: its Set is of that tenant, with no other repository.
func (rd *Reader) Indexes(ctx context.Context, r reposcope.Ref, view repo.View, allowed []string) (*precise.Set, precise.State, error) {
	owner, p, ok := repo.PointerOf(view)
	if !ok {
		set, err := precise.NewSet(r.Tenant, precise.Repository{Name: r.Name})
		return set, precise.State{}, err
	}
	vi := rd.of(view)
	home, state, err := vi.home(ctx, rd, owner, p)
	if err != nil {
		return nil, precise.State{}, err
	}
	var others []precise.Repository
	if owner.Tenant == r.Tenant {
		others = vi.others(ctx, rd, r, allowed)
	}
	set, err := precise.NewSet(owner.Tenant, precise.Repository{Name: r.Name, Indexes: home}, others...)
	return set, state, err
}

// of returns what is open for view, made on first use and dropped when
// the view is done.
func (rd *Reader) of(view repo.View) *viewIndexes {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	vi := rd.views[view]
	if vi == nil {
		vi = &viewIndexes{view: view, stores: map[string]openStore{}, statuses: map[string]Status{}}
		rd.views[view] = vi
		go func() {
			<-view.Done()
			rd.mu.Lock()
			delete(rd.views, view)
			rd.mu.Unlock()
		}()
	}
	return vi
}

// viewIndexes is what a Reader has open for one view: the stores of its
// snapshot and of the tenant's other repositories, with what it read to
// find them. mu is held while they are read, so that concurrent calls
// read them once.
type viewIndexes struct {
	view repo.View
	mu   sync.Mutex
	// stores are the stores open, by key; held, the bytes held for them.
	stores map[string]openStore
	held   int64
	// statuses are the final statuses read, by key.
	statuses map[string]Status

	// The view's own: of the pointer numbered seq, read at homeRead
	// (running: some conversion was under way then).
	seq      int64
	homeRead time.Time
	running  bool
	homeIx   []*precise.Index
	state    precise.State

	// The tenant's other repositories, read at reposRead.
	repos     []otherRepo
	reposRead time.Time
}

// openStore is an open store and the bytes held for it.
type openStore struct {
	ix    *precise.Index
	bytes int64
}

// otherRepo is another repository of the tenant and its ready stores.
type otherRepo struct {
	name    string
	indexes []*precise.Index
}

// home returns the open stores of the pointer p of the owner's
// repository (whose snapshot the view is) and the State of its indexing,
// read again when p changed or, while a conversion is under way, after
// Refresh.
func (vi *viewIndexes) home(ctx context.Context, rd *Reader, owner reposcope.Ref, p repo.Pointer) ([]*precise.Index, precise.State, error) {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	now := rd.o.Now()
	if vi.seq == p.Seq && !vi.homeRead.IsZero() && (!vi.running || now.Sub(vi.homeRead) < rd.o.Refresh) {
		return vi.homeIx, vi.state, nil
	}
	keys := make([]string, len(p.Precise))
	for i, x := range p.Precise {
		if x.Key != "" {
			keys[i] = StatusKey(owner.Key(), p.Commit, x)
		}
	}
	got := vi.fetch(ctx, rd, keys)
	vi.keep(rd, got)
	projects := make([]precise.ProjectState, len(p.Precise))
	ready := make([]*precise.Index, len(p.Precise))
	running, stale := false, false
	for i, x := range p.Precise {
		ps, ix, err := projectState(rd, p, x, got[i])
		if err != nil {
			return nil, precise.State{}, err
		}
		projects[i], ready[i] = ps, ix
		running = running || ps.Status == precise.Running
		stale = stale || ix != nil && got[i].st.Stale > 0
	}
	vi.homeIx = nil // a new slice: calls still answering hold the old one
	for _, ix := range ready {
		if ix != nil {
			vi.homeIx = append(vi.homeIx, ix)
		}
	}
	vi.state = stateOf(p, projects, ready)
	// Each store was converted against this snapshot's own files (its
	// commit's): only a stale document differs from the view's.
	vi.state.Unchanged = !stale
	vi.seq, vi.homeRead, vi.running = p.Seq, now, running
	vi.release()
	return vi.homeIx, vi.state, nil
}

// projectState is how far x's conversion is, as f read it, and, when it
// is ready, its open store. A store that is damaged is the project's
// failure; one S3 does not give is the call's.
func projectState(rd *Reader, p repo.Pointer, x repo.PreciseIndex, f fetched) (precise.ProjectState, *precise.Index, error) {
	ps := precise.ProjectState{Root: x.Root, Language: languageOf(x), Indexer: x.Indexer, Since: p.Created}
	switch {
	case x.Key == "" && x.Unavailable:
		ps.Status, ps.Reason = precise.Unavailable, x.Reason
	case x.Key == "":
		ps.Status, ps.Reason = precise.Failed, x.Reason
	case errors.Is(f.err, precise.ErrCorrupt):
		rd.o.Log.Error("precise: a store is damaged; its files are answered by search", "store", f.st.Store, "error", f.err)
		ps.Status, ps.Reason, ps.Since = precise.Failed, "its converted index is damaged", f.st.Converted
	case f.err != nil:
		return ps, nil, f.err
	case !f.have:
		ps.Status = precise.Running
	case f.st.State != Ready:
		ps.Status, ps.Reason, ps.Since = precise.Failed, f.st.Reason, f.st.Converted
	default:
		ps.Status, ps.Commit, ps.Since = precise.Ready, p.Commit, f.st.Converted
		return ps, f.ix, nil
	}
	return ps, nil, nil
}

// fetched is what fetch read of one conversion: its final status (have:
// there is one) and, when it is ready, its open store (opened: by this
// fetch).
type fetched struct {
	key    string
	st     Status
	have   bool
	ix     *precise.Index
	opened bool
	err    error
}

// fetch reads the statuses at keys ("" for none) and opens the ready
// stores, all at once (each is a request or a few), from what is kept
// where it can. It changes nothing of vi, whose mu the caller holds:
// keep records what it read.
func (vi *viewIndexes) fetch(ctx context.Context, rd *Reader, keys []string) []fetched {
	out := make([]fetched, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		if key != "" {
			wg.Go(func() { out[i] = vi.fetchOne(ctx, rd, key) })
		}
	}
	wg.Wait()
	return out
}

// fetchOne is fetch of one status.
func (vi *viewIndexes) fetchOne(ctx context.Context, rd *Reader, key string) fetched {
	f := fetched{key: key}
	if f.st, f.have = vi.statuses[key]; !f.have {
		f.st, f.have, f.err = ReadStatus(ctx, rd.bucket, key)
	}
	if f.err != nil || !f.have || f.st.State != Ready {
		return f
	}
	if s, ok := vi.stores[f.st.Store]; ok {
		f.ix = s.ix
		return f
	}
	r := objects.NewRangeReader(rd.bucket, objects.Info{Key: f.st.Store, Size: f.st.Bytes, ETag: f.st.ETag}, rd.o.CacheBytes)
	f.ix, f.err = precise.Open(ctx, r, f.st.Bytes)
	f.opened = f.err == nil
	return f
}

// keep records what fetch read: the final statuses, and the stores it
// opened, held against the view.
func (vi *viewIndexes) keep(rd *Reader, got []fetched) {
	for _, f := range got {
		if f.have {
			vi.statuses[f.key] = f.st
		}
		if _, open := vi.stores[f.st.Store]; f.opened && !open {
			s := openStore{ix: f.ix, bytes: f.ix.Memory() + rd.o.CacheBytes}
			vi.stores[f.st.Store] = s
			vi.held += s.bytes
			vi.view.Hold(s.bytes)
		}
	}
}

// release closes the stores neither the view's own nor the other
// repositories' use any longer.
func (vi *viewIndexes) release() {
	used := map[*precise.Index]bool{}
	for _, ix := range vi.homeIx {
		used[ix] = true
	}
	for _, o := range vi.repos {
		for _, ix := range o.indexes {
			used[ix] = true
		}
	}
	for key, s := range vi.stores {
		if !used[s.ix] {
			delete(vi.stores, key)
			vi.held -= s.bytes
			vi.view.Hold(-s.bytes)
		}
	}
}

// others returns the ready stores of the tenant's other repositories
// that allowed names (nil: every one), read again after Refresh. Those
// that cannot be read are left out (and logged): they only widen answers
// about global symbols.
func (vi *viewIndexes) others(ctx context.Context, rd *Reader, r reposcope.Ref, allowed []string) []precise.Repository {
	vi.mu.Lock()
	defer vi.mu.Unlock()
	if now := rd.o.Now(); vi.reposRead.IsZero() || now.Sub(vi.reposRead) >= rd.o.Refresh {
		repos, err := vi.readOthers(ctx, rd, r)
		if err != nil {
			rd.o.Log.Warn("precise: the other repositories' indexes could not be read; answers leave them out", "tenant", r.Tenant, "error", err)
		} else {
			vi.repos, vi.reposRead = repos, now
			vi.release()
		}
	}
	var out []precise.Repository
	for _, o := range vi.repos {
		if o.name != r.Name && reposcope.Allows(allowed, o.name) && len(o.indexes) > 0 {
			out = append(out, precise.Repository{Name: o.name, Indexes: o.indexes})
		}
	}
	return out
}

// readOthers reads the tenant's other repositories (never one another
// tenant's repository stands in for) and opens their ready stores.
func (vi *viewIndexes) readOthers(ctx context.Context, rd *Reader, r reposcope.Ref) ([]otherRepo, error) {
	list, err := rd.src.List(ctx, r.Tenant)
	if err != nil {
		return nil, err
	}
	var out []otherRepo
	var keys []string
	var owners []int // the repository (in out) of each key
	for _, l := range list {
		if l.Name == r.Name || l.Read != (reposcope.Ref{Tenant: r.Tenant, Name: l.Name}) {
			continue
		}
		p, ok, err := repo.ReadPointer(ctx, rd.bucket, l.Read)
		if err != nil {
			return nil, err
		}
		for _, x := range p.Precise {
			if ok && x.Key != "" {
				keys, owners = append(keys, StatusKey(l.Read.Key(), p.Commit, x)), append(owners, len(out))
			}
		}
		out = append(out, otherRepo{name: l.Name})
	}
	got := vi.fetch(ctx, rd, keys)
	vi.keep(rd, got)
	for i, f := range got {
		if f.err != nil {
			rd.o.Log.Warn("precise: another repository's index could not be read; answers leave it out", "status", f.key, "error", f.err)
		}
		if f.ix != nil {
			out[owners[i]].indexes = append(out[owners[i]].indexes, f.ix)
		}
	}
	return out, nil
}

// State returns how far the precise indexing of r's current snapshot is
// (list_repos): from its pointer and the statuses the indexer wrote,
// small objects read at once; no store is opened and no snapshot read.
// A repository with no snapshot has an empty State.
func (rd *Reader) State(ctx context.Context, r reposcope.Ref) (precise.State, error) {
	p, ok, err := repo.ReadPointer(ctx, rd.bucket, r)
	if err != nil || !ok {
		return precise.State{}, err
	}
	got := make([]fetched, len(p.Precise))
	var wg sync.WaitGroup
	for i, x := range p.Precise {
		if x.Key != "" {
			wg.Go(func() {
				f := fetched{key: StatusKey(r.Key(), p.Commit, x)}
				f.st, f.have, f.err = ReadStatus(ctx, rd.bucket, f.key)
				got[i] = f
			})
		}
	}
	wg.Wait()
	projects := make([]precise.ProjectState, len(p.Precise))
	for i, x := range p.Precise {
		if projects[i], _, err = projectState(rd, p, x, got[i]); err != nil {
			return precise.State{}, err
		}
	}
	return stateOf(p, projects, make([]*precise.Index, len(p.Precise))), nil
}
