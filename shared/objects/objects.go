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
//
// # Large objects
//
// An object of Parts.Threshold bytes or more moves in parts, through the
// SDK's transfer manager (feature/s3/transfermanager): a write is a
// multipart upload of Parts.Size parts, Parts.Concurrency at a time; a
// read, after the first GET has said how large the object is, is parallel
// GETs of the parts it was uploaded in (each the byte range S3 stored as
// that part), on the ETag that GET saw (If-Match), so the parts always
// come from one version of the object. Each part is a request of its own,
// so the client's per-attempt stall bound and retries apply to each part:
// a slow but moving transfer of any size succeeds, a part that stalls is
// retried and then fails the whole read or write. S3 putting the parts
// together may take longer than that bound (awscall.Patiently).
//
// Reads go by part, not by arbitrary byte range, for moto_server, the S3
// of the tests and benchmarks: it copies the whole object to answer each
// ranged GET, so five ranges of a 185 MB snapshot at once waited more than
// the stall bound for their first byte and the read failed; it answers a
// GET of part 1 with the whole object, which then moves in one GET. S3
// answers either in parallel.
//
// A multipart write is all or nothing, like a single PUT: nothing is
// visible until S3 puts the parts together (CompleteMultipartUpload, which
// carries the write's If-Match or If-None-Match; moto_server checks only
// If-None-Match there), and a write that fails
// or is cancelled before that is aborted (AbortMultipartUpload, on a
// context of its own so a cancelled caller still aborts), which leaves
// nothing and is not ErrMaybeDone. A process killed in the middle leaves
// an incomplete upload, invisible to readers and listing, which the
// bucket's lifecycle rule aborts a day later (infra/storage.go). A writer
// of large objects needs s3:AbortMultipartUpload besides s3:PutObject.
//
// # Reads by range
//
// ReadRange reads a part of one version of an object; RangeReader is an
// io.ReaderAt over it with a small cache of blocks, for files read by
// range rather than whole (precise code intelligence's stores, which a
// tool function queries without loading them).
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
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/store"
)

// Errors of a Bucket besides storage failures.
var (
	ErrNotFound     = fmt.Errorf("no such object: %w", fs.ErrNotExist)
	ErrNotModified  = errors.New("not modified")
	ErrPrecondition = errors.New("precondition failed: the object changed")
	// ErrTooLarge: Read found the object over its limit.
	ErrTooLarge = errors.New("object over the limit")
)

// API is the part of the S3 client a Bucket uses: the calls it makes
// itself, and those of the transfer manager (which include the multipart
// upload calls).
type API interface {
	transfermanager.S3APIClient
	PutObjectTagging(ctx context.Context, in *s3.PutObjectTaggingInput, opts ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error)
}

// NewClient returns the S3 client a Bucket expects, from cfg (for its
// bounds, awscall.LoadConfig): S3 itself, or with endpoint an emulator's
// base URL, addressed path-style.
func NewClient(cfg aws.Config, endpoint string) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Objects are checked by their callers (ETags, zip and JSON
		// decoding); checksums are validated where S3 requires them,
		// without a log line per object that has none.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
}

// Parts says how large objects move (see the package comment).
type Parts struct {
	Threshold   int64 // objects of this many bytes or more move in parts
	Size        int64 // bytes per part; S3 takes no part under 5 MiB but the last
	Concurrency int   // parts in flight per object
}

// DefaultParts moves objects of 16 MiB or more in 8 MiB parts, five at a
// time: a 185 MB snapshot zip is 23 parts, and an upload holds about 48
// MB of parts in memory besides its source.
var DefaultParts = Parts{Threshold: 16 << 20, Size: 8 << 20, Concurrency: 5}

// abortTimeout bounds the abort of a failed multipart upload, which runs
// on a context of its own.
const abortTimeout = 30 * time.Second

// Bucket is one bucket of objects.
type Bucket struct {
	api      API
	name     string
	parts    Parts
	transfer *transfermanager.Client
}

// New returns the bucket name, reached through api, moving large objects
// in DefaultParts.
func New(api API, name string) *Bucket { return NewParts(api, name, DefaultParts) }

// NewParts is New with large objects moving as p says (tests use small
// parts).
func NewParts(api API, name string, p Parts) *Bucket {
	transfer := transfermanager.New(patientCompletes{api}, func(o *transfermanager.Options) {
		o.MultipartUploadThreshold = p.Threshold
		o.PartSizeBytes = p.Size
		o.Concurrency = p.Concurrency
		o.GetObjectType = tmtypes.GetObjectParts // see the package comment
		// A part whose body stops is read again once (its request has
		// the client's own retries).
		o.PartBodyMaxRetries = awscall.MaxAttempts
		o.FailTimeout = abortTimeout
		// Callers check what they read, as NewClient's client does.
		o.DisableChecksumValidation = true
	})
	return &Bucket{api: api, name: name, parts: p, transfer: transfer}
}

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
	return b.get(ctx, in)
}

