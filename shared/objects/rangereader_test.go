package objects_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// counting counts the GETs a Bucket sends.
type counting struct {
	objects.API
	gets atomic.Int32
}

func (c *counting) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.gets.Add(1)
	return c.API.GetObject(ctx, in, opts...)
}

// TestRangeReader reads an object by range through the block cache: the
// bytes asked for, one GET for the blocks missing, none for those kept,
// the least recently used dropped beyond the limit, large reads straight
// through, and a replaced object refused.
func TestRangeReader(t *testing.T) {
	m := emulator.StartMoto(t)
	api := &counting{API: m.S3()}
	b := objects.New(api, m.NewBucket(t))
	ctx := context.Background()
	data := make([]byte, 5*objects.RangeBlock+100)
	rand.Read(data)
	if _, err := b.Put(ctx, "k", data, objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := b.Head(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	r := objects.NewRangeReader(b, info, 2*objects.RangeBlock)
	const blk = objects.RangeBlock
	tests := []struct {
		name    string
		off, n  int64
		gets    int32 // GETs it sends
		wantEOF bool
	}{
		{"in the first block", 10, 20, 1, false},
		{"kept", 100, 50, 0, false},
		{"across two blocks, one kept", blk - 10, 20, 1, false},
		{"both kept", blk - 5, 10, 0, false},
		{"a third block drops the first", 2*blk + 1, 10, 1, false},
		{"the first again", 0, 10, 1, false},
		{"past the end", int64(len(data)) - 10, 20, 1, true},
		{"at the end", int64(len(data)), 1, 0, true},
		{"large, straight through", 0, 5 * blk, 1, false},
	}
	for _, tt := range tests {
		before := api.gets.Load()
		p := make([]byte, tt.n)
		n, err := r.ReadAt(p, tt.off)
		want := data[min(tt.off, int64(len(data))):min(tt.off+tt.n, int64(len(data)))]
		if !bytes.Equal(p[:n], want) || (err == io.EOF) != tt.wantEOF || err != nil && err != io.EOF {
			t.Errorf("%s: %d bytes, %v", tt.name, n, err)
		}
		if got := api.gets.Load() - before; got != tt.gets {
			t.Errorf("%s: %d GETs, want %d", tt.name, got, tt.gets)
		}
	}
	if _, err := b.Put(ctx, "k", data[:100], objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAtContext(ctx, make([]byte, 10), 4*blk); !errors.Is(err, objects.ErrPrecondition) {
		t.Errorf("a replaced object: %v, want ErrPrecondition", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.ReadAtContext(cancelled, make([]byte, 10), 3*blk); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled read: %v", err)
	}
}
