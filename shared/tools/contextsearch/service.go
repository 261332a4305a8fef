package contextsearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/wiring"
)

// MemoryLister reads memory entries (store.Memory's List).
type MemoryLister interface {
	List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error)
}

// Limits of the per-process state.
const (
	// maxTenants is how many tenants' indexes a process keeps warm.
	maxTenants = 16
	// memoryOverlap is how far back each refresh re-reads memory entries:
	// ids are time-ordered by their writer's clock, and writers' clocks
	// may differ a little.
	memoryOverlap = 2 * time.Minute
)

// Service answers context_search.
type Service struct {
	o     Options
	store *contextindex.Store
	build *builder // nil unless building locally

	loads sync.WaitGroup // background loads of new code indexes

	mu      sync.Mutex
	tenants map[string]*tenantState
	lives   map[repo.View]*contextindex.Live // local: one code index per repository
	repos   map[string]*storedRepo           // deployed: the stored index of each repository read
}

// New returns the service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{o: o, store: contextindex.NewStore(o.Blobs), tenants: map[string]*tenantState{},
		lives: map[repo.View]*contextindex.Live{}, repos: map[string]*storedRepo{}}
	if o.BuildLocally {
		s.build = newBuilder(s.store, o.Embedder, o.Log)
	}
	return s
}

// Settle waits until the background work is done: memory entries
// embedded, code indexes caught up with their repositories.
func (s *Service) Settle() {
	s.loads.Wait()
	if s.build != nil {
		s.build.wait()
	}
	for _, l := range s.LiveIndexes() {
		l.Settle()
	}
}

// Close stops the background work: the code indexes are saved and stop
// following their repositories.
func (s *Service) Close() {
	if s.build != nil {
		s.build.wait()
	}
	for _, l := range s.LiveIndexes() {
		l.Close()
	}
}

// LiveIndexes returns the code indexes the service keeps (locally, one
// per repository).
func (s *Service) LiveIndexes() []*contextindex.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.lives))
}

// IndexStatus is how far one code index is, for operators.
type IndexStatus struct {
	Repository   string `json:"repository"` // the folder's name
	Key          string `json:"key"`        // where it is stored: <data>/index/<key>
	State        string `json:"state"`      // building or ready
	FilesIndexed int    `json:"filesIndexed"`
	FilesTotal   int    `json:"filesTotal"`
	Chunks       int    `json:"chunks"`
}

