package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/toolshed/toolshed/shared/config"
)

// Bucket keeps the workspaces in S3, a tenant's files under
// workspace/<tenant>/. A write lists the tenant's keys first: that listing
// is both the quota count (the bucket itself is the ledger, so nothing
// can drift) and the check that no file stands where a folder is needed,
// or the reverse, so that the bucket accepts exactly what a local
// directory would. Concurrent writes of one tenant may each pass the quota
// check, so a tenant can overshoot its quota by at most one file
// (MaxFileBytes) per write in flight.
type Bucket struct {
	client *s3.Client
	bucket string
	quota  config.Quota
}

// NewBucket returns the workspaces in the bucket.
func NewBucket(client *s3.Client, bucket string, quota config.Quota) *Bucket {
	return &Bucket{client: client, bucket: bucket, quota: quota}
}

// Read returns the contents of a tenant's file.
func (b *Bucket) Read(ctx context.Context, tenant, p string) ([]byte, error) {
	key, err := resolve(tenant, p)
	if err != nil {
		return nil, err
	}
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		var missing *types.NoSuchKey
		if errors.As(err, &missing) {
			return nil, &Error{Kind: NotFound, Path: p, Reason: noSuchFile, Err: err}
		}
		return nil, unavailable(p, "cannot read the file", err)
	}
	defer out.Body.Close()
	return readFile(p, out.Body, aws.ToInt64(out.ContentLength))
}

// Write replaces (or creates) a tenant's file with data in one PUT.
func (b *Bucket) Write(ctx context.Context, tenant, p string, data []byte) error {
	key, err := resolve(tenant, p)
	if err != nil {
		return err
	}
	if len(data) > MaxFileBytes {
		return tooLarge(p)
	}
	pre, _ := prefix(tenant)
	used, old, exists, err := b.survey(ctx, pre, key)
	if err != nil {
		return err
	}
	if err := checkQuota(b.quota, used, p, exists, old, int64(len(data))); err != nil {
		return err
	}
	_, err = b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &b.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("text/plain; charset=utf-8"),
	})
	if err != nil {
		return unavailable(p, "cannot write the file", err)
	}
	return nil
}

// survey lists a tenant's keys: the usage, the size of the object at key
// if there is one, and a Conflict error if an object is where key needs a
// folder, or key is a folder of other objects.
func (b *Bucket) survey(ctx context.Context, pre, key string) (used Usage, old int64, exists bool, err error) {
	p := strings.TrimPrefix(key, pre)
	pages := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &pre})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return Usage{}, 0, false, unavailable(p, "cannot measure the workspace", err)
		}
		for _, o := range page.Contents {
			k, size := aws.ToString(o.Key), aws.ToInt64(o.Size)
			switch {
			case k == key:
				old, exists = size, true
			case strings.HasPrefix(key, k+"/"):
				return Usage{}, 0, false, &Error{Kind: Conflict, Path: p,
					Reason: fmt.Sprintf("%s (%s)", fileInTheWay, strings.TrimPrefix(k, pre))}
			case strings.HasPrefix(k, key+"/"):
				return Usage{}, 0, false, &Error{Kind: Conflict, Path: p, Reason: folderInTheWay}
			}
			used.Files++
			used.Bytes += size
		}
	}
	return used, old, exists, nil
}
