package objects

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ReadRange returns n bytes of the object key from offset off, of the
// version whose ETag is etag ("" for any; another version is
// ErrPrecondition): a part of a large object without the rest (the files
// of one batch in a snapshot's zip).
func (b *Bucket) ReadRange(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	o, err := b.get(ctx, b.rangeInput(key, etag, fmt.Sprintf("bytes=%d-%d", off, off+n-1)))
	if err != nil {
		return nil, err
	}
	defer o.Body.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(o.Body, buf); err != nil {
		return nil, b.fail("read", key, err)
	}
	return buf, nil
}

// OpenFrom starts reading the object key from offset off to its end, of
// the version whose ETag is etag ("" for any; another version is
// ErrPrecondition): the rest of a download cut short, streamed rather
// than held in memory.
func (b *Bucket) OpenFrom(ctx context.Context, key, etag string, off int64) (*Object, error) {
	return b.get(ctx, b.rangeInput(key, etag, fmt.Sprintf("bytes=%d-", off)))
}

// rangeInput asks for the bytes rng (an HTTP Range) of key, of the
// version whose ETag is etag ("" for any).
func (b *Bucket) rangeInput(key, etag, rng string) *s3.GetObjectInput {
	in := &s3.GetObjectInput{Bucket: &b.name, Key: &key, Range: &rng}
	if etag != "" {
		in.IfMatch = &etag
	}
	return in
}
