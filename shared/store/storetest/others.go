package storetest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

func runMemory(t *testing.T, newStores func(t *testing.T) store.Stores) {
	// The shape of store.NewMemoryID.
	memoryIDPattern := regexp.MustCompile(`^[0-9]{19}-[0-9a-f]{16}$`)

	t.Run("AppendAndListInOrder", func(t *testing.T) {
		mem := newStores(t).Memory
		ctx, clk := t.Context(), newClock()
		var appended []store.MemoryEntry
		for i := range 5 {
			now := clk.next()
			content := fmt.Sprintf("note %d\nwith lines and ünïcode", i)
			e, err := mem.Append(ctx, "acme", "notes.md", content, now)
			noErr(t, err, "append")
			if e.Tenant != "acme" || e.File != "notes.md" || e.Content != content || !e.CreatedAt.Equal(now) {
				t.Fatalf("appended entry = %+v", e)
			}
			if !memoryIDPattern.MatchString(e.ID) {
				t.Fatalf("entry id %q does not match %s", e.ID, memoryIDPattern)
			}
			appended = append(appended, e)
		}
		page, err := mem.List(ctx, "acme", "notes.md", store.MemoryQuery{})
		noErr(t, err, "list")
		if page.Next != "" {
			t.Fatalf("next = %q, want none", page.Next)
		}
		sameEntries(t, page.Entries, appended)
	})

	t.Run("SameTimeAppendsAreUnique", func(t *testing.T) {
		mem := newStores(t).Memory
		ctx := t.Context()
		now := newClock().next()
		seen := map[string]bool{}
		for i := range 20 {
			e, err := mem.Append(ctx, "acme", "f", fmt.Sprint(i), now)
			noErr(t, err, "append")
			if seen[e.ID] {
				t.Fatalf("id %s issued twice", e.ID)
			}
			seen[e.ID] = true
		}
		page, err := mem.List(ctx, "acme", "f", store.MemoryQuery{})
		noErr(t, err, "list")
		if len(page.Entries) != 20 {
			t.Fatalf("listed %d entries, want 20", len(page.Entries))
		}
	})

	t.Run("Paging", func(t *testing.T) {
		mem := newStores(t).Memory
		ctx, clk := t.Context(), newClock()
		const n = 113 // more than the default limit
		var appended []store.MemoryEntry
		for i := range n {
			e, err := mem.Append(ctx, "acme", "log", fmt.Sprintf("entry %d", i), clk.next())
			noErr(t, err, "append")
			appended = append(appended, e)
			// Another file and tenant interleaved: never in the listing.
			if i%10 == 0 {
				_, err = mem.Append(ctx, "acme", "log2", "other file", clk.next())
				noErr(t, err, "append other file")
				_, err = mem.Append(ctx, "other", "log", "other tenant", clk.next())
				noErr(t, err, "append other tenant")
			}
		}
		for _, limit := range []int{1, 10, 56, n, n + 1} {
			t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
				got := collectEntries(t, mem, "acme", "log", store.MemoryQuery{Limit: limit})
				sameEntries(t, got, appended)
			})
		}
		t.Run("after", func(t *testing.T) {
			got := collectEntries(t, mem, "acme", "log", store.MemoryQuery{Limit: 20, After: appended[49].ID})
			sameEntries(t, got, appended[50:])
			// A cursor that is not an entry id still works by order.
			got = collectEntries(t, mem, "acme", "log", store.MemoryQuery{Limit: 20, After: appended[49].ID + "~"})
			sameEntries(t, got, appended[50:])
			got = collectEntries(t, mem, "acme", "log", store.MemoryQuery{After: appended[n-1].ID})
			sameEntries(t, got, nil)
		})
		t.Run("default limit", func(t *testing.T) {
			page, err := mem.List(ctx, "acme", "log", store.MemoryQuery{})
			noErr(t, err, "list")
			if len(page.Entries) != store.DefaultLimit || page.Next != appended[store.DefaultLimit-1].ID {
				t.Fatalf("default page: %d entries, next %q", len(page.Entries), page.Next)
			}
		})
	})

	t.Run("FilesAndTenantsAreSeparate", func(t *testing.T) {
		mem := newStores(t).Memory
		ctx, clk := t.Context(), newClock()
		writes := []struct{ tenant, file string }{
			{"alpha", "a.md"}, {"alpha", "b.md"}, {"beta", "a.md"},
			// "#" joins tenant and file in some keys: these must not meet.
			{"x#y", "z"}, {"x", "y#z"},
		}
		for _, w := range writes {
			_, err := mem.Append(ctx, w.tenant, w.file, w.tenant+"/"+w.file, clk.next())
			noErr(t, err, "append")
		}
		for _, w := range writes {
			page, err := mem.List(ctx, w.tenant, w.file, store.MemoryQuery{})
			noErr(t, err, "list")
			if len(page.Entries) != 1 || page.Entries[0].Content != w.tenant+"/"+w.file {
				t.Fatalf("list %s %s = %+v, want only its own entry", w.tenant, w.file, page.Entries)
			}
		}
		page, err := mem.List(ctx, "gamma", "a.md", store.MemoryQuery{})
		noErr(t, err, "list")
		if len(page.Entries) != 0 || page.Next != "" {
			t.Fatalf("unknown tenant lists %+v", page.Entries)
		}
	})
}

