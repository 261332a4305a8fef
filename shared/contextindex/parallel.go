package contextindex

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// inOrder makes results 0 to n-1 with produce, a worker per core (GOMAXPROCS),
// and hands each to use on the calling goroutine in order: use(i) runs
// once results 0 to i are made, whichever worker made them, so what use
// builds is the same whatever the number of cores. At most two results
// per worker are made ahead of use. It returns use's first error, which
// stops it, or ctx's once ctx is done; a worker's produce in progress then
// finishes before inOrder returns.
func inOrder[T any](ctx context.Context, n int, produce func(i int) T, use func(i int, v T) error) error {
	workers := runtime.GOMAXPROCS(0)
	results := newSlots[T](n)
	ahead := newTokens(2 * workers)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	var next atomic.Int64
	for range min(workers, n) {
		wg.Go(func() {
			for ahead.take(ctx) {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				results.put(i, produce(i))
			}
		})
	}
	for i := range n {
		v, ok := results.get(ctx, i)
		if !ok {
			return ctx.Err()
		}
		ahead.give()
		if err := use(i, v); err != nil {
			return err
		}
	}
	return nil
}

// slots hold results made out of order until they are taken in order.
type slots[T any] []chan T

func newSlots[T any](n int) slots[T] {
	s := make(slots[T], n)
	for i := range s {
		s[i] = make(chan T, 1)
	}
	return s
}

func (s slots[T]) put(i int, v T) { s[i] <- v }

// get waits for result i, or ctx; ok is false when ctx ended first.
func (s slots[T]) get(ctx context.Context, i int) (v T, ok bool) {
	select {
	case v = <-s[i]:
		return v, true
	case <-ctx.Done():
		return v, false
	}
}

// tokens bound how much work is done ahead.
type tokens chan struct{}

func newTokens(n int) tokens { return make(tokens, n) }

// take waits for a token, or ctx; it reports whether it got one.
func (t tokens) take(ctx context.Context) bool {
	select {
	case t <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (t tokens) give() { <-t }

// mergeFrom returns where the parts to merge start: the last parts, as
// many as together hold at least half as many chunks as the part before
// them, and no more than maxChunks; len(parts) when there are none to
// merge. Merged as they come, parts at least halve from the first to the
// last (up to maxChunks), so a build from batches keeps a few parts (a
// search looks terms up in each) and merges each chunk again some
// log2(batches) times.
func mergeFrom(parts []Part, maxChunks int) int {
	last := len(parts) - 1
	from, total := last, 0
	if last >= 0 {
		total = parts[last].Seg.Len()
	}
	for from > 0 && 2*total >= parts[from-1].Seg.Len() && total+parts[from-1].Seg.Len() <= maxChunks {
		from--
		total += parts[from].Seg.Len()
	}
	if from >= last {
		return len(parts)
	}
	return from
}
