package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

func runAPIKeys(t *testing.T, newStores func(t *testing.T) store.Stores) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 987654321, time.FixedZone("UTC-5", -5*60*60))
	key := func(secret, tenant string, created time.Time) store.APIKey {
		return store.APIKey{
			Hash:      store.HashKey(secret),
			Tenant:    tenant,
			Name:      "key " + secret,
			CreatedAt: created,
		}
	}

	t.Run("CreateLookup", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		cases := []store.APIKey{
			key("s1", "acme", base),
			key("s2", "acme", base.Add(time.Second)),
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
		orig := key("dup", "alpha", base)
		noErr(t, keys.Create(ctx, orig), "create")
		takeover := key("dup", "beta", base.Add(time.Hour))
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
			key("same-1", "c", base.Add(time.Minute)),
			key("same-2", "d", base.Add(time.Minute)),
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
		k := key("rev", "acme", base)
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

	t.Run("Delete", func(t *testing.T) {
		keys := newStores(t).APIKeys
		ctx := t.Context()
		k := key("del", "acme", base)
		other := key("keep", "acme", base.Add(time.Second))
		noErr(t, keys.Create(ctx, k), "create")
		noErr(t, keys.Create(ctx, other), "create other")
		got, err := keys.Delete(ctx, k.Hash)
		noErr(t, err, "delete")
		sameKey(t, got, k)
		_, err = keys.Lookup(ctx, k.Hash)
		wantErr(t, err, store.ErrNotFound, "lookup deleted")
		_, err = keys.Delete(ctx, k.Hash)
		wantErr(t, err, store.ErrNotFound, "delete twice")
		list, err := keys.List(ctx)
		noErr(t, err, "list")
		if len(list) != 1 || list[0].Hash != other.Hash {
			t.Fatalf("after delete, list = %+v, want only the other key", list)
		}
		// A deleted key can be created again (same secret).
		noErr(t, keys.Create(ctx, k), "create again")
	})
}

// sameKey fails unless got and want are the same key.
func sameKey(t *testing.T, got, want store.APIKey) {
	t.Helper()
	if got.Hash != want.Hash || got.Tenant != want.Tenant || got.Name != want.Name ||
		!got.CreatedAt.Equal(want.CreatedAt) ||
		got.Revoked != want.Revoked || !equalTime(got.RevokedAt, want.RevokedAt) {
		t.Fatalf("api key:\n got %+v\nwant %+v", got, want)
	}
}