// sameEntries fails unless got and want hold the same entries in order.
func sameEntries(t *testing.T, got, want []store.MemoryEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Tenant != w.Tenant || g.File != w.File || g.ID != w.ID || g.Content != w.Content || !g.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// collectEntries pages through a memory listing, checking the paging
// contract.
func collectEntries(t *testing.T, mem store.Memory, tenant, file string, q store.MemoryQuery) []store.MemoryEntry {
	t.Helper()
	var all []store.MemoryEntry
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("paging does not end")
		}
		page, err := mem.List(t.Context(), tenant, file, q)
		noErr(t, err, "list")
		if pages > 0 && len(page.Entries) == 0 {
			t.Fatalf("empty page after next cursor %q", q.After)
		}
		if len(page.Entries) > store.PageLimit(q.Limit) {
			t.Fatalf("page of %d entries exceeds limit %d", len(page.Entries), q.Limit)
		}
		all = append(all, page.Entries...)
		if page.Next == "" {
			return all
		}
		if len(page.Entries) != store.PageLimit(q.Limit) || page.Next != page.Entries[len(page.Entries)-1].ID {
			t.Fatalf("page of %d (limit %d) with next %q", len(page.Entries), q.Limit, page.Next)
		}
		q.After = page.Next
	}
}

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

func runAccess(t *testing.T, newStores func(t *testing.T) store.Stores) {
	t.Run("RecordCounts", func(t *testing.T) {
		access := newStores(t).Access
		ctx, clk := t.Context(), newClock()
		var last time.Time
		for i := int64(1); i <= 3; i++ {
			last = clk.next()
			st, err := access.Record(ctx, "acme", "src/main.go", last)
			noErr(t, err, "record")
			if st.Tenant != "acme" || st.Path != "src/main.go" || st.Count != i || !st.LastAccess.Equal(last) {
				t.Fatalf("record %d = %+v", i, st)
			}
		}
		st, err := access.Get(ctx, "acme", "src/main.go")
		noErr(t, err, "get")
		if st.Tenant != "acme" || st.Path != "src/main.go" || st.Count != 3 || !st.LastAccess.Equal(last) {
			t.Fatalf("get = %+v, want count 3 at %s", st, last)
		}
	})

	t.Run("MissingAndIsolation", func(t *testing.T) {
		access := newStores(t).Access
		ctx, clk := t.Context(), newClock()
		_, err := access.Get(ctx, "acme", "README.md")
		wantErr(t, err, store.ErrNotFound, "get never recorded")
		for range 2 {
			_, err = access.Record(ctx, "alpha", "README.md", clk.next())
			noErr(t, err, "record")
		}
		_, err = access.Get(ctx, "beta", "README.md")
		wantErr(t, err, store.ErrNotFound, "other tenant's path")
		_, err = access.Get(ctx, "alpha", "readme.md")
		wantErr(t, err, store.ErrNotFound, "other path")
		st, err := access.Record(ctx, "beta", "README.md", clk.next())
		noErr(t, err, "record beta")
		if st.Count != 1 {
			t.Fatalf("beta's first count = %d, want 1", st.Count)
		}
		st, err = access.Get(ctx, "alpha", "README.md")
		noErr(t, err, "get alpha")
		if st.Count != 2 {
			t.Fatalf("alpha's count = %d, want 2", st.Count)
		}
	})
}

