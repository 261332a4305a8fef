package storetest

import (
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// accessChecks check store.Access.
var accessChecks = []check{
	{"RecordCounts", accessRecordCounts},
	{"MissingAndIsolation", accessMissingAndIsolation},
}

func accessRecordCounts(t *testing.T, st store.Stores) {
	access, ctx, clk := st.Access, t.Context(), newClock()
	var last time.Time
	for i := int64(1); i <= 3; i++ {
		last = clk.next()
		stat, err := access.Record(ctx, "acme", "src/main.go", last)
		noErr(t, err, "record")
		if stat.Tenant != "acme" || stat.Path != "src/main.go" || stat.Count != i || !stat.LastAccess.Equal(last) {
			t.Fatalf("record %d = %+v", i, stat)
		}
	}
	got, err := access.Get(ctx, "acme", "src/main.go")
	noErr(t, err, "get")
	if got.Tenant != "acme" || got.Path != "src/main.go" || got.Count != 3 || !got.LastAccess.Equal(last) {
		t.Fatalf("get = %+v, want count 3 at %s", got, last)
	}
}

func accessMissingAndIsolation(t *testing.T, st store.Stores) {
	access, ctx, clk := st.Access, t.Context(), newClock()
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
	stat, err := access.Record(ctx, "beta", "README.md", clk.next())
	noErr(t, err, "record beta")
	if stat.Count != 1 {
		t.Fatalf("beta's first count = %d, want 1", stat.Count)
	}
	stat, err = access.Get(ctx, "alpha", "README.md")
	noErr(t, err, "get alpha")
	if stat.Count != 2 {
		t.Fatalf("alpha's count = %d, want 2", stat.Count)
	}
}