// Indexes returns how far each code index the service keeps is, by key.
func (s *Service) Indexes() []IndexStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []IndexStatus{}
	for view, l := range s.lives {
		p := l.State().Progress
		name := ""
		if d, ok := view.(interface{ Dir() string }); ok {
			name = filepath.Base(d.Dir())
		}
		out = append(out, IndexStatus{Repository: name, Key: liveKey(view), State: p.State,
			FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal, Chunks: p.Chunks})
	}
	slices.SortFunc(out, func(a, b IndexStatus) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Start begins indexing the repositories a tenant reads (locally every
// tenant reads the same ones), in the background, without waiting.
func (s *Service) Start(ctx context.Context, tenant string) error {
	if s.o.Repo == nil {
		return nil
	}
	list, err := s.o.Repo.List(ctx, tenant)
	if err != nil {
		return err
	}
	for _, l := range list {
		view, err := s.o.Repo.Open(ctx, reposcope.Ref{Tenant: tenant, Name: l.Name})
		if err != nil {
			return err
		}
		s.live(view)
	}
	return nil
}

// live returns the code index of a view, started on first use.
func (s *Service) live(view repo.View) *contextindex.Live {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lives[view]
	if l == nil {
		l = contextindex.NewLive(view, contextindex.LiveOptions{
			Store: s.store, Key: liveKey(view), Embedder: s.o.Embedder, SaveAfter: s.o.SaveAfter, Log: s.o.Log, Now: s.o.Now,
		})
		s.lives[view] = l
	}
	return l
}

// liveKey names a view's stored code index (repo.Key; "local" for a view
// without one).
func liveKey(view repo.View) string { return cmp.Or(repo.Key(view), "local") }

// tenantState is what the service keeps warm for one tenant.
type tenantState struct {
	mu   sync.Mutex
	used time.Time

	// memory entries read so far
	seen   map[string]bool
	docs   []contextindex.Doc
	after  map[string]string // file → List cursor of the next refresh
	memSeg *contextindex.Segment
	// memDirty: docs has entries memSeg lacks (a refresh failed midway).
	memDirty bool

	code map[string]*codeState // deployed: by repository name

	vectors     *contextindex.Vectors
	vectorsTag  string
	vectorsRead checked

	// The memory collection searched, and what it was made of. The code
	// collections are shared by every tenant that reads their repository.
	memColl   *contextindex.Collection
	memCollOf [2]any // memSeg, vectors
}

// state returns the tenant's state, evicting the least recently used
// tenant beyond maxTenants.
func (s *Service) state(tenant string) *tenantState {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.tenants[tenant]
	if !ok {
		if len(s.tenants) >= maxTenants {
			var oldest string
			for name, t := range s.tenants {
				if oldest == "" || t.used.Before(s.tenants[oldest].used) {
					oldest = name
				}
			}
			delete(s.tenants, oldest)
			for key := range s.repos {
				// A tenant's own repositories are read by it alone.
				if r, _ := reposcope.ParseKey(key); r.Tenant == oldest && key != s.o.DefaultRepo {
					delete(s.repos, key)
				}
			}
		}
		ts = &tenantState{seen: map[string]bool{}, after: map[string]string{}, code: map[string]*codeState{}}
		s.tenants[tenant] = ts
	}
	ts.used = s.o.Now()
	return ts
}

// revalidateWait bounds asking the store whether what the service holds
// (memory entries, a stored code index's pointer) changed: on a failure or
// a hang, what is held is served and the answer says so.
const revalidateWait = 300 * time.Millisecond

// held runs refresh under ctx, or, when the service holds something to
// serve (have), under a revalidateWait bound; a failure then is logged
// and returned as a notice for the caller instead of an error.
func (s *Service) held(ctx context.Context, have bool, what, tenant string, refresh func(context.Context) error) (notice string, err error) {
	if !have {
		return "", refresh(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, revalidateWait)
	defer cancel()
	if err := refresh(rctx); err != nil {
		s.o.Log.Warn("context index: refreshing failed; serving what is held", "what", what, "tenant", tenant, "error", err)
		return fmt.Sprintf("The %s could not be refreshed (storage is unavailable); these results may miss the latest changes.", what), nil
	}
	return "", nil
}

// corpus brings the tenant's index up to date and returns it, with the
// code of the repository r, how far its code index is (nil when there is no
// code index) and a notice when part of it could not be refreshed. asked
// says r was named by the call: then a repository without code (or
// without an index deployed) is RESOURCE_NOT_FOUND.
func (s *Service) corpus(ctx context.Context, r reposcope.Ref, asked bool) (*contextindex.Corpus, *indexJSON, string, error) {
	tenant := r.Tenant
	ts := s.state(tenant)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	notice, err := s.held(ctx, ts.memSeg != nil, "memory entries", tenant, func(ctx context.Context) error {
		return s.refreshMemory(ctx, tenant, ts)
	})
	if err != nil {
		return nil, nil, "", err
	}
	model := ""
	if s.o.Embedder != nil {
		model = s.o.Embedder.Model()
	}
	code, progress, codeNotice, err := s.codeCollection(ctx, r, ts, model)
	if err != nil {
		return nil, nil, "", err
	}
	if asked && progress == nil {
		return nil, nil, "", reposcope.NotFound(r.Name)
	}
	notice = cmp.Or(notice, codeNotice)
	return contextindex.Join(s.memoryCollection(ctx, tenant, ts, model), code), progress, notice, nil
}

// codeCollection returns the code index of the repository r as a
// collection, with how far it is (both nil when there is none) and a
// notice when it could not be refreshed. A local repository's is its live
// index; otherwise it is read from the store (stored.go). The caller holds
// ts.mu.
func (s *Service) codeCollection(ctx context.Context, r reposcope.Ref, ts *tenantState, model string) (*contextindex.Collection, *indexJSON, string, error) {
	if s.o.Repo == nil {
		return s.storedCode(ctx, r, ts, model)
	}
	st, err := s.localCode(ctx, r)
	if err != nil || st == nil {
		return nil, nil, "", err
	}
	coll, p := st.Collection(), st.Progress
	return coll, &indexJSON{State: p.State, FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal,
		Chunks: p.Chunks, Vectors: contextindex.Join(coll).Vectors()}, "", nil
}

// memoryCollection returns the tenant's memory entries, refreshed into ts,
// as a collection: with their vectors when there is an embedder (entries
// without one are sent to be embedded). The caller holds ts.mu.
func (s *Service) memoryCollection(ctx context.Context, tenant string, ts *tenantState, model string) *contextindex.Collection {
	if s.o.Embedder != nil {
		if err := s.refreshVectors(ctx, tenant, ts); err != nil {
			// Vectors are an improvement, not a requirement: rank lexically.
			s.o.Log.Warn("context index: memory vectors unavailable", "tenant", tenant, "error", err)
		}
	}
	if s.build != nil && s.o.Embedder != nil {
		// After reading the vectors: this call ranks with what exists,
		// and only entries without a vector are sent to be embedded.
		if missing := ts.memSeg.WithoutVectors(ts.vectors); len(missing) > 0 {
			s.build.memory(tenant, missing)
		}
	}
	if of := [2]any{ts.memSeg, ts.vectors}; ts.memColl == nil || ts.memCollOf != of {
		ts.memColl = contextindex.NewCollection(model, []contextindex.Part{{Seg: ts.memSeg}}, ts.vectors)
		ts.memCollOf = of
	}
	return ts.memColl
}

// localCode returns the live code index of the repository r, or nil when
// there is no such repository.
func (s *Service) localCode(ctx context.Context, r reposcope.Ref) (*contextindex.LiveState, error) {
	view, err := s.o.Repo.Open(ctx, r)
	if errors.Is(err, repo.ErrNoRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the repository: %w", err)
	}
	return s.live(view).State(), nil
}

// codeIndex says how far the live code index of the repository r is
// (wiring.Env.CodeIndex, locally).
func (s *Service) codeIndex(ctx context.Context, r reposcope.Ref) (wiring.RepoIndex, error) {
	st, err := s.localCode(ctx, r)
	if err != nil || st == nil {
		return wiring.RepoIndex{State: wiring.RepoIndexNone}, err
	}
	p := st.Progress
	return wiring.RepoIndex{State: p.State, FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal}, nil
}

// refreshMemory reads the entries written since the last refresh (and a
// little before, see memoryOverlap) and rebuilds the memory segment when
// there are new ones.
func (s *Service) refreshMemory(ctx context.Context, tenant string, ts *tenantState) error {
	changed := ts.memSeg == nil || ts.memDirty
	for _, file := range contextindex.MemoryFiles {
		q := store.MemoryQuery{Limit: store.MaxLimit, After: ts.after[file]}
		var newest time.Time
		for {
			page, err := s.o.Memory.List(ctx, tenant, file, q)
			if err != nil {
				return fmt.Errorf("read %s: %w", file, err)
			}
			for _, e := range page.Entries {
				if e.CreatedAt.After(newest) {
					newest = e.CreatedAt
				}
				if ts.seen[e.ID] {
					continue
				}
				ts.seen[e.ID] = true
				if d, ok := contextindex.MemoryDoc(e); ok {
					ts.docs = append(ts.docs, d)
					ts.memDirty = true // until the segment has it, even if this refresh fails
					changed = true
				}
			}
			if page.Next == "" {
				break
			}
			q.After = page.Next
		}
		if !newest.IsZero() {
			// Ids start with 19 digits of Unix nanoseconds, so this
			// prefix sorts before every id written since then.
			ts.after[file] = fmt.Sprintf("%019d", max(newest.Add(-memoryOverlap).UnixNano(), 0))
		}
	}
	if changed {
		slices.SortFunc(ts.docs, func(a, b contextindex.Doc) int { return a.Date.Compare(b.Date) })
		ts.memSeg = contextindex.NewSegment(slices.Clone(ts.docs))
		ts.memDirty = false
	}
	return nil
}

// checked is when a stored index was last asked for, and how many saves
// the local builder had made then.
type checked struct {
	at    time.Time
	saves uint64
}

// check returns the mark of an ask made now.
func (s *Service) check() checked {
	c := checked{at: s.o.Now()}
	if s.build != nil {
		c.saves = s.build.saves.Load()
	}
	return c
}

// trusted reports whether an index asked for at c may be used without
// asking the store again: locally until the builder, its only writer,
// saves again; deployed for Revalidate.
func (s *Service) trusted(c checked) bool {
	switch {
	case c.at.IsZero():
		return false
	case s.build != nil:
		return c.saves == s.build.saves.Load()
	default:
		return s.o.Now().Sub(c.at) < s.o.Revalidate
	}
}

// refreshVectors loads the vectors of the tenant's memory entries when
// they changed (revalidated by ETag when no longer trusted).
func (s *Service) refreshVectors(ctx context.Context, tenant string, ts *tenantState) error {
	if s.trusted(ts.vectorsRead) {
		return nil
	}
	mark := s.check()
	v, tag, err := s.store.MemoryVectors(ctx, tenant, s.o.Embedder.Model(), ts.vectorsTag)
	switch {
	case errors.Is(err, contextindex.ErrNotModified):
	case err != nil:
		return err
	default:
		ts.vectors, ts.vectorsTag = v, tag
	}
	ts.vectorsRead = mark
	return nil
}
