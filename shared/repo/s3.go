package repo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ObjectGetter is the part of the S3 client the S3 source uses.
type ObjectGetter interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// S3Options configure NewS3.
type S3Options struct {
	Bucket string
	// DefaultRepo is the tenant whose snapshot tenants without one read;
	// "" for none.
	DefaultRepo string
	// Refresh is how long a pointer is trusted before it is revalidated
	// (0: DefaultRefresh).
	Refresh time.Duration
	// MaxBytes refuses snapshots whose zip is larger (0: DefaultMaxBytes).
	MaxBytes int64
	// CacheBytes bounds the snapshots kept in memory (zip plus files);
	// the least recently used ones beyond it are dropped (0: DefaultCacheBytes).
	CacheBytes int64
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Policy decides what the tools may see (nil: DefaultDeny alone).
	Policy *Policy
}

// Defaults of S3Options.
const (
	DefaultRefresh    = 5 * time.Second
	DefaultMaxBytes   = 500 << 20
	DefaultCacheBytes = 1 << 30
)

// S3 serves zip snapshots from a bucket: snapshots/<tenant>/current.json
// names the current zip. Each repository's snapshot is downloaded once and
// kept in memory; its pointer is revalidated with a conditional GET (ETag)
// when it is older than Refresh, so a push is seen within Refresh and an
// unchanged pointer costs no download.
type S3 struct {
	client ObjectGetter
	o      S3Options

	mu    sync.Mutex
	repos map[string]*s3Repo
}

var _ Source = (*S3)(nil)

// s3Repo is what is known of one repository (a tenant's folder).
type s3Repo struct {
	mu       sync.Mutex
	checked  time.Time // when the pointer was last read; zero: never
	etag     string    // the pointer's ETag
	pointer  Pointer
	snap     View // nil: the repository has no snapshot
	lastUsed time.Time
	refresh  chan struct{} // while a revalidation runs; closed when it ends
	err      error         // the last revalidation's failure
}

// NewS3 returns a source reading snapshots from o.Bucket with client.
func NewS3(client ObjectGetter, o S3Options) *S3 {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &S3{client: client, o: o, repos: map[string]*s3Repo{}}
}

// Open returns the tenant's current snapshot, or the default repository's.
func (s *S3) Open(ctx context.Context, tenant string) (View, error) {
	snap, err := s.current(ctx, tenant)
	if err != nil || snap != nil {
		return snap, err
	}
	if s.o.DefaultRepo != "" && s.o.DefaultRepo != tenant {
		snap, err = s.current(ctx, s.o.DefaultRepo)
		if err != nil || snap != nil {
			return snap, err
		}
	}
	return nil, ErrNoRepository
}

// current returns the snapshot of one repository; nil when it has none.
//
// The revalidation (and any download) runs on its own, with its own time
// limit: a caller whose deadline passes returns, and the download goes on
// for the next call, so a large snapshot is not started over by every
// call that times out. Concurrent callers wait for the same one.
func (s *S3) current(ctx context.Context, name string) (View, error) {
	s.mu.Lock()
	r := s.repos[name]
	if r == nil {
		r = &s3Repo{}
		s.repos[name] = r
	}
	s.mu.Unlock()

	r.mu.Lock()
	now := s.o.Now()
	r.lastUsed = now
	if !r.checked.IsZero() && now.Sub(r.checked) < s.o.Refresh {
		snap := r.snap
		r.mu.Unlock()
		return snap, nil
	}
	if r.refresh == nil {
		r.refresh = make(chan struct{})
		go s.revalidate(name, r, r.etag, r.pointer, r.snap)
	}
	done := r.refresh
	r.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the snapshot of %s: %w", name, ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil && r.snap == nil {
		return nil, r.err
	}
	// On an S3 failure the snapshot in hand is still a consistent one.
	return r.snap, nil
}

// revalidateTimeout bounds one revalidation, download included.
const revalidateTimeout = 5 * time.Minute

// revalidate reads the pointer (conditionally on the ETag in hand),
// downloads the zip it names when that changed, and records the outcome
// in r.
func (s *S3) revalidate(name string, r *s3Repo, etag string, cur Pointer, snap View) {
	ctx, cancel := context.WithTimeout(context.Background(), revalidateTimeout)
	defer cancel()
	newEtag, p, newSnap, err := s.fetch(ctx, name, etag, cur, snap)

	r.mu.Lock()
	if err == nil {
		r.checked = s.o.Now()
		r.etag, r.pointer, r.snap = newEtag, p, newSnap
	}
	r.err = err
	close(r.refresh)
	r.refresh = nil
	held := r.snap != nil
	r.mu.Unlock()
	if held {
		s.evict(r)
	}
}

