package contextsearch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Deployed (wiring.CodeIndexStored), the code indexes are the indexer's,
// read from the store: one per repository (a tenant's own, or the default
// repository's), shared by every tenant that reads it. A published index is read in the
// background, its parts several at a time, each searchable as soon as it
// is read: a call waits for it at most loadWaitShare of its time, then
// answers from the parts read so far, saying the index is loading. A
// newer published index is read beside the one served and swapped in when
// whole; the same index published again as the indexer embeds its parts
// is read from the one in hand, only the new vectors from the store. The indexer's record of its latest build says when a newer
// snapshot is being indexed, and how far it is.

// Loading limits.
const (
	// loadTimeout bounds reading one index.
	loadTimeout = 5 * time.Minute
	// loadParallel is how many parts are read at once.
	loadParallel = 4
	// loadWaitShare: a call waits for an index being read at most a
	// loadWaitShare-th of the time it has left, keeping the rest to search
	// what is read and answer.
	loadWaitShare = 2
)

// storedIndexes reads the indexer's published code indexes from the
// store.
type storedIndexes struct {
	store      *indexfile.Store
	vectors    bool   // read the code's vectors (there is an embedder)
	defaultKey string // whose index a tenant without one searches; "" for none
	revalidate time.Duration
	log        *slog.Logger
	now        func() time.Time

	loads sync.WaitGroup // background loads of new code indexes

	mu    sync.Mutex
	repos map[string]*storedRepo // the stored index of each repository read
}

var _ codeIndexes = (*storedIndexes)(nil)

func newStoredIndexes(o Options, st *indexfile.Store) *storedIndexes {
	return &storedIndexes{store: st, vectors: o.Embedder != nil, defaultKey: o.DefaultRepo, revalidate: o.Revalidate,
		log: o.Log, now: o.Now, repos: map[string]*storedRepo{}}
}

// defaultRepo names the repository a call without "repo" searches.
func (s *storedIndexes) defaultRepo() string { return reposcope.Default }

// embedMemory: deployed, the indexer embeds memory entries.
func (s *storedIndexes) embedMemory(string, []contextindex.Doc) {}

// check returns the mark of an ask made now.
func (s *storedIndexes) check() checked { return checked{at: s.now()} }

// trusted: what was read at c is current for Revalidate.
func (s *storedIndexes) trusted(c checked) bool {
	return !c.at.IsZero() && s.now().Sub(c.at) < s.revalidate
}

// forgetTenant drops the tenant's own repositories (read by it alone),
// when it is no longer kept warm.
func (s *storedIndexes) forgetTenant(tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.repos {
		if r, _ := reposcope.ParseKey(key); r.Tenant == tenant && key != s.defaultKey {
			delete(s.repos, key)
		}
	}
}

// settle waits until the indexes being read are read.
func (s *storedIndexes) settle() { s.loads.Wait() }

// close: there is nothing to save.
func (s *storedIndexes) close() {}

// status: the indexer's indexes are not this process's to report.
func (s *storedIndexes) status([]string) []IndexStatus { return []IndexStatus{} }

// storedRepo is what the process holds of one repository's stored index.
type storedRepo struct {
	key string

	mu       sync.Mutex
	tag      string       // ETag of the pointer read last
	served   *storedIndex // nil: none yet
	next     *storedIndex // a newer index being read, swapped in when whole
	build    *indexfile.Build
	buildTag string
}

// storedIndex is one published index, as far as it is read.
type storedIndex struct {
	pointer indexfile.Pointer
	done    chan struct{} // closed when every part is read, or reading failed

	mu         sync.Mutex
	parts      []*contextindex.CodeIndex // by place in the manifest; nil until read
	infos      []indexfile.PartInfo      // the manifest's records of the parts
	filesTotal int
	err        error
	coll       *contextindex.Collection // of the parts read when it was made
	collParts  int
	collModel  string
}

// repo returns the process's state of a repository's stored index.
func (s *storedIndexes) repo(key string) *storedRepo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[key]
	if r == nil {
		r = &storedRepo{key: key}
		s.repos[key] = r
	}
	return r
}

// forget drops what the process holds of a repository without an index
// (a tenant that has none of its own), unless it is the default one.
func (s *storedIndexes) forget(key string) {
	if key == s.defaultKey {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.repos, key)
}

