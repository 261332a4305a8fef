package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// counterChecks check store.Counters.
var counterChecks = []check{
	{"ExactLimit", countersExactLimit},
	{"KeysAreIndependent", countersKeysAreIndependent},
	{"ZeroLimitDenies", countersZeroLimitDenies},
	{"ConcurrentIncrement", countersConcurrentIncrement},
}

// counterExpiry is when the checks' counters expire.
var counterExpiry = time.Date(2025, 3, 4, 5, 7, 0, 0, time.UTC)

func countersExactLimit(t *testing.T, st store.Stores) {
	counters, ctx := st.Counters, t.Context()
	want := []struct {
		count   int
		allowed bool
	}{{1, true}, {2, true}, {3, true}, {3, false}, {3, false}}
	for i, w := range want {
		count, allowed, err := counters.Increment(ctx, "acme#search#1741064820", 3, counterExpiry)
		noErr(t, err, "increment")
		if count != w.count || allowed != w.allowed {
			t.Fatalf("call %d = (%d, %v), want (%d, %v)", i+1, count, allowed, w.count, w.allowed)
		}
	}
	// A higher limit on the same key continues from the count.
	count, allowed, err := counters.Increment(ctx, "acme#search#1741064820", 5, counterExpiry)
	noErr(t, err, "increment")
	if count != 4 || !allowed {
		t.Fatalf("with higher limit = (%d, %v), want (4, true)", count, allowed)
	}
}

func countersKeysAreIndependent(t *testing.T, st store.Stores) {
	counters, ctx := st.Counters, t.Context()
	for range 2 {
		_, _, err := counters.Increment(ctx, "alpha#tool#100", 2, counterExpiry)
		noErr(t, err, "increment")
	}
	_, allowed, err := counters.Increment(ctx, "alpha#tool#100", 2, counterExpiry)
	noErr(t, err, "increment")
	if allowed {
		t.Fatalf("third call allowed at limit 2")
	}
	for _, key := range []string{"alpha#tool#160", "beta#tool#100", "alpha#other#100", "alpha#tool#10"} {
		count, allowed, err := counters.Increment(ctx, key, 2, counterExpiry)
		noErr(t, err, "increment")
		if count != 1 || !allowed {
			t.Fatalf("%s = (%d, %v), want (1, true)", key, count, allowed)
		}
	}
}

func countersZeroLimitDenies(t *testing.T, st store.Stores) {
	for range 2 {
		_, allowed, err := st.Counters.Increment(t.Context(), "k", 0, counterExpiry)
		noErr(t, err, "increment")
		if allowed {
			t.Fatalf("allowed with limit 0")
		}
	}
}

func countersConcurrentIncrement(t *testing.T, st store.Stores) {
	counters, ctx := st.Counters, t.Context()
	const calls, limit = 1000, 60
	type answer struct {
		count   int
		allowed bool
	}
	results, errs := atOnce(calls, func(int) (answer, error) {
		count, allowed, err := counters.Increment(ctx, "acme#search#0", limit, counterExpiry)
		return answer{count, allowed}, err
	})
	var allowedCounts []int
	for i, r := range results {
		noErr(t, errs[i], fmt.Sprintf("increment %d", i))
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
}
