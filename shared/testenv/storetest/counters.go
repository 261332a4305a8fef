package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

func runCounters(t *testing.T, newStores func(t *testing.T) store.Stores) {
	expires := time.Date(2025, 3, 4, 5, 7, 0, 0, time.UTC)

	t.Run("ExactLimit", func(t *testing.T) {
		counters := newStores(t).Counters
		ctx := t.Context()
		want := []struct {
			count   int
			allowed bool
		}{{1, true}, {2, true}, {3, true}, {3, false}, {3, false}}
		for i, w := range want {
			count, allowed, err := counters.Increment(ctx, "acme#search#1741064820", 3, expires)
			noErr(t, err, "increment")
			if count != w.count || allowed != w.allowed {
				t.Fatalf("call %d = (%d, %v), want (%d, %v)", i+1, count, allowed, w.count, w.allowed)
			}
		}
		// A higher limit on the same key continues from the count.
		count, allowed, err := counters.Increment(ctx, "acme#search#1741064820", 5, expires)
		noErr(t, err, "increment")
		if count != 4 || !allowed {
			t.Fatalf("with higher limit = (%d, %v), want (4, true)", count, allowed)
		}
	})

	t.Run("KeysAreIndependent", func(t *testing.T) {
		counters := newStores(t).Counters
		ctx := t.Context()
		for range 2 {
			_, _, err := counters.Increment(ctx, "alpha#tool#100", 2, expires)
			noErr(t, err, "increment")
		}
		_, allowed, err := counters.Increment(ctx, "alpha#tool#100", 2, expires)
		noErr(t, err, "increment")
		if allowed {
			t.Fatalf("third call allowed at limit 2")
		}
		for _, key := range []string{"alpha#tool#160", "beta#tool#100", "alpha#other#100", "alpha#tool#10"} {
			count, allowed, err := counters.Increment(ctx, key, 2, expires)
			noErr(t, err, "increment")
			if count != 1 || !allowed {
				t.Fatalf("%s = (%d, %v), want (1, true)", key, count, allowed)
			}
		}
	})

	t.Run("ZeroLimitDenies", func(t *testing.T) {
		counters := newStores(t).Counters
		for range 2 {
			_, allowed, err := counters.Increment(t.Context(), "k", 0, expires)
			noErr(t, err, "increment")
			if allowed {
				t.Fatalf("allowed with limit 0")
			}
		}
	})

	t.Run("ConcurrentIncrement", func(t *testing.T) {
		counters := newStores(t).Counters
		ctx := t.Context()
		const calls, limit = 1000, 60
		type result struct {
			count   int
			allowed bool
			err     error
		}
		results := make([]result, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() {
				var r result
				r.count, r.allowed, r.err = counters.Increment(ctx, "acme#search#0", limit, expires)
				results[i] = r
			})
		}
		wg.Wait()
		var allowedCounts []int
		for i, r := range results {
			noErr(t, r.err, fmt.Sprintf("increment %d", i))
			if r.allowed {
				allowedCounts = append(allowedCounts, r.count)
			} else if r.count != limit {
				t.Fatalf("denied call returned count %d, want %d", r.count, limit)
			}
		}
		slices.Sort(allowedCounts)
		want := make([]int, limit)
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(allowedCounts, want) {
			t.Fatalf("%d calls allowed with counts %v, want exactly 1..%d", len(allowedCounts), allowedCounts, limit)
		}
	})
}