// preload starts reading a repository's stored index and returns a
// channel closed once it is read, or could not be.
func (s *storedIndexes) preload(ctx context.Context, key string) <-chan struct{} {
	r := s.repo(key)
	if _, err := s.refreshRepo(ctx, r); err != nil {
		s.log.Warn("context index: preloading failed", "repo", key, "error", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.served == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return r.served.done
}

// codeState is which stored index a tenant's repository is searched in.
type codeState struct {
	key  string // the repository's own, or the default repository's; "" for none
	read checked
}

// refreshCode finds which repository's index the tenant's repository r is
// searched in (its own, else, for a tenant's default repository, the
// deployment's default one) and brings what the process holds of it up to
// date (pointers revalidated by ETag when no longer trusted).
func (s *storedIndexes) refreshCode(ctx context.Context, r reposcope.Ref, cs *codeState) error {
	if s.trusted(cs.read) {
		return nil
	}
	mark := s.check() // before reading: a save during the read is seen next time
	key := r.Key()
	found, err := s.refreshRepo(ctx, s.repo(key))
	if err == nil && !found {
		s.forget(key)
	}
	if fallback, ok := reposcope.Fallback(r, s.defaultKey); err == nil && !found && ok {
		// A tenant without a repository of its own reads the default one,
		// as the other repository tools do.
		key = fallback.Key()
		found, err = s.refreshRepo(ctx, s.repo(key))
	}
	if err != nil {
		return err
	}
	cs.key = ""
	if found {
		cs.key = key
	}
	cs.read = mark
	return nil
}

// refreshRepo revalidates a repository's pointer and build record,
// starting to read a newly published index. It reports whether the
// repository has an index or a build.
func (s *storedIndexes) refreshRepo(ctx context.Context, r *storedRepo) (bool, error) {
	r.mu.Lock()
	tag := r.tag
	r.mu.Unlock()
	p, newTag, err := s.store.Pointer(ctx, r.key, tag)
	switch {
	case errors.Is(err, indexfile.ErrNotModified):
	case errors.Is(err, fs.ErrNotExist):
		r.mu.Lock()
		r.tag, r.served, r.next = "", nil, nil
		r.mu.Unlock()
	case err != nil:
		return false, fmt.Errorf("read the code index pointer of %s: %w", r.key, err)
	default:
		s.published(r, p, newTag)
	}
	s.refreshBuild(ctx, r)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served != nil || r.build != nil, nil
}

// published takes a pointer just read: the index it names is read unless
// it is the one served or being read.
func (s *storedIndexes) published(r *storedRepo, p indexfile.Pointer, tag string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tag = tag
	// An index published again with more vectors (the indexer embeds its
	// parts after publishing them) is read again from the one in hand:
	// only the vectors of the parts whose record changed are read.
	build := func(idx *storedIndex) bool {
		return idx != nil && idx.pointer.Commit == p.Commit && idx.pointer.BuiltAt.Equal(p.BuiltAt)
	}
	same := func(idx *storedIndex) bool {
		return build(idx) && idx.pointer.Embedded == p.Embedded && idx.pointer.Pending == p.Pending
	}
	var base *storedIndex
	for _, idx := range []*storedIndex{r.served, r.next} { // the newer last
		if build(idx) {
			base = idx
		}
	}
	switch {
	case same(r.served) || same(r.next):
	case r.served == nil:
		r.served = s.read(r, p, nil)
	default:
		// The index in hand serves while the new one is read.
		r.next = s.read(r, p, base)
	}
}

// refreshBuild revalidates the repository's build record; failing to, it
// keeps the one in hand (it only informs answers).
func (s *storedIndexes) refreshBuild(ctx context.Context, r *storedRepo) {
	r.mu.Lock()
	tag := r.buildTag
	r.mu.Unlock()
	b, newTag, err := s.store.Build(ctx, r.key, tag)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(err, indexfile.ErrNotModified):
	case errors.Is(err, fs.ErrNotExist):
		r.build, r.buildTag = nil, ""
	case err != nil:
		s.log.Warn("context index: the build record is unreadable", "repo", r.key, "error", err)
	default:
		r.build, r.buildTag = &b, newTag
	}
}

// read starts reading the index p names in the background, taking what
// has not changed from base, the same build published before (nil: none).
func (s *storedIndexes) read(r *storedRepo, p indexfile.Pointer, base *storedIndex) *storedIndex {
	idx := &storedIndex{pointer: p, done: make(chan struct{})}
	s.loads.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		defer cancel()
		err := idx.load(ctx, partReader{store: s.store, key: r.key, vectors: s.vectors, base: base})
		idx.mu.Lock()
		idx.err = err
		idx.mu.Unlock()
		close(idx.done)
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case err != nil:
			s.log.Warn("context index: reading a code index failed", "repo", r.key, "commit", p.Commit, "error", err)
			// Read the pointer again next time, and this index with it.
			r.tag = ""
			if r.next == idx {
				r.next = nil
			}
			if r.served == idx {
				r.served = nil
			}
		case r.next == idx:
			r.served, r.next = idx, nil
		}
	})
	return idx
}

