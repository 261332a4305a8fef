package objects

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ReadRange returns n bytes of the object key from offset off, of the
// version whose ETag is etag ("" for any; another version is
// ErrPrecondition): a part of a large object without the rest (the files
// of one batch in a snapshot's zip).
func (b *Bucket) ReadRange(ctx context.Context, key, etag string, off, n int64) ([]byte, error) {
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	in := &s3.GetObjectInput{Bucket: &b.name, Key: &key, Range: &rng}
	if etag != "" {
		in.IfMatch = &etag
	}
	out, err := b.api.GetObject(ctx, in)
	if err != nil {
		return nil, b.fail("read", key, err)
	}
	defer out.Body.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(out.Body, buf); err != nil {
		return nil, b.fail("read", key, err)
	}
	return buf, nil
}

// OpenFrom starts reading the object key from offset off to its end, of
// the version whose ETag is etag ("" for any; another version is
// ErrPrecondition): the rest of a download cut short, streamed rather
// than held in memory.
func (b *Bucket) OpenFrom(ctx context.Context, key, etag string, off int64) (*Object, error) {
	rng := fmt.Sprintf("bytes=%d-", off)
	in := &s3.GetObjectInput{Bucket: &b.name, Key: &key, Range: &rng}
	if etag != "" {
		in.IfMatch = &etag
	}
	out, err := b.api.GetObject(ctx, in)
	if err != nil {
		return nil, b.fail("read", key, err)
	}
	return &Object{Body: out.Body, Info: Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		Modified: aws.ToTime(out.LastModified), Metadata: out.Metadata}}, nil
}
