package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Snapshots reads published repository snapshots from the bucket
// (snapshots/<key>/<commit>.zip, key a repository's folder: see shared/repo
// and shared/reposcope) with the files the
// repository tools see: the deployment's policy, ignore rules, no binary
// files. It reads a zip by ranges, as its files are asked for (rangedZip):
// a batch reads the zip's directory and its own files, whatever the size
// of the snapshot. It keeps the last zip it opened: the batches of one
// build, handled one after another by a warm function, read the same one.
type Snapshots struct {
	Bucket   *objects.Bucket
	Policy   *repo.Policy // nil: repo's default deny list
	MaxBytes int64        // the largest zip read

	mu   sync.Mutex
	key  string
	view repo.View
}

var _ SnapshotReader = (*Snapshots)(nil)

// Snapshot is a repository's current snapshot as the indexer plans it:
// its commit and searchable files, and Seq, the number of the pointer
// that made it current (repo.Pointer.Seq, which a pointer written
// without one has too), which orders it among the repository's snapshots.
type Snapshot struct {
	contextindex.Snapshot
	Seq int64
}

// Current returns the current snapshot of the repository whose folder is
// key: its commit, its searchable files, with their content, and its
// number. A repository without one gets repo.ErrNoRepository.
func (s *Snapshots) Current(ctx context.Context, key string) (Snapshot, error) {
	r, err := refOf(key)
	if err != nil {
		return Snapshot{}, err
	}
	p, ok, err := repo.ReadPointer(ctx, s.Bucket, r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the snapshot pointer of %s: %w", key, err)
	}
	if !ok {
		return Snapshot{}, repo.ErrNoRepository
	}
	view, err := s.open(ctx, r, p.Commit)
	if err != nil {
		return Snapshot{}, err
	}
	files, err := view.Searchable(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("list the searchable files of %s: %w", key, err)
	}
	out := Snapshot{Snapshot: contextindex.Snapshot{FS: view, Commit: p.Commit, Files: make([]contextindex.File, len(files))}, Seq: p.Seq}
	for i, f := range files {
		out.Files[i] = contextindex.File{Path: f.Path, Content: f.Content(), ModTime: f.ModTime}
	}
	return out, nil
}

// Files reads some files of the repository's snapshot of a commit, as
// Current lists them (a file that has become binary is left out).
func (s *Snapshots) Files(ctx context.Context, key, commit string, paths []string) ([]contextindex.File, error) {
	r, err := refOf(key)
	if err != nil {
		return nil, err
	}
	view, err := s.open(ctx, r, commit)
	if err != nil {
		return nil, err
	}
	out := make([]contextindex.File, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := repo.ReadSearchable(view, p)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s at %s: %w", p, key, commit, err)
		}
		if f != nil {
			out = append(out, contextindex.File{Path: f.Path, Content: f.Content(), ModTime: f.ModTime})
		}
	}
	return out, nil
}

// View opens the repository's snapshot of a commit, as the repository
// tools read it (the zip read by ranges).
func (s *Snapshots) View(ctx context.Context, key, commit string) (repo.View, error) {
	r, err := refOf(key)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, r, commit)
}

// refOf is the repository whose folder is key.
func refOf(key string) (reposcope.Ref, error) {
	r, ok := reposcope.ParseKey(key)
	if !ok {
		return reposcope.Ref{}, reposcope.CheckKey(key)
	}
	return r, nil
}

// open returns the view of the repository's snapshot of commit,
// downloading its zip unless it is the one in hand.
func (s *Snapshots) open(ctx context.Context, r reposcope.Ref, commit string) (repo.View, error) {
	if commit == "" || path.Base(commit) != commit || commit == ".." {
		return nil, fmt.Errorf("snapshot commit %q is not one key segment", commit)
	}
	key := repo.ZipKey(r, commit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == key {
		return s.view, nil
	}
	s.key, s.view = "", nil // let the old one go before the new one comes
	info, err := s.Bucket.Head(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", key, err)
	}
	if info.Size > s.MaxBytes {
		return nil, fmt.Errorf("snapshot %s is %d bytes, over the limit of %d", key, info.Size, s.MaxBytes)
	}
	view, err := repo.OpenZipAt(&rangedZip{bucket: s.Bucket, key: key, etag: info.ETag, size: info.Size}, info.Size, commit, s.Policy)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", key, err)
	}
	s.key, s.view = key, view
	return view, nil
}

// Reading a zip by ranges: blocks of zipBlock bytes, the last
// zipBlocksKept of them kept (the zip reader reads the directory in small
// pieces, and a batch's files lie side by side: the zip holds them in
// path order, as batches do).
const (
	zipBlock      = 4 << 20
	zipBlocksKept = 16
	blockTimeout  = time.Minute
)

// rangedZip is an io.ReaderAt over one version of a zip in the bucket
// (its ETag), reading it in blocks, as they are asked for, with ranged
// GETs. io.ReaderAt takes no context: each GET is bounded by
// blockTimeout instead. The reads are a batch's, in the background, not
// a call's: each attempt may wait for S3's first byte as long as a
// patient call does (awscall.Patiently), so a busy S3 (or emulator)
// slows a batch rather than failing it and sending it round the queue
// again.
type rangedZip struct {
	bucket     *objects.Bucket
	key, etag  string
	size       int64
	mu         sync.Mutex
	blocks     map[int64][]byte // by block number
	recent     []int64          // the blocks kept, least recently used first
	fetchCount int              // blocks read from the bucket (for tests)
}

// ReadAt implements io.ReaderAt.
func (z *rangedZip) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) && off+int64(n) < z.size {
		at := off + int64(n)
		block, err := z.block(at / zipBlock)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], block[at%zipBlock:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns block i, read from the bucket unless it is kept.
func (z *rangedZip) block(i int64) ([]byte, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.blocks == nil {
		z.blocks = map[int64][]byte{}
	}
	if b, ok := z.blocks[i]; ok {
		z.recent = append(slices.DeleteFunc(z.recent, func(j int64) bool { return j == i }), i)
		return b, nil
	}
	start := i * zipBlock
	ctx, cancel := context.WithTimeout(awscall.Patiently(context.Background()), blockTimeout)
	defer cancel()
	b, err := z.bucket.ReadRange(ctx, z.key, z.etag, start, min(zipBlock, z.size-start))
	if err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", z.key, start, err)
	}
	z.fetchCount++
	if len(z.recent) == zipBlocksKept {
		delete(z.blocks, z.recent[0])
		z.recent = z.recent[1:]
	}
	z.blocks[i] = b
	z.recent = append(z.recent, i)
	return b, nil
}
