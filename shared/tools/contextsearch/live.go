package contextsearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Locally (wiring.CodeIndexLive), the code indexes are built in process:
// one contextindex.Live per repository view, shared by every tenant that
// reads it, following the view's changes and saved in the store, until
// the view is done (repo.View.Done: its source no longer serves it). The
// vectors of the tenants' memory entries are embedded in process too
// (memoryEmbedder), the local counterpart of the indexer Lambda.

// liveIndexes keeps the code indexes in process.
type liveIndexes struct {
	repo      repo.Source // nil: no code corpus
	store     *indexfile.Store
	embedder  contextindex.Embedder
	saveAfter time.Duration
	log       *slog.Logger
	now       func() time.Time
	memory    *memoryEmbedder
	symbols   *symbols.Tables // nil: each index parses its files itself

	mu        sync.Mutex
	lives     map[repo.View]liveRepo
	closed    chan struct{} // closed by close, once
	closeOnce sync.Once
}

// liveRepo is the code index of one view, and the name of the view's
// repository (for status).
type liveRepo struct {
	live *contextindex.Live
	name string
}

var _ codeIndexes = (*liveIndexes)(nil)

func newLiveIndexes(o Options, st *indexfile.Store) *liveIndexes {
	return &liveIndexes{repo: o.Repo, store: st, embedder: o.Embedder, saveAfter: o.SaveAfter, log: o.Log, now: o.Now,
		memory: newMemoryEmbedder(st, o.Embedder, o.Log), symbols: o.Symbols, lives: map[repo.View]liveRepo{},
		closed: make(chan struct{})}
}

// defaultRepo is the served source's default repository.
func (l *liveIndexes) defaultRepo() string {
	if l.repo == nil {
		return reposcope.Default
	}
	return l.repo.Default()
}

// code returns the live code index of the repository r as a collection,
// with how far it is (both nil when there is no such repository).
func (l *liveIndexes) code(ctx context.Context, r reposcope.Ref, _ *tenantState, _ string) (*contextindex.Collection, *indexJSON, string, error) {
	lv, err := l.liveOf(ctx, r)
	if err != nil || lv == nil {
		return nil, nil, "", err
	}
	st := lv.State()
	coll, p := st.Collection(), st.Progress
	index := &indexJSON{State: p.State, FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal,
		Chunks: p.Chunks, Vectors: contextindex.Join(coll).Vectors()}
	if lv.Embedding() {
		index.Pending = max(0, index.Chunks-index.Vectors)
	}
	return coll, index, "", nil
}

// embedMemory sends memory entries without a vector to be embedded.
func (l *liveIndexes) embedMemory(tenant string, docs []contextindex.Doc) {
	l.memory.embed(tenant, docs)
}

// check returns the mark of an ask made now.
func (l *liveIndexes) check() checked {
	return checked{at: l.now(), saves: l.memory.saves.Load()}
}

// trusted: what was read at c is current until the memory embedder, the
// only writer of stored vectors here, saves again.
func (l *liveIndexes) trusted(c checked) bool {
	return !c.at.IsZero() && c.saves == l.memory.saves.Load()
}

// forgetTenant: the live indexes are every tenant's.
func (l *liveIndexes) forgetTenant(string) {}

// settle waits until the memory entries are embedded and the code indexes
// caught up with their repositories.
func (l *liveIndexes) settle() {
	l.memory.wait()
	for _, live := range l.all() {
		live.Settle()
	}
}

// close saves the code indexes and stops them following their
// repositories.
func (l *liveIndexes) close() {
	l.memory.wait()
	l.closeOnce.Do(func() { close(l.closed) })
	for _, live := range l.all() {
		live.Close()
	}
}

// status returns how far the code index of each repository in repos
// (nil: every one) is, by key.
func (l *liveIndexes) status(repos []string) []IndexStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []IndexStatus{}
	for view, lr := range l.lives {
		if !reposcope.Allows(repos, lr.name) {
			continue
		}
		p := lr.live.State().Progress
		out = append(out, IndexStatus{Repository: lr.name, Key: liveKey(view), State: p.State,
			FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal, Chunks: p.Chunks})
	}
	slices.SortFunc(out, func(a, b IndexStatus) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// all returns the code indexes kept.
func (l *liveIndexes) all() []*contextindex.Live {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*contextindex.Live, 0, len(l.lives))
	for _, lr := range l.lives {
		out = append(out, lr.live)
	}
	return out
}

// start begins indexing the repositories a tenant reads, in the
// background, without waiting.
func (l *liveIndexes) start(ctx context.Context, tenant string) error {
	if l.repo == nil {
		return nil
	}
	list, err := l.repo.List(ctx, tenant)
	if err != nil {
		return err
	}
	for _, item := range list {
		r := reposcope.Ref{Tenant: tenant, Name: item.Name}
		view, err := l.repo.Open(ctx, r)
		if err != nil {
			return err
		}
		l.live(view, r)
	}
	return nil
}

