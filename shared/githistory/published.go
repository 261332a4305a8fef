package githistory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// CopyStorageMB is the ephemeral storage (/tmp) of the deployed functions
// that copy pushed histories (Published): the history tools', and those
// of the file tools whose "ref" reads one. It holds the copies of a few
// repositories as large as git.git's (318 MB) or the Go repository's; a
// history larger than what is left answers SIZE_LIMIT_EXCEEDED.
const CopyStorageMB = 4096

// Published opens the histories pushed with the snapshots of an S3
// source (Push): a view's repository's packs are copied from the bucket
// into a bare repository under Dir, once, and read there with git.
//
// The copy runs only while a call waits for it: the deployed functions
// are frozen between calls, so nothing may run in the background. A call
// whose deadline comes first answers TIMEOUT saying how far the copy is
// (retriable), and the next call goes on from there: a pack cut short is
// resumed by byte range, packs already here are never fetched again, and
// a newer manifest adds only its new packs. However many calls wait for
// a repository, one copy runs; it stops when the last of them leaves.
type Published struct {
	// Bucket opens the bucket on first use.
	Bucket func(context.Context) (*objects.Bucket, error)
	// Dir is where the histories are copied (TOOLSHED_HISTORY_DIR).
	Dir string

	mu    sync.Mutex
	repos map[string]*copied
}

// copied is one repository's history in Dir.
type copied struct {
	mu       sync.Mutex
	seq      int64 // the pointer whose commit repo's HEAD is (Pointer.Seq)
	repo     *Repo // nil until a copy finished
	manifest Manifest
	etag     string    // the manifest's
	job      *copyJob  // the copy running; nil for none
	sizes    sizeGauge // how far the copy is
}

// copyJob is one copy, for one pointer.
type copyJob struct {
	seq     int64
	cancel  context.CancelFunc
	done    chan struct{}
	waiters int
	repo    *Repo
	err     error
}

// sizeGauge is the bytes of the copy here, and of the whole history.
type sizeGauge struct{ have, total atomic.Int64 }

// Open returns the history of the repository the view is a snapshot of,
// with HEAD at the commit the snapshot was made from (Pointer.Git).
func (p *Published) Open(ctx context.Context, view repo.View) (*Repo, error) {
	ref, ptr, ok := repo.PointerOf(view)
	if !ok || ptr.Git == "" {
		return nil, ErrNoHistory
	}
	c := p.repoOf(ref)
	for {
		c.mu.Lock()
		if c.repo != nil && c.seq == ptr.Seq {
			r := c.repo
			c.mu.Unlock()
			return r, nil
		}
		j := c.job
		if j == nil {
			j = p.start(c, ref, ptr)
		}
		j.waiters++
		c.mu.Unlock()
		select {
		case <-j.done:
			c.leave(j)
			// A copy its last waiter stopped, just before this call
			// joined it, or one for another pointer: start again.
			stopped := errors.Is(j.err, context.Canceled) && ctx.Err() == nil
			if !stopped && (j.err != nil || j.seq == ptr.Seq) {
				return j.repo, j.err
			}
		case <-ctx.Done():
			c.leave(j)
			return nil, c.stillCopying(ref)
		}
	}
}

func (p *Published) repoOf(ref reposcope.Ref) *copied {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.repos == nil {
		p.repos = map[string]*copied{}
	}
	c := p.repos[ref.Key()]
	if c == nil {
		c = &copied{}
		p.repos[ref.Key()] = c
	}
	return c
}

// start starts the copy for ptr, with c.mu held; it runs until it ends or
// its last waiter leaves.
func (p *Published) start(c *copied, ref reposcope.Ref, ptr repo.Pointer) *copyJob {
	ctx, cancel := context.WithCancel(context.Background())
	j := &copyJob{seq: ptr.Seq, cancel: cancel, done: make(chan struct{})}
	c.job = j
	go func() {
		defer cancel()
		r, err := p.copy(ctx, c, ref, ptr)
		c.mu.Lock()
		if err == nil {
			if c.repo != nil {
				// The same folder, moved to the newer pointer: keep the
				// Repo the calls hold, and its one git cat-file.
				r = c.repo
			}
			c.repo, c.seq = r, ptr.Seq
		}
		j.repo, j.err, c.job = r, err, nil
		c.mu.Unlock()
		close(j.done)
	}()
	return j
}

// leave is a waiter of j going: the last one stops the copy.
func (c *copied) leave(j *copyJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j.waiters--; j.waiters == 0 {
		j.cancel()
	}
}

// stillCopying is the retriable answer of a call whose deadline came
// before the copy of ref's history ended.
func (c *copied) stillCopying(ref reposcope.Ref) error {
	have, total := c.sizes.have.Load()>>20, c.sizes.total.Load()>>20
	return (&toolerr.Error{Code: toolerr.Timeout, RetryAfter: 1,
		Message: fmt.Sprintf("The history of %s is still being copied: %d of %d MB; call again to go on from there", ref, have, total)}).
		With("repo", ref.Name).With("copiedMB", have).With("totalMB", total)
}

