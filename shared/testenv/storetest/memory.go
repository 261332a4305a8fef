package storetest

import (
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/store"
)

// memoryChecks check store.Memory without idempotency keys.
var memoryChecks = []check{
	{"AppendAndListInOrder", memoryAppendAndListInOrder},
	{"SameTimeAppendsAreUnique", memorySameTimeAppendsAreUnique},
	{"Paging", memoryPaging},
	{"FilesAndTenantsAreSeparate", memoryFilesAndTenantsAreSeparate},
}

func memoryAppendAndListInOrder(t *testing.T, st store.Stores) {
	mem, ctx, clk := st.Memory, t.Context(), newClock()
	var appended []store.MemoryEntry
	for i := range 5 {
		now := clk.next()
		content := fmt.Sprintf("note %d\nwith lines and ünïcode", i)
		e, err := mem.Append(ctx, "acme", "notes.md", store.NewEntry{Content: content}, now)
		noErr(t, err, "append")
		if e.Tenant != "acme" || e.File != "notes.md" || e.Content != content || !e.CreatedAt.Equal(now) {
			t.Fatalf("appended entry = %+v", e)
		}
		if !store.ValidMemoryID(e.ID) {
			t.Fatalf("entry id %q does not have the shape of store.NewMemoryID", e.ID)
		}
		appended = append(appended, e)
	}
	page, err := mem.List(ctx, "acme", "notes.md", store.MemoryQuery{})
	noErr(t, err, "list")
	if page.Next != "" {
		t.Fatalf("next = %q, want none", page.Next)
	}
	sameEntries(t, page.Entries, appended)
}

func memorySameTimeAppendsAreUnique(t *testing.T, st store.Stores) {
	mem, ctx := st.Memory, t.Context()
	now := newClock().next()
	seen := map[string]bool{}
	for i := range 20 {
		e, err := mem.Append(ctx, "acme", "f", store.NewEntry{Content: fmt.Sprint(i)}, now)
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
}

func memoryPaging(t *testing.T, st store.Stores) {
	mem := st.Memory
	const n = 113 // more than the default limit
	appended := appendInterleaved(t, mem, n)
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
		page, err := mem.List(t.Context(), "acme", "log", store.MemoryQuery{})
		noErr(t, err, "list")
		if len(page.Entries) != store.DefaultLimit || page.Next != appended[store.DefaultLimit-1].ID {
			t.Fatalf("default page: %d entries, next %q", len(page.Entries), page.Next)
		}
	})
}

// appendInterleaved appends n entries to acme's file "log" and returns
// them. Entries of another file and of another tenant are appended in
// between: they must never show up in the listing.
func appendInterleaved(t *testing.T, mem store.Memory, n int) []store.MemoryEntry {
	t.Helper()
	ctx, clk := t.Context(), newClock()
	var appended []store.MemoryEntry
	for i := range n {
		e, err := mem.Append(ctx, "acme", "log", store.NewEntry{Content: fmt.Sprintf("entry %d", i)}, clk.next())
		noErr(t, err, "append")
		appended = append(appended, e)
		if i%10 == 0 {
			_, err = mem.Append(ctx, "acme", "log2", store.NewEntry{Content: "other file"}, clk.next())
			noErr(t, err, "append other file")
			_, err = mem.Append(ctx, "other", "log", store.NewEntry{Content: "other tenant"}, clk.next())
			noErr(t, err, "append other tenant")
		}
	}
	return appended
}

// tenantFile is a tenant's memory file.
type tenantFile struct{ tenant, file string }

func memoryFilesAndTenantsAreSeparate(t *testing.T, st store.Stores) {
	mem, ctx, clk := st.Memory, t.Context(), newClock()
	writes := []tenantFile{
		{"alpha", "a.md"}, {"alpha", "b.md"}, {"beta", "a.md"},
		// "#" joins tenant and file in some keys: these must not meet.
		{"x#y", "z"}, {"x", "y#z"},
	}
	for _, w := range writes {
		_, err := mem.Append(ctx, w.tenant, w.file, store.NewEntry{Content: w.tenant + "/" + w.file}, clk.next())
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
