package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// S3Options configure NewS3.
type S3Options struct {
	// DefaultRepo is the tenant whose default repository tenants without
	// one of their own read; "" for none.
	DefaultRepo string
	// Refresh is how long a pointer is trusted before it is revalidated
	// (0: DefaultRefresh).
	Refresh time.Duration
	// MaxBytes refuses snapshots of more bytes of files (as their pointer
	// says), or whose zip is larger (0: DefaultMaxBytes).
	MaxBytes int64
	// CacheBytes bounds the snapshots kept in memory (zip plus files, and
	// what their followers hold for them: View.Hold); the least recently
	// used ones beyond it are dropped (0: DefaultCacheBytes).
	CacheBytes int64
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Policy decides what the tools may see (nil: DefaultDeny alone).
	Policy *Policy
	// Log reports revalidations that fail while a snapshot is served
	// (nil: discard).
	Log *slog.Logger
}

// Defaults of S3Options.
const (
	DefaultRefresh    = 5 * time.Second
	DefaultMaxBytes   = config.DefaultRepoMaxMB << 20
	DefaultCacheBytes = 1 << 30
)

// revalidateWait is how long a call holding a snapshot waits for its
// revalidation before it is served the snapshot it holds: long enough for
// a conditional GET to answer, short against any deadline, so a push is
// usually seen by the first call after Refresh while S3 failing or hanging
// never holds a call.
const revalidateWait = 300 * time.Millisecond

// S3 serves zip snapshots from a bucket: each repository's current.json
// (see RepoPrefix) names its current zip. Each repository's snapshot is downloaded once and
// kept in memory; its pointer is revalidated with a conditional GET (ETag)
// when it is older than Refresh, so a push is seen within Refresh and an
// unchanged pointer costs no download. A snapshot in hand keeps being
// served while S3 fails or hangs.
//
// The snapshots in memory, with what their followers hold for them
// (View.Hold: symbol tables), stay within CacheBytes: the least recently
// used ones beyond it are dropped. A snapshot replaced by a push, or
// dropped, is ended (View.Done), so that what follows it lets it go too.
type S3 struct {
	bucket *objects.Bucket
	o      S3Options

	mu    sync.Mutex
	repos map[string]*s3Repo
}

var _ Source = (*S3)(nil)

// s3Repo is what is known of one repository (its folder, by key).
type s3Repo struct {
	mu      sync.Mutex
	checked time.Time // when the pointer was last read or tried; zero: never
	etag    string    // the pointer's ETag
	pointer Pointer
	// snap is the repository's snapshot (nil: it has none, or it was
	// dropped): written under mu, read without it by evict, which counts
	// every repository's memory, whether it may drop it or not.
	snap     atomic.Pointer[zipSnapshot]
	lastUsed time.Time
	refresh  chan struct{} // while a revalidation runs; closed when it ends
	loading  int64         // the bytes of the zip being downloaded, while one is
	err      error         // the last revalidation's failure
}

// NewS3 returns a source reading snapshots from bucket.
func NewS3(bucket *objects.Bucket, o S3Options) *S3 {
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
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &S3{bucket: bucket, o: o, repos: map[string]*s3Repo{}}
}

// Default implements Source: a tenant's default repository is named
// reposcope.Default.
func (s *S3) Default() string { return reposcope.Default }

// Open returns the repository's current snapshot; for a tenant without a
// default repository of its own, the deployment's default one.
func (s *S3) Open(ctx context.Context, r reposcope.Ref) (View, error) {
	snap, err := s.current(ctx, r)
	if err != nil || snap != nil {
		return snap, err
	}
	if fallback, ok := s.fallback(r); ok {
		snap, err = s.current(ctx, fallback)
		if err != nil || snap != nil {
			return snap, err
		}
	}
	return nil, ErrNoRepository
}

// fallback is the repository read in place of r when r has no snapshot.
func (s *S3) fallback(r reposcope.Ref) (reposcope.Ref, bool) {
	return reposcope.Fallback(r, s.o.DefaultRepo)
}

