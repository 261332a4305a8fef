package contextsearch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/store"
)

// MemoryLister reads memory entries (store.Memory's List).
type MemoryLister interface {
	List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error)
}

// CodeSource yields the repository snapshot a tenant searches: its files
// as the repository walker lists them (ignored files, excluded folders and
// binaries left out). contextindex.RepoSnapshots is the one over shared/repo.
type CodeSource interface {
	Open(ctx context.Context, tenant string) (contextindex.Snapshot, error)
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

	mu      sync.Mutex
	tenants map[string]*tenantState
}

// New returns the service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.RefreshCode == 0 {
		o.RefreshCode = 30 * time.Second
	}
	s := &Service{o: o, store: contextindex.NewStore(o.Blobs), tenants: map[string]*tenantState{}}
	if o.BuildLocally {
		s.build = newBuilder(s.store, o.Embedder, o.Code, o.RefreshCode, o.Now, o.Log)
	}
	return s
}

// Settle waits for background index work (local builds) to finish.
func (s *Service) Settle() {
	if s.build != nil {
		s.build.wait()
	}
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

	code     *contextindex.CodeIndex
	codeRepo string // whose code index: the tenant's, or the default repository's
	codeTag  string
	codeRead checked

	vectors     *contextindex.Vectors
	vectorsTag  string
	vectorsRead checked

	corpus *contextindex.Corpus
	parts  [3]any // what corpus was built from
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
		}
		ts = &tenantState{seen: map[string]bool{}, after: map[string]string{}}
		s.tenants[tenant] = ts
	}
	ts.used = s.o.Now()
	return ts
}

// corpus brings the tenant's index up to date and returns it.
func (s *Service) corpus(ctx context.Context, tenant string) (*contextindex.Corpus, error) {
	ts := s.state(tenant)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := s.refreshMemory(ctx, tenant, ts); err != nil {
		return nil, err
	}
	if s.build != nil {
		if err := s.build.code(ctx, tenant); err != nil {
			s.o.Log.Warn("context index: local code build failed", "tenant", tenant, "error", err)
		}
	}
	if err := s.refreshCode(ctx, tenant, ts); err != nil {
		return nil, err
	}
	model := ""
	if s.o.Embedder != nil {
		model = s.o.Embedder.Model()
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
	parts := [3]any{ts.memSeg, ts.code, ts.vectors}
	if ts.corpus == nil || parts != ts.parts {
		segs := []*contextindex.Segment{ts.memSeg}
		var vecs []*contextindex.Vectors
		if ts.code != nil {
			segs = append(segs, ts.code.Segment)
			vecs = append(vecs, ts.code.Vectors)
		}
		ts.corpus = contextindex.NewCorpus(model, segs, append(vecs, ts.vectors)...)
		ts.parts = parts
	}
	return ts.corpus, nil
}

// refreshMemory reads the entries written since the last refresh (and a
// little before, see memoryOverlap) and rebuilds the memory segment when
// there are new ones.
func (s *Service) refreshMemory(ctx context.Context, tenant string, ts *tenantState) error {
	changed := ts.memSeg == nil
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

// refreshCode loads the tenant's current code index when the pointer
// changed (revalidated by ETag when no longer trusted).
func (s *Service) refreshCode(ctx context.Context, tenant string, ts *tenantState) error {
	if s.trusted(ts.codeRead) {
		return nil
	}
	mark := s.check() // before reading: a save during the read is seen next time
	repoKey := tenant
	p, tag, err := s.store.Pointer(ctx, repoKey, ts.codeTag)
	if errors.Is(err, fs.ErrNotExist) && s.o.DefaultRepo != "" && s.o.DefaultRepo != tenant {
		// A tenant without a repository of its own reads the default one,
		// as the other repository tools do.
		repoKey = s.o.DefaultRepo
		if ts.codeRepo != repoKey {
			ts.codeTag = ""
		}
		p, tag, err = s.store.Pointer(ctx, repoKey, ts.codeTag)
	}
	ts.codeRepo = repoKey
	switch {
	case errors.Is(err, contextindex.ErrNotModified):
	case errors.Is(err, fs.ErrNotExist):
		ts.code, ts.codeTag = nil, ""
	case err != nil:
		return fmt.Errorf("read the code index pointer: %w", err)
	default:
		if ts.code == nil || ts.code.Commit != p.Commit || !ts.code.BuiltAt.Equal(p.BuiltAt) {
			ix, err := s.store.LoadCode(ctx, repoKey, p.Commit)
			if err != nil {
				return err
			}
			ts.code = ix
		}
		ts.codeTag = tag
	}
	ts.codeRead = mark
	return nil
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
