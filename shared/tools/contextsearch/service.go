package contextsearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/contextindex/memorydoc"
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

// codeIndexes is where the code searched comes from, and who keeps its
// indexes: built in process (live.go) or read from the indexer's in the
// store (stored.go).
type codeIndexes interface {
	// defaultRepo names the repository a call without "repo" searches.
	defaultRepo() string
	// code returns the code index of the repository r as a collection,
	// with how far it is (both nil when there is none) and a notice when
	// it could not be refreshed. The caller holds ts.mu.
	code(ctx context.Context, r reposcope.Ref, ts *tenantState, model string) (*contextindex.Collection, *indexJSON, string, error)
	// embedMemory sends a tenant's memory entries that have no vector to
	// be embedded, when this process is the one that embeds them.
	embedMemory(tenant string, docs []contextindex.Doc)
	// check returns the mark of a read of the store made now; trusted
	// reports whether what was read at c may be used without asking the
	// store again.
	check() checked
	trusted(c checked) bool
	// forgetTenant drops what is held for a tenant no longer kept warm.
	forgetTenant(tenant string)
	// settle waits until the background work is done; close stops it.
	settle()
	close()
	// status says how far the code index kept in process of each
	// repository in repos (nil: every one) is.
	status(repos []string) []IndexStatus
}

// Service answers context_search.
type Service struct {
	o     Options
	store *indexfile.Store
	code  codeIndexes

	mu      sync.Mutex
	tenants map[string]*tenantState
}

// New returns the service, with the code indexes o.Mode says.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{o: o, store: indexfile.NewStore(o.Blobs), tenants: map[string]*tenantState{}}
	if o.Mode == wiring.CodeIndexLive {
		s.code = newLiveIndexes(o, s.store)
	} else {
		s.code = newStoredIndexes(o, s.store)
	}
	return s
}

// Settle waits until the background work is done: memory entries
// embedded, code indexes read or caught up with their repositories.
func (s *Service) Settle() { s.code.settle() }

// Close stops the background work: the code indexes are saved and stop
// following their repositories.
func (s *Service) Close() { s.code.close() }

// LiveIndexes returns the code indexes the service keeps in process (one
// per repository; none when it reads stored ones).
func (s *Service) LiveIndexes() []*contextindex.Live {
	if l, ok := s.code.(*liveIndexes); ok {
		return l.all()
	}
	return nil
}

// IndexStatus is how far one code index is, for operators.
type IndexStatus struct {
	Repository   string             `json:"repository"` // its name, as list_repos gives it
	Key          string             `json:"key"`        // where it is stored: <data>/index/<key>
	State        contextindex.State `json:"state"`      // building or ready
	FilesIndexed int                `json:"filesIndexed"`
	FilesTotal   int                `json:"filesTotal"`
	Chunks       int                `json:"chunks"`
}

// Indexes returns how far the code index the service keeps of each
// repository in repos (nil: every one) is, by key.
func (s *Service) Indexes(repos []string) []IndexStatus { return s.code.status(repos) }

// Start begins indexing the repositories a tenant reads (locally every
// tenant reads the same ones), in the background, without waiting. It
// does nothing when the service reads stored indexes.
func (s *Service) Start(ctx context.Context, tenant string) error {
	if l, ok := s.code.(*liveIndexes); ok {
		return l.start(ctx, tenant)
	}
	return nil
}

// Preload starts reading a repository's stored index (the default
// repository's, from a function's start) and returns a channel closed
// once it is read, or could not be (at once when the service keeps its
// indexes in process).
func (s *Service) Preload(ctx context.Context, key string) <-chan struct{} {
	if st, ok := s.code.(*storedIndexes); ok {
		return st.preload(ctx, key)
	}
	done := make(chan struct{})
	close(done)
	return done
}

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

	code map[string]*codeState // stored.go: by repository name

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
			s.code.forgetTenant(oldest)
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
func held(ctx context.Context, log *slog.Logger, have bool, what, tenant string, refresh func(context.Context) error) (notice string, err error) {
	if !have {
		return "", refresh(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, revalidateWait)
	defer cancel()
	if err := refresh(rctx); err != nil {
		log.Warn("context index: refreshing failed; serving what is held", "what", what, "tenant", tenant, "error", err)
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
	notice, err := held(ctx, s.o.Log, ts.memSeg != nil, "memory entries", tenant, func(ctx context.Context) error {
		return s.refreshMemory(ctx, tenant, ts)
	})
	if err != nil {
		return nil, nil, "", err
	}
	model := ""
	if s.o.Embedder != nil {
		model = s.o.Embedder.Model()
	}
	code, progress, codeNotice, err := s.code.code(ctx, r, ts, model)
	if err != nil {
		return nil, nil, "", err
	}
	if asked && progress == nil {
		return nil, nil, "", reposcope.NotFound(r.Name)
	}
	notice = cmp.Or(notice, codeNotice)
	return contextindex.Join(s.memoryCollection(ctx, tenant, ts, model), code), progress, notice, nil
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
	if s.o.Embedder != nil {
		// After reading the vectors: this call ranks with what exists,
		// and only entries without a vector are sent to be embedded.
		if missing := ts.memSeg.WithoutVectors(ts.vectors); len(missing) > 0 {
			s.code.embedMemory(tenant, missing)
		}
	}
	if of := [2]any{ts.memSeg, ts.vectors}; ts.memColl == nil || ts.memCollOf != of {
		ts.memColl = contextindex.NewCollection(model, []contextindex.Part{{Seg: ts.memSeg}}, ts.vectors)
		ts.memCollOf = of
	}
	return ts.memColl
}

// refreshMemory reads the entries written since the last refresh (and a
// little before, see memoryOverlap) and rebuilds the memory segment when
// there are new ones.
func (s *Service) refreshMemory(ctx context.Context, tenant string, ts *tenantState) error {
	changed := ts.memSeg == nil || ts.memDirty
	for _, file := range memorydoc.Searched {
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
				if d, ok := memorydoc.Of(e); ok {
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
// the local memory embedder had made then.
type checked struct {
	at    time.Time
	saves uint64
}

// refreshVectors loads the vectors of the tenant's memory entries when
// they changed (revalidated by ETag when no longer trusted).
func (s *Service) refreshVectors(ctx context.Context, tenant string, ts *tenantState) error {
	if s.code.trusted(ts.vectorsRead) {
		return nil
	}
	mark := s.code.check()
	v, tag, err := s.store.MemoryVectors(ctx, tenant, s.o.Embedder.Model(), ts.vectorsTag)
	switch {
	case errors.Is(err, indexfile.ErrNotModified):
	case err != nil:
		return err
	default:
		ts.vectors, ts.vectorsTag = v, tag
	}
	ts.vectorsRead = mark
	return nil
}
