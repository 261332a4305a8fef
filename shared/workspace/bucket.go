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
// (MaxFileBytes) per write in flight. (They are not serialized, as Dir's
// are: a queue of network round trips would make a tenant's concurrent
// writes wait on each other, and Lambda instances would race anyway.)
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
	stored, err := b.survey(ctx, pre, p)
	if err != nil {
		return err
	}
	if err := stored.allow(b.quota, int64(len(data))); err != nil {
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

// survey lists a tenant's keys, under pre, before a write to p: their
// tally, or a Conflict error if an object is where p needs a folder, or p
// is a folder of other objects.
func (b *Bucket) survey(ctx context.Context, pre, p string) (tally, error) {
	t := tally{path: p}
	pages := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &pre})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return tally{}, unavailable(p, "cannot measure the workspace", err)
		}
		for _, o := range page.Contents {
			name := strings.TrimPrefix(aws.ToString(o.Key), pre)
			switch {
			case strings.HasPrefix(p, name+"/"):
				return tally{}, &Error{Kind: Conflict, Path: p, Reason: fmt.Sprintf("%s (%s)", fileInTheWay, name)}
			case strings.HasPrefix(name, p+"/"):
				return tally{}, &Error{Kind: Conflict, Path: p, Reason: folderInTheWay}
			}
			t.add(name, aws.ToInt64(o.Size))
		}
	}
	return t, nil
}
