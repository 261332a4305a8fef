package wiring

import (
	"context"

	"github.com/toolshed/toolshed/shared/precisebucket"
)

// bucketPreciseIndexes answers PreciseIndexes from the bucket, with the
// process's one Reader: what it opens for a snapshot is held against the
// S3 source's view of it (see precisebucket.Reader).
func (e *Env) bucketPreciseIndexes(ctx context.Context) (PreciseIndexes, error) {
	rd, err := e.preciseReader(ctx)
	if err != nil {
		return nil, err
	}
	return rd.Indexes, nil
}

// preciseReader is the process's one Reader of the bucket's precise
// indexes, made on first use.
func (e *Env) preciseReader(ctx context.Context) (*precisebucket.Reader, error) {
	bucket, err := e.S3(ctx)
	if err != nil {
		return nil, err
	}
	src, err := e.Repo(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.preciseBucket == nil {
		e.preciseBucket = precisebucket.NewReader(bucket, src, precisebucket.Options{Now: e.Now, Log: e.Log})
	}
	return e.preciseBucket, nil
}
