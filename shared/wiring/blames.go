package wiring

import (
	"context"
	"errors"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// maxBlameBytes bounds a stored blame read back (a blame of 100,000
// one-line hunks is about 40 MB; such a blame is not worth keeping).
const maxBlameBytes = 16 << 20

// BlameObjects returns where blames are kept beyond the process: deployed,
// the bucket, shared by every instance of the history tools' function;
// nil locally, where they are kept in memory only (the process lives long
// and is alone).
func (e *Env) BlameObjects(ctx context.Context) (*BlameObjects, error) {
	if e.Config.Bucket == "" {
		return nil, nil
	}
	bucket, err := e.S3(ctx)
	if err != nil {
		return nil, err
	}
	return &BlameObjects{bucket: bucket}, nil
}

// BlameObjects keeps blames in the bucket, one object each (BlameKey).
type BlameObjects struct{ bucket *objects.Bucket }

// BlamesPrefix is where blames are kept in the bucket:
// blames/<repository folder>/<name>.json. It is not under the pushed
// history's prefix (githistory.BucketPrefix) so that the functions that
// write blames may write nothing of what users pushed.
const BlamesPrefix = "blames/"

// BlameKey is the object key of a stored blame.
func BlameKey(repo reposcope.Ref, name string) string {
	return BlamesPrefix + repo.Key() + "/" + name + ".json"
}

// Load reads a stored blame; false when there is none.
func (b *BlameObjects) Load(ctx context.Context, repo reposcope.Ref, name string) ([]byte, bool, error) {
	data, _, err := b.bucket.Read(ctx, BlameKey(repo, name), "", maxBlameBytes)
	if errors.Is(err, objects.ErrNotFound) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// Save stores a blame.
func (b *BlameObjects) Save(ctx context.Context, repo reposcope.Ref, name string, data []byte) error {
	if len(data) > maxBlameBytes {
		return nil
	}
	_, err := b.bucket.Put(ctx, BlameKey(repo, name), data, objects.PutOptions{})
	return err
}