// fetch returns the repository's pointer ETag, pointer and snapshot: the
// ones in hand when the pointer is unchanged, none when there is no
// pointer.
func (s *S3) fetch(ctx context.Context, name, etag string, cur Pointer, snap View) (string, Pointer, View, error) {
	in := &s3.GetObjectInput{Bucket: &s.o.Bucket, Key: aws.String(PointerKey(name))}
	if etag != "" && snap != nil {
		in.IfNoneMatch = aws.String(etag)
	}
	out, err := s.client.GetObject(ctx, in)
	switch status := HTTPStatus(err); {
	case err == nil:
	case status == http.StatusNotModified:
		return etag, cur, snap, nil
	case status == http.StatusNotFound:
		return "", Pointer{}, nil, nil
	default:
		return "", Pointer{}, nil, fmt.Errorf("read %s: %w", PointerKey(name), err)
	}
	p, err := decodePointer(out.Body, PointerKey(name))
	if err != nil {
		return "", Pointer{}, nil, err
	}
	if !strings.HasPrefix(p.Key, TenantPrefix(name)) || !strings.HasSuffix(p.Key, ".zip") || strings.Contains(p.Key, "..") {
		return "", Pointer{}, nil, fmt.Errorf("%s names %q, which is not a snapshot of %s", PointerKey(name), p.Key, name)
	}
	if snap != nil && p.Key == cur.Key && p.Commit == cur.Commit {
		return aws.ToString(out.ETag), p, snap, nil
	}
	newSnap, err := s.download(ctx, p)
	if err != nil {
		return "", Pointer{}, nil, err
	}
	return aws.ToString(out.ETag), p, newSnap, nil
}

// download reads a snapshot zip into memory.
func (s *S3) download(ctx context.Context, p Pointer) (View, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.o.Bucket, Key: aws.String(p.Key)})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.Key, err)
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if size > s.o.MaxBytes {
		return nil, fmt.Errorf("snapshot %s is %d bytes, over the limit of %d", p.Key, size, s.o.MaxBytes)
	}
	data := make([]byte, 0, size)
	buf := bytesWriter{data}
	n, err := io.Copy(&buf, io.LimitReader(out.Body, s.o.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.Key, err)
	}
	if n > s.o.MaxBytes {
		return nil, fmt.Errorf("snapshot %s is over the limit of %d bytes", p.Key, s.o.MaxBytes)
	}
	return OpenZip(buf.b, p.Commit, s.o.Policy)
}

// evict drops the least recently used snapshots, other than keep's, while
// the snapshots in memory take more than CacheBytes. Repositories in use
// by another call are left alone. A dropped repository is downloaded again
// on its next use.
func (s *S3) evict(keep *s3Repo) {
	s.mu.Lock()
	others := make([]*s3Repo, 0, len(s.repos))
	for _, r := range s.repos {
		if r != keep {
			others = append(others, r)
		}
	}
	s.mu.Unlock()

	keep.mu.Lock()
	total := keep.pointer.memory()
	keep.mu.Unlock()
	var idle []*s3Repo // locked by this call
	for _, r := range others {
		if !r.mu.TryLock() {
			continue
		}
		if r.snap == nil {
			r.mu.Unlock()
			continue
		}
		total += r.pointer.memory()
		idle = append(idle, r)
	}
	slices.SortFunc(idle, func(a, b *s3Repo) int { return a.lastUsed.Compare(b.lastUsed) })
	for _, r := range idle {
		if total > s.o.CacheBytes {
			total -= r.pointer.memory()
			r.snap, r.etag, r.checked, r.pointer = nil, "", time.Time{}, Pointer{}
		}
		r.mu.Unlock()
	}
}

// memory estimates what a snapshot takes in memory once searched: the zip,
// the files, their case-folded copies and trigram filters.
func (p Pointer) memory() int64 { return p.ZipBytes + p.Bytes*5/2 }

// HTTPStatus returns the HTTP status of a failed S3 call, or 0 when the
// call got no response.
func HTTPStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// bytesWriter appends to a slice sized in advance.
type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
