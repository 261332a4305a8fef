package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/objects"
)

// Bucket keeps the workspaces in S3, a tenant's files under
// workspace/<tenant>/. A write lists the tenant's keys first: that listing
// is both the quota count (the bucket itself is the ledger, so nothing
// can drift) and the check that no file stands where a folder is needed,
// or the reverse, so that the bucket accepts exactly what a local
// directory would. Concurrent writes of one tenant may each pass the quota
// check, so a tenant can overshoot its quota by at most one file
// (MaxFileBytes) per write in flight. (They are not serialized, as Dir's
// are: a queue of network round trips would make a tenant's concurrent
// writes wait on each other, and Lambda instances would race anyway.)
type Bucket struct {
	objects *objects.Bucket
	quota   Quota
}

// NewBucket returns the workspaces in the bucket.
func NewBucket(b *objects.Bucket, quota Quota) *Bucket {
	return &Bucket{objects: b, quota: quota}
}

// Read returns the contents of a tenant's file.
func (b *Bucket) Read(ctx context.Context, tenant, p string) ([]byte, error) {
	key, err := resolve(tenant, p)
	if err != nil {
		return nil, err
	}
	o, err := b.objects.Open(ctx, key, "")
	if errors.Is(err, objects.ErrNotFound) {
		return nil, &Error{Kind: NotFound, Path: p, Reason: noSuchFile, Err: err}
	}
	if err != nil {
		return nil, unavailable(p, "cannot read the file", err)
	}
	defer o.Body.Close()
	return readFile(p, o.Body, o.Size)
}

// Write replaces (or creates) a tenant's file with data in one PUT: S3
// never shows half an object, and an interrupted write leaves nothing.
func (b *Bucket) Write(ctx context.Context, tenant, p string, data []byte) error {
	key, err := resolve(tenant, p)
	if err != nil {
		return err
	}
	if len(data) > MaxFileBytes {
		return tooLarge(p)
	}
	pre, _ := prefix(tenant)
	stored, err := b.survey(ctx, pre, p)
	if err != nil {
		return err
	}
	if err := stored.allow(b.quota, int64(len(data))); err != nil {
		return err
	}
	if _, err := b.objects.Put(ctx, key, data, objects.PutOptions{ContentType: "text/plain; charset=utf-8"}); err != nil {
		return unavailable(p, "cannot write the file", err)
	}
	return nil
}

// survey lists a tenant's keys, under pre, before a write to p: their
// tally, or a Conflict error if an object is where p needs a folder, or p
// is a folder of other objects.
func (b *Bucket) survey(ctx context.Context, pre, p string) (tally, error) {
	t := tally{path: p}
	objs, err := b.objects.List(ctx, pre)
	if err != nil {
		return tally{}, unavailable(p, "cannot measure the workspace", err)
	}
	for _, o := range objs {
		name := strings.TrimPrefix(o.Key, pre)
		switch {
		case strings.HasPrefix(p, name+"/"):
			return tally{}, &Error{Kind: Conflict, Path: p, Reason: fmt.Sprintf("%s (%s)", fileInTheWay, name)}
		case strings.HasPrefix(name, p+"/"):
			return tally{}, &Error{Kind: Conflict, Path: p, Reason: folderInTheWay}
		}
		t.add(name, o.Size)
	}
	return t, nil
}