// live returns the code index of the view of the repository r, started
// on first use (cutting files at the view's symbol table's parses, when
// there are tables). Once the indexes are closed, or for a view already
// done, it is one that never starts (contextindex.StoppedLive), kept
// nowhere.
func (l *liveIndexes) live(view repo.View, r reposcope.Ref) *contextindex.Live {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lr, ok := l.lives[view]; ok {
		return lr.live
	}
	if isClosed(l.closed) || isClosed(view.Done()) {
		return contextindex.StoppedLive(view)
	}
	o := contextindex.LiveOptions{Store: l.store, Key: liveKey(view), Embedder: l.embedder, SaveAfter: l.saveAfter, Log: l.log, Now: l.now}
	if l.symbols != nil {
		o.Parses = l.symbols.For(view)
	}
	live := contextindex.NewLive(view, o)
	l.lives[view] = liveRepo{live: live, name: r.Name}
	go l.closeWhenDone(view, live)
	return live
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// closeWhenDone closes (saving) and forgets view's index once the view is
// done, so that neither keeps the other's memory; close closes the rest.
func (l *liveIndexes) closeWhenDone(view repo.View, live *contextindex.Live) {
	select {
	case <-view.Done():
	case <-l.closed:
		return
	}
	l.mu.Lock()
	if l.lives[view].live == live {
		delete(l.lives, view)
	}
	l.mu.Unlock()
	live.Close()
}

// liveKey names a view's stored code index (repo.Key; "local" for a view
// without one).
func liveKey(view repo.View) string { return cmp.Or(repo.Key(view), "local") }

// liveOf returns the live code index of the repository r (nil when there
// is no such repository).
func (l *liveIndexes) liveOf(ctx context.Context, r reposcope.Ref) (*contextindex.Live, error) {
	if l.repo == nil {
		return nil, nil
	}
	view, err := l.repo.Open(ctx, r)
	if errors.Is(err, repo.ErrNoRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the repository: %w", err)
	}
	return l.live(view, r), nil
}

// repoIndex says how far the live code index of the repository r is
// (wiring.Env.RepoIndex, locally).
func (l *liveIndexes) repoIndex(ctx context.Context, r reposcope.Ref) (wiring.RepoIndex, error) {
	lv, err := l.liveOf(ctx, r)
	if err != nil || lv == nil {
		return wiring.RepoIndex{State: wiring.RepoIndexNone}, err
	}
	p := lv.State().Progress
	return wiring.RepoIndex{State: p.State, FilesIndexed: p.FilesIndexed, FilesTotal: p.FilesTotal}, nil
}

// embedTimeout bounds one background embedding job.
const embedTimeout = 30 * time.Minute

// memoryEmbedder embeds tenants' memory entries in process, writing the
// same vector files to the same Store as the indexer Lambda does
// deployed.
type memoryEmbedder struct {
	store    *indexfile.Store
	embedder contextindex.Embedder
	log      *slog.Logger

	// saves counts the vector files written: the service re-reads stored
	// vectors only when it changed.
	saves atomic.Uint64

	mu      sync.Mutex
	running map[string]chan struct{} // job key → closed when done
	wg      sync.WaitGroup
}

func newMemoryEmbedder(st *indexfile.Store, emb contextindex.Embedder, log *slog.Logger) *memoryEmbedder {
	return &memoryEmbedder{store: st, embedder: emb, log: log, running: map[string]chan struct{}{}}
}

// start runs job in the background unless a job of that key is running.
func (m *memoryEmbedder) start(key string, job func(ctx context.Context)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.running[key]; ok {
		return
	}
	done := make(chan struct{})
	m.running[key] = done
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), embedTimeout)
		defer cancel()
		job(ctx)
		m.mu.Lock()
		delete(m.running, key)
		m.mu.Unlock()
		close(done)
	}()
}

func (m *memoryEmbedder) wait() { m.wg.Wait() }

// embed embeds, in the background, memory entries that have no vector;
// docs is the job's own.
func (m *memoryEmbedder) embed(tenant string, docs []contextindex.Doc) {
	m.start("memory/"+tenant, func(ctx context.Context) {
		n, err := m.store.AddMemoryVectors(ctx, tenant, m.embedder, docs)
		if err != nil {
			m.log.Warn("context index: embedding memory entries failed", "tenant", tenant, "error", err)
			return
		}
		if n > 0 {
			m.saves.Add(1)
			m.log.Info("context index: embedded memory entries", "tenant", tenant, "entries", n)
		}
	})
}
