package precise_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestOverS3 opens a store in a bucket and queries it by range through
// objects.RangeReader, under the query's context.
func TestOverS3(t *testing.T) {
	store := build(t, marshal(t, repoV1()), fromscip.Options{Commit: "c1"})
	m := emulator.StartMoto(t)
	b := objects.New(m.S3(), m.NewBucket(t))
	ctx := context.Background()
	if _, err := b.Put(ctx, "precise/r/c1/go.store", store, objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := b.Head(ctx, "precise/r/c1/go.store")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := precise.Open(ctx, objects.NewRangeReader(b, info, 1<<20), info.Size)
	if err != nil {
		t.Fatal(err)
	}
	if got := allReferences(t, ix, read, 2); !slices.Equal(got, []string{"p/a.go:11:6", "p/b.go:4:2", "p/b.go:9:2"}) {
		t.Errorf("references over S3: %q", got)
	}
	if by, _, err := ix.Implementations(ctx, iface); err != nil || !slices.Equal(by, []string{impl}) {
		t.Errorf("implementations over S3: %q, %v", by, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	fresh, err := precise.Open(ctx, objects.NewRangeReader(b, info, 0), info.Size)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.At(cancelled, "p/a.go", 3, 6); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled query: %v", err)
	}
}
