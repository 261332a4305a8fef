package store_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

func TestHashKey(t *testing.T) {
	cases := []struct{ key, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tc := range cases {
		if got := store.HashKey(tc.key); got != tc.want {
			t.Errorf("HashKey(%q) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

func TestPageLimit(t *testing.T) {
	cases := []struct{ in, want int }{
		{-1, store.DefaultLimit},
		{0, store.DefaultLimit},
		{1, 1},
		{store.MaxLimit, store.MaxLimit},
		{store.MaxLimit + 1, store.MaxLimit},
	}
	for _, tc := range cases {
		if got := store.PageLimit(tc.in); got != tc.want {
			t.Errorf("PageLimit(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestNewMemoryID(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	times := []time.Time{
		time.Unix(0, 1),
		base,
		base.Add(time.Nanosecond),
		base.Add(time.Second),
		base.AddDate(100, 0, 0),
	}
	var ids []string
	for _, at := range times {
		id := store.NewMemoryID(at)
		if !store.ValidMemoryID(id) {
			t.Fatalf("NewMemoryID(%s) = %q, wrong shape", at, id)
		}
		ids = append(ids, id)
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids are not in time order: %v", ids)
	}
	if store.NewMemoryID(base) == store.NewMemoryID(base) {
		t.Fatal("two ids for the same time are equal")
	}
}

func TestSortAPIKeys(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	keys := []store.APIKey{
		{Hash: "c", CreatedAt: t0.Add(time.Hour)},
		{Hash: "b", CreatedAt: t0},
		{Hash: "a", CreatedAt: t0},
		// The same instant in another zone sorts as equal time.
		{Hash: "0", CreatedAt: t0.In(time.FixedZone("X", 3600))},
	}
	store.SortAPIKeys(keys)
	var got []string
	for _, k := range keys {
		got = append(got, k.Hash)
	}
	if want := []string{"0", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestInProgressError(t *testing.T) {
	err := fmt.Errorf("dynamodb create task: %w", &store.InProgressError{RetryAfter: 12300 * time.Millisecond})
	var ip *store.InProgressError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ip) || ip.RetryAfter != 12300*time.Millisecond {
		t.Fatalf("%v: not an InProgressError wrapping ErrConflict", err)
	}
	if want := "a request with this idempotency key is in progress; try again in 12s"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not say %q", err, want)
	}
}
