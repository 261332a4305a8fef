package contextsearch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
)

// buildTimeout bounds one background build.
const buildTimeout = 30 * time.Minute

// builder keeps indexes up to date in process, the local server's
// counterpart of the indexer Lambda: it embeds new memory entries and
// (re)builds the code index in the background, writing the same files to
// the same Store the service reads.
type builder struct {
	store  *contextindex.Store
	embed  contextindex.Embedder // nil: lexical only
	source CodeSource            // nil: no code corpus
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger

	// saves counts the indexes written: the service re-reads stored
	// indexes only when it changed.
	saves atomic.Uint64

	mu      sync.Mutex
	running map[string]chan struct{} // job key → closed when done
	checked map[string]time.Time     // tenant → last code refresh
	wg      sync.WaitGroup
}

func newBuilder(st *contextindex.Store, emb contextindex.Embedder, src CodeSource, every time.Duration, now func() time.Time, log *slog.Logger) *builder {
	return &builder{store: st, embed: emb, source: src, every: every, now: now, log: log,
		running: map[string]chan struct{}{}, checked: map[string]time.Time{}}
}

// start runs job in the background unless a job of that key is running,
// and returns the channel closed when the running job ends.
func (b *builder) start(key string, job func(ctx context.Context)) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if done, ok := b.running[key]; ok {
		return done
	}
	done := make(chan struct{})
	b.running[key] = done
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		job(ctx)
		b.mu.Lock()
		delete(b.running, key)
		b.mu.Unlock()
		close(done)
	}()
	return done
}

func (b *builder) wait() { b.wg.Wait() }

// memory embeds, in the background, memory entries that have no vector;
// docs is the job's own.
func (b *builder) memory(tenant string, docs []contextindex.Doc) {
	b.start("memory/"+tenant, func(ctx context.Context) {
		n, err := b.store.AddMemoryVectors(ctx, tenant, b.embed, docs)
		if err != nil {
			b.log.Warn("context index: embedding memory entries failed", "tenant", tenant, "error", err)
			return
		}
		if n > 0 {
			b.saves.Add(1)
			b.log.Info("context index: embedded memory entries", "tenant", tenant, "entries", n)
		}
	})
}

// code makes sure the tenant has a code index: the first time, it builds
// one (lexically, so it is quick) and, unless an index is stored already,
// waits for it while ctx lasts; later it refreshes it in the background
// every b.every, re-cutting only changed files and embedding only new
// chunks.
func (b *builder) code(ctx context.Context, tenant string) error {
	if b.source == nil {
		return nil
	}
	b.mu.Lock()
	last, seen := b.checked[tenant]
	due := !seen || b.now().Sub(last) >= b.every
	if due {
		b.checked[tenant] = b.now()
	}
	b.mu.Unlock()
	if !due {
		return nil
	}
	done := b.start("code/"+tenant, func(ctx context.Context) { b.refreshCode(ctx, tenant) })
	if seen {
		return nil
	}
	// First use in this process: an index saved earlier serves while the
	// job brings it up to date (embedding what changed may take long).
	if _, _, err := b.store.Pointer(ctx, tenant, ""); err == nil {
		return nil
	}
	select { // no index at all: wait for the lexical one
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refreshCode rebuilds the tenant's code index from the current snapshot
// and saves it when it changed.
func (b *builder) refreshCode(ctx context.Context, tenant string) {
	prev, err := b.store.CurrentCode(ctx, tenant)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.log.Warn("context index: reading the local code index failed; rebuilding", "tenant", tenant, "error", err)
		prev = nil
	}
	snap, err := b.source.Open(ctx, tenant)
	if err != nil {
		b.log.Warn("context index: reading the repository failed", "tenant", tenant, "error", err)
		return
	}
	emb := b.embed
	if prev == nil {
		emb = nil // a quick lexical index first; vectors in a second pass
	}
	ix, st, err := contextindex.BuildCode(ctx, prev, snap, emb, b.now())
	if err != nil {
		b.log.Warn("context index: code build failed", "tenant", tenant, "error", err)
		return
	}
	if prev != nil && ix.Commit == prev.Commit && st.Embedded == 0 && (prev.Vectors == nil) == (ix.Vectors == nil) {
		return // nothing changed
	}
	if err := b.store.SaveCode(ctx, tenant, ix); err != nil {
		b.log.Warn("context index: saving the code index failed", "tenant", tenant, "error", err)
		return
	}
	b.saves.Add(1)
	if err := b.store.Prune(tenant, ix.Commit); err != nil {
		b.log.Warn("context index: removing old code indexes failed", "tenant", tenant, "error", err)
	}
	b.log.Info("context index: code indexed", "tenant", tenant, "commit", ix.Commit,
		"files", st.Files, "rechunked", st.Rechunked, "chunks", st.Chunks, "embedded", st.Embedded)
	if prev == nil && b.embed != nil {
		b.mu.Lock()
		b.checked[tenant] = time.Time{} // add vectors at the next call
		b.mu.Unlock()
	}
}
