package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// apiKeyChecks check store.APIKeys.
var apiKeyChecks = []check{
	{"CreateLookup", apiKeysCreateLookup},
	{"DuplicateConflicts", apiKeysDuplicateConflicts},
	{"ListSorted", apiKeysListSorted},
	{"Revoke", apiKeysRevoke},
	{"Delete", apiKeysDelete},
}

// keyBase is the creation time the checks' keys start from: sub-second
// parts in a non-UTC zone.
var keyBase = time.Date(2025, 1, 2, 3, 4, 5, 987654321, time.FixedZone("UTC-5", -5*60*60))

// apiKey returns the key of secret for tenant, created at created.
func apiKey(secret, tenant string, created time.Time) store.APIKey {
	return store.APIKey{
		Hash:      store.HashKey(secret),
		Tenant:    tenant,
		Name:      "key " + secret,
		CreatedAt: created,
	}
}

// limited returns k limited to the repositories repos (sorted).
func limited(k store.APIKey, repos ...string) store.APIKey {
	k.Repos = repos
	return k
}

func apiKeysCreateLookup(t *testing.T, st store.Stores) {
	keys, ctx := st.APIKeys, t.Context()
	cases := []store.APIKey{
		apiKey("s1", "acme", keyBase),
		apiKey("s2", "acme", keyBase.Add(time.Second)),
		apiKey("s3", "other", keyBase.Add(2*time.Second)),
		limited(apiKey("s4", "acme", keyBase.Add(3*time.Second)), "api", "web"),
	}
	for _, k := range cases {
		noErr(t, keys.Create(ctx, k), "create")
		got, err := keys.Lookup(ctx, k.Hash)
		noErr(t, err, "lookup")
		sameKey(t, got, k)
	}
	_, err := keys.Lookup(ctx, store.HashKey("unknown"))
	wantErr(t, err, store.ErrNotFound, "lookup unknown")
}

func apiKeysDuplicateConflicts(t *testing.T, st store.Stores) {
	keys, ctx := st.APIKeys, t.Context()
	orig := apiKey("dup", "alpha", keyBase)
	noErr(t, keys.Create(ctx, orig), "create")
	takeover := apiKey("dup", "beta", keyBase.Add(time.Hour))
	wantErr(t, keys.Create(ctx, takeover), store.ErrConflict, "create duplicate")
	got, err := keys.Lookup(ctx, orig.Hash)
	noErr(t, err, "lookup")
	sameKey(t, got, orig)
}

func apiKeysListSorted(t *testing.T, st store.Stores) {
	keys, ctx := st.APIKeys, t.Context()
	all, err := keys.List(ctx)
	noErr(t, err, "list empty")
	if len(all) != 0 {
		t.Fatalf("empty store lists %d keys", len(all))
	}
	created := []store.APIKey{
		apiKey("late", "a", keyBase.Add(time.Hour)),
		apiKey("early", "b", keyBase),
		apiKey("same-1", "c", keyBase.Add(time.Minute)),
		apiKey("same-2", "d", keyBase.Add(time.Minute)),
		apiKey("same-3", "e", keyBase.Add(time.Minute)),
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
}

func apiKeysRevoke(t *testing.T, st store.Stores) {
	keys, ctx := st.APIKeys, t.Context()
	k := limited(apiKey("rev", "acme", keyBase), "api") // revoking keeps the limit
	noErr(t, keys.Create(ctx, k), "create")
	first := keyBase.Add(time.Hour)
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
}

func apiKeysDelete(t *testing.T, st store.Stores) {
	keys, ctx := st.APIKeys, t.Context()
	k := apiKey("del", "acme", keyBase)
	other := apiKey("keep", "acme", keyBase.Add(time.Second))
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
}

// sameKey fails unless got and want are the same key.
func sameKey(t *testing.T, got, want store.APIKey) {
	t.Helper()
	if got.Hash != want.Hash || got.Tenant != want.Tenant || got.Name != want.Name ||
		!got.CreatedAt.Equal(want.CreatedAt) ||
		got.Revoked != want.Revoked || !equalTime(got.RevokedAt, want.RevokedAt) ||
		!slices.Equal(got.Repos, want.Repos) || (got.Repos == nil) != (want.Repos == nil) {
		t.Fatalf("api key:\n got %+v\nwant %+v", got, want)
	}
}