// load reads the index's parts, loadParallel at a time (an index stored
// whole is one part).
func (idx *storedIndex) load(ctx context.Context, pr partReader) error {
	st, key := pr.store, pr.key
	if idx.pointer.Parts == 0 {
		ix, err := st.LoadCode(ctx, key, idx.pointer)
		if err != nil {
			return err
		}
		idx.mu.Lock()
		idx.parts, idx.filesTotal = []*contextindex.CodeIndex{ix}, len(ix.Files)
		idx.mu.Unlock()
		return nil
	}
	m, err := st.Manifest(ctx, key, idx.pointer.Commit)
	if err != nil {
		return err
	}
	idx.mu.Lock()
	idx.parts, idx.infos, idx.filesTotal = make([]*contextindex.CodeIndex, len(m.Parts)), m.Parts, indexfile.Totals(m.Parts).Files
	idx.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, loadParallel)
	var wg sync.WaitGroup
	for range loadParallel {
		wg.Go(func() {
			for i := range next {
				part, err := pr.part(ctx, m.Commit, m.Parts[i])
				if err != nil {
					errs <- err
					cancel()
					return
				}
				idx.mu.Lock()
				idx.parts[i] = part
				idx.mu.Unlock()
			}
		})
	}
	for i := range m.Parts {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// partReader reads the parts of one repository's index, with their
// vectors when asked.
type partReader struct {
	store   *indexfile.Store
	key     string
	vectors bool
	base    *storedIndex // the same build published before; nil: none
}

// part reads the part that info describes. A part base holds already is taken
// from it: as it is when its record is unchanged (or vectors are not
// read), else with its vectors read anew (all that changes when the
// indexer embeds a part after publishing it).
func (pr partReader) part(ctx context.Context, commit string, info indexfile.PartInfo) (*contextindex.CodeIndex, error) {
	held, heldInfo := pr.base.part(info.Name)
	switch {
	case held == nil:
		return pr.store.LoadPart(ctx, pr.key, commit, info.Name, pr.vectors)
	case !pr.vectors || heldInfo == info:
		return held, nil
	}
	v, err := pr.store.PartVectors(ctx, pr.key, commit, info.Name)
	if errors.Is(err, fs.ErrNotExist) {
		v, err = nil, nil // not embedded yet
	}
	if err != nil {
		return nil, err
	}
	return &contextindex.CodeIndex{Commit: held.Commit, BuiltAt: held.BuiltAt, Segment: held.Segment, Files: held.Files, Vectors: v}, nil
}

// part returns the part of that name, if it is read, and its record
// (nil for a nil index, or one stored whole).
func (idx *storedIndex) part(name string) (*contextindex.CodeIndex, indexfile.PartInfo) {
	if idx == nil {
		return nil, indexfile.PartInfo{}
	}
	idx.mu.Lock()
	defer idx.mu.Unlock()
	for i, info := range idx.infos {
		if info.Name == name && idx.parts[i] != nil {
			return idx.parts[i], info
		}
	}
	return nil, indexfile.PartInfo{}
}

// collection returns the parts read so far ranked together (nil when
// none is), how many files they hold, and whether every part is read.
func (idx *storedIndex) collection(model string) (coll *contextindex.Collection, files int, whole bool) {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	var read []*contextindex.CodeIndex
	for _, p := range idx.parts {
		if p != nil {
			read = append(read, p)
			files += len(p.Files)
		}
	}
	if idx.coll == nil || idx.collParts != len(read) || idx.collModel != model {
		idx.coll, idx.collParts, idx.collModel = contextindex.NewCodeCollection(model, read), len(read), model
	}
	return idx.coll, files, len(read) == len(idx.parts) && len(read) > 0
}

// code returns the stored code index of the tenant's repository ref
// as a collection, and how far it is; both nil when the repository has
// none and no build. A call waits for an index being read at most a
// loadWaitShare-th of its time. The caller holds ts.mu.
func (s *storedIndexes) code(ctx context.Context, ref reposcope.Ref, ts *tenantState, model string) (*contextindex.Collection, *indexJSON, string, error) {
	cs := ts.code[ref.Name]
	if cs == nil {
		cs = &codeState{}
		ts.code[ref.Name] = cs
	}
	notice, err := held(ctx, s.log, cs.key != "", "code index", ref.Tenant, func(ctx context.Context) error {
		return s.refreshCode(ctx, ref, cs)
	})
	if err != nil || cs.key == "" {
		return nil, nil, notice, err
	}
	r := s.repo(cs.key)
	r.mu.Lock()
	idx, build := r.served, r.build
	r.mu.Unlock()
	if idx == nil {
		// The first build of the repository runs.
		return nil, &indexJSON{State: contextindex.StateBuilding, Build: buildJSONOf(build)}, notice, nil
	}
	waitForLoad(ctx, idx.done)
	idx.mu.Lock()
	failed := idx.err
	idx.mu.Unlock()
	coll, files, whole := idx.collection(model)
	if failed != nil && coll == nil {
		return nil, nil, notice, fmt.Errorf("read the code index of %s: %w", cs.key, failed)
	}
	out := &indexJSON{State: contextindex.StateReady, FilesIndexed: files, FilesTotal: idx.filesTotal,
		Chunks: contextindex.Join(coll).Len(), Vectors: contextindex.Join(coll).Vectors(), Commit: idx.pointer.Commit,
		Pending: idx.pointer.Pending}
	switch {
	case !whole:
		out.State = StateLoading
	case build != nil && build.State == indexfile.BuildRunning && build.Commit != idx.pointer.Commit:
		out.State, out.Build = contextindex.StateBuilding, buildJSONOf(build)
	}
	return coll, out, notice, nil
}

// waitForLoad waits until done is closed, or a loadWaitShare-th of the
// time ctx has left is spent.
func waitForLoad(ctx context.Context, done <-chan struct{}) {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/loadWaitShare)
		defer cancel()
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}
