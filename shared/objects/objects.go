// Package objects is Toolshed's one way to S3: the objects of the
// deployment's bucket (repository snapshots, context_search's indexes,
// file-io workspaces), read and written whole, conditionally where it
// matters (ETags), and every failure mapped once:
//
//   - a missing object is ErrNotFound (which is fs.ErrNotExist);
//   - a conditional GET whose ETag still holds is ErrNotModified;
//   - a conditional PUT that lost (If-Match, If-None-Match) is
//     ErrPrecondition;
//   - anything else — S3 refusing or hanging, throttling, a missing bucket,
//     denied access — wraps store.ErrStorage (STORAGE_ERROR for the caller)
//     with a sentence saying which, and the cause for the log (package
//     awscall; a write sent without an answer also wraps
//     store.ErrMaybeDone).
//
// The client's own bounds (attempt timeouts, retries) come from the AWS
// configuration it was built with (family.Env).
package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/toolshed/toolshed/shared/awscall"
)

// Errors of a Bucket besides storage failures.
var (
	ErrNotFound     = fmt.Errorf("no such object: %w", fs.ErrNotExist)
	ErrNotModified  = errors.New("not modified")
	ErrPrecondition = errors.New("precondition failed: the object changed")
)

// API is the part of the S3 client a Bucket uses.
type API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	PutObjectTagging(ctx context.Context, in *s3.PutObjectTaggingInput, opts ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error)
}

// Bucket is one bucket of objects.
type Bucket struct {
	api  API
	name string
}

// New returns the bucket name, reached through api.
func New(api API, name string) *Bucket { return &Bucket{api: api, name: name} }

// Name is the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Info describes an object.
type Info struct {
	Key      string
	Size     int64
	ETag     string
	Modified time.Time
	Metadata map[string]string
}

// Object is an object being read: its body must be closed.
type Object struct {
	Info
	Body io.ReadCloser
}

// Open starts reading key. With ifNoneMatch (an ETag the caller holds),
// an unchanged object is ErrNotModified.
func (b *Bucket) Open(ctx context.Context, key, ifNoneMatch string) (*Object, error) {
	in := &s3.GetObjectInput{Bucket: &b.name, Key: &key}
	if ifNoneMatch != "" {
		in.IfNoneMatch = &ifNoneMatch
	}
	out, err := b.api.GetObject(ctx, in)
	if err != nil {
		return nil, b.fail("read", key, err)
	}
	return &Object{Body: out.Body, Info: Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		Modified: aws.ToTime(out.LastModified), Metadata: out.Metadata}}, nil
}

// Read returns the whole object (at most limit bytes; more is an error) and
// its ETag; with ifNoneMatch as Open.
func (b *Bucket) Read(ctx context.Context, key, ifNoneMatch string, limit int64) ([]byte, string, error) {
	o, err := b.Open(ctx, key, ifNoneMatch)
	if err != nil {
		return nil, "", err
	}
	defer o.Body.Close()
	if o.Size > limit {
		return nil, "", fmt.Errorf("s3 object %s is %d bytes, over the limit of %d", key, o.Size, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(o.Size, 0)))
	n, err := io.Copy(buf, io.LimitReader(o.Body, limit+1))
	if err != nil {
		return nil, "", b.fail("read", key, err)
	}
	if n > limit {
		return nil, "", fmt.Errorf("s3 object %s is over the limit of %d bytes", key, limit)
	}
	return buf.Bytes(), o.ETag, nil
}

// PutOptions are the optional parts of a Put.
type PutOptions struct {
	// IfMatch writes only over the object with this ETag; IfNoneMatch "*"
	// only where there is no object. A lost condition is ErrPrecondition.
	IfMatch, IfNoneMatch string
	ContentType          string
	CacheControl         string
	Metadata             map[string]string
	Tagging              string // "key=value&…"
}

// Put writes the object whole, in one request (S3 never shows half of
// it), and returns its ETag.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, o PutOptions) (string, error) {
	in := &s3.PutObjectInput{Bucket: &b.name, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	set := func(dst **string, v string) {
		if v != "" {
			*dst = aws.String(v)
		}
	}
	set(&in.IfMatch, o.IfMatch)
	set(&in.IfNoneMatch, o.IfNoneMatch)
	set(&in.ContentType, o.ContentType)
	set(&in.CacheControl, o.CacheControl)
	set(&in.Tagging, o.Tagging)
	in.Metadata = o.Metadata
	out, err := b.api.PutObject(ctx, in)
	if err != nil {
		err = b.fail("write", key, err)
		if o.IfMatch != "" && errors.Is(err, ErrNotFound) { // the object it was to replace is gone
			return "", fmt.Errorf("s3 write %s: %w", key, ErrPrecondition)
		}
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// Head describes the object key.
func (b *Bucket) Head(ctx context.Context, key string) (Info, error) {
	out, err := b.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		return Info{}, b.fail("read", key, err)
	}
	return Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		Modified: aws.ToTime(out.LastModified), Metadata: out.Metadata}, nil
}

// List returns every object under prefix, in key order.
func (b *Bucket) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	pages := s3.NewListObjectsV2Paginator(b.api, &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, b.fail("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, Info{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// Tag sets one tag on the object key (replacing its tags).
func (b *Bucket) Tag(ctx context.Context, key, tag, value string) error {
	_, err := b.api.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
		Bucket:  &b.name,
		Key:     &key,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(tag), Value: aws.String(value)}}},
	})
	if err != nil {
		return b.fail("tag", key, err)
	}
	return nil
}

// fail maps an error of an operation on key (see the package comment).
func (b *Bucket) fail(op, key string, err error) error {
	status, code := awscall.Status(err), awscall.Code(err)
	switch {
	case status == http.StatusNotFound && code != "NoSuchBucket":
		return fmt.Errorf("s3 %s %s: %w", op, key, ErrNotFound)
	case status == http.StatusNotModified:
		return ErrNotModified
	case status == http.StatusPreconditionFailed, status == http.StatusConflict && code != "BucketNotEmpty":
		return fmt.Errorf("s3 %s %s: %w", op, key, ErrPrecondition)
	}
	return awscall.Wrap("S3", "s3 "+op+" "+b.name+"/"+key, err, op == "write" || op == "tag")
}
