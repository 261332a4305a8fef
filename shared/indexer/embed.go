package indexer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
)

// How a batch's texts are embedded: requests of as many texts as the
// provider takes in one (textsPerRequest), inFlight of them at a time per
// invocation. A request the provider refuses for its quota or fails
// (embedding.Transient) is tried again after a jittered, growing wait,
// for as long as the invocation's time allows; throttling never fails a
// build, it slows it down. A request refused for any other reason is
// tried again text by text, and a text refused alone is counted failed
// (its chunk is found lexically only).
const (
	inFlight   = 8
	retryFirst = 200 * time.Millisecond
	retryMost  = 10 * time.Second
)

// textsPerRequest is how many texts one request of emb carries (Titan 1,
// OpenAI-compatible endpoints many), contextindex.EmbedBatch for an
// embedder that does not say.
func textsPerRequest(emb contextindex.Embedder) int {
	if e, ok := emb.(interface{ TextsPerRequest() int }); ok && e.TextsPerRequest() > 0 {
		return e.TextsPerRequest()
	}
	return contextindex.EmbedBatch
}

// embedStats say what embedding did.
type embedStats struct {
	Requests  int   // requests made
	Embedded  int   // texts that got their vector
	Throttled int   // requests refused for the provider's quota (tried again)
	Failed    int   // texts refused for good
	Left      int   // texts left without a vector when the time was up
	Tokens    int64 // input tokens the provider counted (Bedrock says)
}

// embedder embeds texts into a set of vectors. The set is its own while
// it runs: it adds under its lock, and hands out copies to checkpoint.
type embedder struct {
	emb   contextindex.Embedder
	retry func(n int) time.Duration

	mu      sync.Mutex
	vectors *contextindex.Vectors
	todo    [][]string // groups of texts waiting for a request
	running int        // requests in flight
	stats   embedStats
	changed chan struct{} // closed, and replaced, at the end of each request
}

// embedTexts embeds texts (each without a vector in v) into v until every
// one has its vector or has failed, or until (then some are left
// without). Every checkpointEvery it hands a copy of v to checkpoint.
// Throttling and provider failures are tried again until then.
func embedTexts(ctx context.Context, emb contextindex.Embedder, v *contextindex.Vectors, texts []string,
	until time.Time, checkpointEvery time.Duration, checkpoint func(*contextindex.Vectors)) embedStats {
	e := &embedder{emb: emb, retry: embedding.Backoff(retryFirst, retryMost), vectors: v, changed: make(chan struct{})}
	per := textsPerRequest(emb)
	for start := 0; start < len(texts); start += per {
		e.todo = append(e.todo, texts[start:min(start+per, len(texts))])
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	stopTicks := make(chan struct{})
	var ticks sync.WaitGroup
	ticks.Go(func() {
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				checkpoint(e.snapshot())
			case <-stopTicks:
				return
			}
		}
	})
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() { e.work(ctx) })
	}
	wg.Wait()
	close(stopTicks)
	ticks.Wait()
	for _, g := range e.todo {
		e.stats.Left += len(g)
	}
	return e.stats
}

// snapshot returns a copy of the vectors so far.
func (e *embedder) snapshot() *contextindex.Vectors {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.vectors.Clone()
}

// work makes requests until there is nothing left to ask or ctx ends.
func (e *embedder) work(ctx context.Context) {
	tries := 0 // transient failures in a row
	for {
		group, ok := e.next(ctx)
		if !ok {
			return
		}
		vecs, err := e.emb.Embed(ctx, group)
		if err == nil && len(vecs) != len(group) {
			err = errors.New("the embedder returned another number of vectors than texts")
		}
		e.done(group, vecs, err)
		switch {
		case err == nil:
			tries = 0
		case embedding.Transient(err) && ctx.Err() == nil:
			tries++
			select {
			case <-time.After(e.retry(tries)):
			case <-ctx.Done():
			}
		}
	}
}

// next takes a group to embed, waiting while other requests may still
// give some back; false when all is done or ctx ended.
func (e *embedder) next(ctx context.Context) ([]string, bool) {
	for {
		e.mu.Lock()
		if ctx.Err() != nil {
			e.mu.Unlock()
			return nil, false
		}
		if len(e.todo) > 0 {
			g := e.todo[len(e.todo)-1]
			e.todo = e.todo[:len(e.todo)-1]
			e.running++
			e.mu.Unlock()
			return g, true
		}
		idle, changed := e.running == 0, e.changed
		e.mu.Unlock()
		if idle {
			return nil, false
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// done records a request's outcome: its vectors, or its texts given back
// (a transient failure), split (a refusal of several texts) or failed.
func (e *embedder) done(group []string, vecs [][]float32, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running--
	e.stats.Requests++
	switch {
	case err == nil:
		for i, t := range group {
			if e.vectors.Add(contextindex.TextHash(t), vecs[i]) == nil {
				e.stats.Embedded++
			} else {
				e.stats.Failed++
			}
		}
	case embedding.Transient(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		if errors.Is(err, embedding.ErrThrottled) {
			e.stats.Throttled++
		}
		e.todo = append(e.todo, group) // asked again, or left for the next round
	case len(group) > 1:
		for _, t := range group {
			e.todo = append(e.todo, []string{t})
		}
	default:
		e.stats.Failed++
	}
	close(e.changed)
	e.changed = make(chan struct{})
}
