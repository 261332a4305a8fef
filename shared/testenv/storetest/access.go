package storetest

import (
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

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