func runAPIKeys(t *testing.T, newStores func(t *testing.T) store.Stores) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 987654321, time.FixedZone("UTC-5", -5*60*60))
	key := func(secret, tenant string, created time.Time, scopes ...string) store.APIKey {
		return store.APIKey{
			Hash:      store.HashKey(secret),
			Tenant:    tenant,
			Name:      "key " + secret,
			Scopes:    scopes,
			CreatedAt: created,
		}
	}

	t.Run("CreateLookup", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		cases := []store.APIKey{
			key("s1", "acme", base, "tasks", "memory", "repo:read"),
			key("s2", "acme", base.Add(time.Second), "tasks"),
			key("s3", "other", base.Add(2*time.Second)),
		}
		for _, k := range cases {
			noErr(t, keys.Create(ctx, k), "create")
			got, err := keys.Lookup(ctx, k.Hash)
			noErr(t, err, "lookup")
			sameKey(t, got, k)
		}
		_, err := keys.Lookup(ctx, store.HashKey("unknown"))
		wantErr(t, err, store.ErrNotFound, "lookup unknown")
	})

	t.Run("DuplicateConflicts", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		orig := key("dup", "alpha", base, "tasks")
		noErr(t, keys.Create(ctx, orig), "create")
		takeover := key("dup", "beta", base.Add(time.Hour), "admin")
		wantErr(t, keys.Create(ctx, takeover), store.ErrConflict, "create duplicate")
		got, err := keys.Lookup(ctx, orig.Hash)
		noErr(t, err, "lookup")
		sameKey(t, got, orig)
	})

	t.Run("ListSorted", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		all, err := keys.List(ctx)
		noErr(t, err, "list empty")
		if len(all) != 0 {
			t.Fatalf("empty store lists %d keys", len(all))
		}
		created := []store.APIKey{
			key("late", "a", base.Add(time.Hour)),
			key("early", "b", base),
			key("same-1", "c", base.Add(time.Minute), "x"),
			key("same-2", "d", base.Add(time.Minute), "y"),
			key("same-3", "e", base.Add(time.Minute)),
		}
		for _, k := range created {
			noErr(t, keys.Create(ctx, k), "create")
		}
		want := slices.Clone(created)
		slices.SortFunc(want, func(a, b store.APIKey) int {
			if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(a.Hash, b.Hash)
		})
		all, err = keys.List(ctx)
		noErr(t, err, "list")
		if len(all) != len(want) {
			t.Fatalf("listed %d keys, want %d", len(all), len(want))
		}
		for i := range all {
			sameKey(t, all[i], want[i])
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		k := key("rev", "acme", base, "tasks")
		noErr(t, keys.Create(ctx, k), "create")
		first := base.Add(time.Hour)
		got, err := keys.Revoke(ctx, k.Hash, first)
		noErr(t, err, "revoke")
		want := k
		want.Revoked = true
		want.RevokedAt = &first
		sameKey(t, got, want)
		got, err = keys.Revoke(ctx, k.Hash, first.Add(time.Hour))
		noErr(t, err, "revoke again")
		sameKey(t, got, want)
		got, err = keys.Lookup(ctx, k.Hash)
		noErr(t, err, "lookup")
		sameKey(t, got, want)

		missing := store.HashKey("missing")
		_, err = keys.Revoke(ctx, missing, first)
		wantErr(t, err, store.ErrNotFound, "revoke missing")
		_, err = keys.Lookup(ctx, missing)
		wantErr(t, err, store.ErrNotFound, "lookup after revoking missing")
	})
}

// sameKey fails unless got and want are the same key.
func sameKey(t *testing.T, got, want store.APIKey) {
	t.Helper()
	if got.Hash != want.Hash || got.Tenant != want.Tenant || got.Name != want.Name ||
		!slices.Equal(got.Scopes, want.Scopes) || !got.CreatedAt.Equal(want.CreatedAt) ||
		got.Revoked != want.Revoked || !equalTime(got.RevokedAt, want.RevokedAt) {
		t.Fatalf("api key:\n got %+v\nwant %+v", got, want)
	}
}