// copy brings the repository's history up to the manifest in the bucket
// and returns it with HEAD at ptr.Git.
func (p *Published) copy(ctx context.Context, c *copied, ref reposcope.Ref, ptr repo.Pointer) (*Repo, error) {
	b, err := p.Bucket(ctx)
	if err != nil {
		return nil, err
	}
	m, err := c.readManifest(ctx, b, ref)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Dir, ref.Tenant+"+"+ref.Name)
	if err := initBare(dir, m); err != nil {
		return nil, fmt.Errorf("make the copy of the history of %s: %w", ref, err)
	}
	if err := c.fetchPacks(ctx, b, ref, dir, m); err != nil {
		return nil, err
	}
	if err := writeRefs(dir, m, ptr.Git); err != nil {
		return nil, fmt.Errorf("write the refs of the history of %s: %w", ref, err)
	}
	r, err := Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if !r.hasCommit(ctx, ptr.Git) {
		return nil, toolerr.New(toolerr.ResourceNotFound,
			"The history pushed for %s does not hold commit %s, which its snapshot was made from: push it with its history (go run ./scripts/snapshot push -tenant %s -repo %s)", ref, ptr.Git, ref.Tenant, ref.Name).
			With("repo", ref.Name).With("commit", ptr.Git)
	}
	if err := writeAttributes(ctx, r, ptr.Git); err != nil {
		return nil, fmt.Errorf("the attributes of the history of %s: %w", ref, err)
	}
	return r, nil
}

// readManifest reads the repository's manifest, or keeps the one in hand
// when it did not change.
func (c *copied) readManifest(ctx context.Context, b *objects.Bucket, ref reposcope.Ref) (Manifest, error) {
	c.mu.Lock()
	etag, held := c.etag, c.manifest
	c.mu.Unlock()
	m, etag, found, err := ReadManifest(ctx, b, ref, etag)
	switch {
	case errors.Is(err, objects.ErrNotModified):
		return held, nil
	case errors.Is(err, ErrCorrupt):
		return Manifest{}, corrupt(ref, err)
	case err != nil:
		return Manifest{}, fmt.Errorf("read the manifest of the history of %s: %w", ref, err)
	case !found:
		return Manifest{}, toolerr.New(toolerr.ResourceNotFound,
			"The snapshot of %s was pushed without its history: push it with its history (go run ./scripts/snapshot push -tenant %s -repo %s)", ref, ref.Tenant, ref.Name).
			With("repo", ref.Name)
	}
	c.mu.Lock()
	c.manifest, c.etag = m, etag
	c.mu.Unlock()
	return m, nil
}

// corrupt is the answer for a history in the bucket that is not as Push
// writes it.
func corrupt(ref reposcope.Ref, err error) error {
	return &toolerr.Error{Code: toolerr.UpstreamError, Cause: err,
		Message: fmt.Sprintf("The history pushed for %s is corrupt (%v): push it again (go run ./scripts/snapshot push -tenant %s -repo %s)", ref, err, ref.Tenant, ref.Name)}
}

// initBare makes dir a bare repository for m's packs, unless it is one.
func initBare(dir string, m Manifest) error {
	if _, err := os.Stat(filepath.Join(dir, "config")); err == nil {
		return nil
	}
	for _, d := range []string{"objects/pack", "objects/info", "refs/heads", "refs/tags", incoming} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if len(strings.TrimPrefix(m.Packs[0].Name, "pack-")) == 64 {
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(m.Tips[0]+"\n"), 0o600); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "config"), config)
}

// writeRefs writes the manifest's shallow commits and refs, and head as
// HEAD.
func writeRefs(dir string, m Manifest, head string) error {
	shallow := slices.Compact(slices.Sorted(slices.Values(m.Shallow)))
	var refs strings.Builder
	refs.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	sorted := slices.SortedFunc(slices.Values(m.Refs), func(a, b PushedRef) int { return strings.Compare(a.Name, b.Name) })
	for _, r := range slices.CompactFunc(sorted, func(a, b PushedRef) bool { return a.Name == b.Name }) {
		fmt.Fprintf(&refs, "%s %s\n", r.Object, r.Name)
		if r.Object != r.Commit {
			fmt.Fprintf(&refs, "^%s\n", r.Commit)
		}
	}
	if len(shallow) == 0 {
		// git reads a repository with a shallow file, even an empty one,
		// as shallow.
		if err := os.Remove(filepath.Join(dir, "shallow")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else if err := writeAtomic(filepath.Join(dir, "shallow"), strings.Join(append(shallow, ""), "\n")); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "packed-refs"), refs.String()); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "HEAD"), head+"\n")
}

// writeAtomic writes a file whole or not at all.
func writeAtomic(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