// get starts reading what in asks for.
func (b *Bucket) get(ctx context.Context, in *s3.GetObjectInput) (*Object, error) {
	out, err := b.api.GetObject(ctx, in)
	if err != nil {
		return nil, b.fail("read", aws.ToString(in.Key), err)
	}
	return &Object{Body: out.Body, Info: Info{Key: aws.ToString(in.Key), Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		Modified: aws.ToTime(out.LastModified), Metadata: out.Metadata}}, nil
}

// Read returns the whole object (at most limit bytes; more is an error) and
// its ETag; with ifNoneMatch as Open. An object of Parts.Threshold bytes
// or more is read in parallel parts.
func (b *Bucket) Read(ctx context.Context, key, ifNoneMatch string, limit int64) ([]byte, string, error) {
	o, err := b.Open(ctx, key, ifNoneMatch)
	if err != nil {
		return nil, "", err
	}
	defer o.Body.Close()
	if o.Size > limit {
		return nil, "", fmt.Errorf("%w: s3 object %s is %d bytes, over the limit of %d", ErrTooLarge, key, o.Size, limit)
	}
	if o.Size >= b.parts.Threshold {
		o.Body.Close() // the first GET only said how large it is
		data, err := b.readParts(ctx, o.Info)
		return data, o.ETag, err
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

// patientCompletes is the client the transfer manager uses: api, with
// CompleteMultipartUpload waiting as long as S3 may take to put the parts
// of a large object together (awscall.Patiently), not the stall bound of
// other calls; cut short and retried, it could be carried out twice.
type patientCompletes struct{ API }

// CompleteMultipartUpload implements transfermanager.S3APIClient.
func (p patientCompletes) CompleteMultipartUpload(ctx context.Context, in *s3.CompleteMultipartUploadInput, opts ...func(*s3.Options)) (*s3.CompleteMultipartUploadOutput, error) {
	return p.API.CompleteMultipartUpload(awscall.Patiently(ctx), in, opts...)
}

// readParts reads the object info describes in parallel parts, each on
// its ETag (a changed object is ErrPrecondition).
func (b *Bucket) readParts(ctx context.Context, info Info) ([]byte, error) {
	data := make(partsBuffer, info.Size)
	out, err := b.transfer.DownloadObject(ctx, &transfermanager.DownloadObjectInput{
		Bucket: &b.name, Key: &info.Key, IfMatch: &info.ETag, WriterAt: data,
	})
	if err != nil {
		return nil, b.fail("read", info.Key, err)
	}
	if n := aws.ToInt64(out.ContentLength); n != info.Size {
		return nil, fmt.Errorf("s3 read %s/%s: %d bytes in parts of an object of %d: %w", b.name, info.Key, n, info.Size, store.ErrStorage)
	}
	return data, nil
}

// partsBuffer holds an object read in parts: each part writes its own
// range, so concurrent writes never overlap.
type partsBuffer []byte

// WriteAt implements io.WriterAt.
func (p partsBuffer) WriteAt(data []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(data)) > int64(len(p)) {
		return 0, fmt.Errorf("a part of %d bytes at %d falls outside the object's %d", len(data), off, len(p))
	}
	return copy(p[off:], data), nil
}

// Put writes the object whole and returns its ETag; see Upload.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, o PutOptions) (string, error) {
	return b.Upload(ctx, key, bytes.NewReader(data), o)
}

// Upload writes the object whole as body yields it and returns its ETag:
// in one request below Parts.Threshold, else as a multipart upload (see
// the package comment). Either way S3 never shows half of it, and a
// failure that is not store.ErrMaybeDone leaves what was there.
func (b *Bucket) Upload(ctx context.Context, key string, body io.Reader, o PutOptions) (string, error) {
	in := &transfermanager.UploadObjectInput{Bucket: &b.name, Key: &key, Body: body}
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
	out, err := b.transfer.UploadObject(ctx, in)
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
	return awscall.Wrap("S3", "s3 "+op+" "+b.name+"/"+key, err, mayHaveChanged(op, err))
}

// mayHaveChanged reports whether a failed write or tag may still have
// changed the object. A multipart write that failed creating the upload
// or sending a part, or stopped with its context, never asked S3 to put
// the parts together: it was aborted and changed nothing. Any other
// failure of a write may have come after S3 did.
func mayHaveChanged(op string, err error) bool {
	if op != "write" && op != "tag" {
		return false
	}
	var call *smithy.OperationError
	if errors.As(err, &call) {
		return call.OperationName != "CreateMultipartUpload" && call.OperationName != "UploadPart"
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