// List implements Source: the tenant's default repository (its own, or
// the deployment's) and its named ones, as their pointers say.
func (s *S3) List(ctx context.Context, tenant string) ([]Listing, error) {
	own := reposcope.DefaultOf(tenant)
	objs, err := s.bucket.List(ctx, RepoPrefix(own))
	if err != nil {
		return nil, fmt.Errorf("list the repositories of %s: %w", tenant, err)
	}
	refs := []reposcope.Ref{own}
	for _, o := range objs {
		name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, RepoPrefix(own)), "/"+PointerName)
		if ok && reposcope.Check(name) == nil && name != reposcope.Default {
			refs = append(refs, reposcope.Ref{Tenant: tenant, Name: name})
		}
	}
	var out []Listing
	for _, r := range refs {
		read := r
		p, ok, err := ReadPointer(ctx, s.bucket, r)
		if fallback, fb := s.fallback(r); err == nil && !ok && fb {
			read = fallback
			p, ok, err = ReadPointer(ctx, s.bucket, fallback)
		}
		if err != nil {
			return nil, fmt.Errorf("read the pointer of %s: %w", r, err)
		}
		if ok {
			out = append(out, Listing{Name: r.Name, Commit: p.Commit, Files: p.Files, Read: read})
		}
	}
	slices.SortFunc(out, func(a, b Listing) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// current returns the snapshot of one repository; nil when it has none.
//
// The revalidation (and any download) runs on its own, with its own time
// limit: a caller whose deadline passes returns, and the download goes on
// for the next call, so a large snapshot is not started over by every
// call that times out. Concurrent callers wait for the same one; a caller
// holding a snapshot waits at most revalidateWait and is then served it.
func (s *S3) current(ctx context.Context, ref reposcope.Ref) (View, error) {
	s.mu.Lock()
	r := s.repos[ref.Key()]
	if r == nil {
		r = &s3Repo{}
		s.repos[ref.Key()] = r
	}
	s.mu.Unlock()

	r.mu.Lock()
	now := s.o.Now()
	r.lastUsed = now
	if !r.checked.IsZero() && now.Sub(r.checked) < s.o.Refresh {
		snap, err := r.view(), r.err
		r.mu.Unlock()
		if snap == nil && err != nil {
			return nil, err // failed a moment ago: tried again after Refresh
		}
		return snap, nil
	}
	if r.refresh == nil {
		r.refresh = make(chan struct{})
		go s.revalidate(ref, r, r.etag, r.pointer, r.snap.Load())
	}
	done, held := r.refresh, r.view()
	r.mu.Unlock()

	var wait <-chan time.Time
	if held != nil {
		wait = time.After(revalidateWait)
	}
	select {
	case <-done:
	case <-wait:
		return held, nil
	case <-ctx.Done():
		r.mu.Lock()
		loading := r.loading
		r.mu.Unlock()
		if loading > 0 {
			e := toolerr.New(toolerr.Timeout, "the repository snapshot (%d MB) is still being loaded; try again in a few seconds", loading>>20)
			e.Cause = ctx.Err()
			return nil, e
		}
		return nil, fmt.Errorf("the snapshot pointer of %s: S3 did not answer in time: %w: %w", ref, store.ErrStorage, ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil && r.snap.Load() == nil {
		return nil, r.err
	}
	// On an S3 failure the snapshot in hand is still a consistent one.
	return r.view(), nil
}

// view is the repository's snapshot as a View (nil when it has none).
func (r *s3Repo) view() View {
	if snap := r.snap.Load(); snap != nil {
		return snap
	}
	return nil
}

// memory is what the repository's snapshot takes in memory, with what its
// followers hold for it (0 when it has none).
func (r *s3Repo) memory() int64 {
	if snap := r.snap.Load(); snap != nil {
		return snap.memory()
	}
	return 0
}

// revalidateTimeout bounds one revalidation, download included.
const revalidateTimeout = 5 * time.Minute

// revalidate reads the pointer (conditionally on the ETag in hand),
// downloads the zip it names when that changed, and records the outcome
// in r. A failure while a snapshot is held keeps it, and is logged.
func (s *S3) revalidate(ref reposcope.Ref, r *s3Repo, etag string, cur Pointer, snap *zipSnapshot) {
	ctx, cancel := context.WithTimeout(context.Background(), revalidateTimeout)
	defer cancel()
	newEtag, p, newSnap, err := s.fetch(ctx, ref, r, etag, cur, snap)

	r.mu.Lock()
	r.checked = s.o.Now() // a failure too: S3 is asked again after Refresh, not by every call
	if err == nil {
		if old := r.snap.Load(); old != nil && old != newSnap {
			old.end() // replaced, or its pointer is gone
		}
		r.etag, r.pointer = newEtag, p
		r.snap.Store(newSnap)
	} else if r.snap.Load() != nil {
		s.o.Log.Warn("repository snapshot: revalidation failed; serving the snapshot in hand", "repo", ref.String(), "commit", r.pointer.Commit, "error", err)
	}
	r.err = err
	r.loading = 0
	close(r.refresh)
	r.refresh = nil
	held := r.snap.Load() != nil
	r.mu.Unlock()
	if held {
		s.evict(r)
	}
}

// fetch returns the repository's pointer ETag, pointer and snapshot: the
// ones in hand when the pointer is unchanged, none when there is no
// pointer.
func (s *S3) fetch(ctx context.Context, ref reposcope.Ref, r *s3Repo, etag string, cur Pointer, snap *zipSnapshot) (string, Pointer, *zipSnapshot, error) {
	if snap == nil {
		etag = ""
	}
	raw, newEtag, err := s.bucket.Read(ctx, PointerKey(ref), etag, maxPointerBytes)
	switch {
	case err == nil:
	case errors.Is(err, objects.ErrNotModified):
		return etag, cur, snap, nil
	case errors.Is(err, objects.ErrNotFound):
		return "", Pointer{}, nil, nil
	default:
		return "", Pointer{}, nil, err
	}
	p, err := decodePointer(raw, PointerKey(ref))
	if err != nil {
		return "", Pointer{}, nil, err
	}
	if zip, ok := strings.CutPrefix(p.Key, RepoPrefix(ref)); !ok || !strings.HasSuffix(zip, ".zip") || strings.Contains(zip, "/") || strings.Contains(zip, "..") {
		return "", Pointer{}, nil, fmt.Errorf("%s names %q, which is not a snapshot of %s", PointerKey(ref), p.Key, ref)
	}
	if snap != nil && p.Key == cur.Key && p.Commit == cur.Commit {
		snap.pointer.Store(&p)
		return newEtag, p, snap, nil
	}
	if p.Bytes > s.o.MaxBytes {
		return "", Pointer{}, nil, s.tooLarge(p.Bytes)
	}
	r.mu.Lock()
	r.loading = max(p.ZipBytes, 1)
	r.mu.Unlock()
	data, _, err := s.bucket.Read(ctx, p.Key, "", s.o.MaxBytes)
	if errors.Is(err, objects.ErrTooLarge) {
		return "", Pointer{}, nil, s.tooLarge(p.ZipBytes)
	}
	if err != nil {
		return "", Pointer{}, nil, err
	}
	newSnap, err := openZip(bytes.NewReader(data), int64(len(data)), p.Commit, s.o.Policy)
	if err != nil {
		return "", Pointer{}, nil, err
	}
	newSnap.repo, newSnap.size = ref.Key(), p.memory()
	newSnap.pointer.Store(&p)
	newSnap.onHold = func() { s.evict(r) }
	return newEtag, p, newSnap, nil
}

// evict drops the least recently used snapshots, other than keep's, while
// the snapshots in memory, with what their followers hold for them, take
// more than CacheBytes. Every repository's snapshot counts; those in use
// by another call, or being revalidated, are left alone. A dropped
// snapshot is ended (its followers let it go), and downloaded again on
// its repository's next use.
func (s *S3) evict(keep *s3Repo) {
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.repos))
	s.mu.Unlock()

	type sized struct {
		r     *s3Repo // locked by this call
		bytes int64
	}
	var total int64
	var idle []sized
	for _, r := range all {
		bytes := r.memory()
		total += bytes
		if r == keep || !r.mu.TryLock() {
			continue
		}
		if r.snap.Load() == nil || r.refresh != nil {
			r.mu.Unlock()
			continue
		}
		idle = append(idle, sized{r, bytes})
	}
	slices.SortFunc(idle, func(a, b sized) int { return a.r.lastUsed.Compare(b.r.lastUsed) })
	for _, u := range idle {
		if total > s.o.CacheBytes {
			total -= u.bytes
			u.r.snap.Load().end()
			u.r.snap.Store(nil)
			u.r.etag, u.r.checked, u.r.pointer = "", time.Time{}, Pointer{}
		}
		u.r.mu.Unlock()
	}
}

// memory estimates what a snapshot takes in memory once searched: the zip,
// the files and their trigram filters.
func (p Pointer) memory() int64 { return p.ZipBytes + memoryOf(p.Bytes) }

// tooLarge is the answer for a snapshot of n bytes over the limit this
// function reads: SIZE_LIMIT_EXCEEDED naming the setting, which a tool's
// caller can act on (not an internal error).
func (s *S3) tooLarge(n int64) error {
	return toolerr.New(toolerr.SizeLimitExceeded,
		"the repository's snapshot (%d MB) is over the %d MB this tool's function reads (%s): push a smaller part of the repository, or raise the setting with the function's memory",
		n>>20, s.o.MaxBytes>>20, config.RepoMaxMB.Name())
}
