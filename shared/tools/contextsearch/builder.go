package contextsearch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
)

// buildTimeout bounds one background job.
const buildTimeout = 30 * time.Minute

// builder embeds tenants' memory entries in process, the local server's
// counterpart of the indexer Lambda, writing the same vector files to the
// same Store the service reads. (Code indexes are kept by
// contextindex.Live, one per repository.)
type builder struct {
	store *contextindex.Store
	embed contextindex.Embedder
	log   *slog.Logger

	// saves counts the vector files written: the service re-reads stored
	// vectors only when it changed.
	saves atomic.Uint64

	mu      sync.Mutex
	running map[string]chan struct{} // job key → closed when done
	wg      sync.WaitGroup
}

func newBuilder(st *contextindex.Store, emb contextindex.Embedder, log *slog.Logger) *builder {
	return &builder{store: st, embed: emb, log: log, running: map[string]chan struct{}{}}
}

// start runs job in the background unless a job of that key is running.
func (b *builder) start(key string, job func(ctx context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.running[key]; ok {
		return
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
