package repo

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/regularfile"
	"github.com/toolshed/toolshed/shared/secretscan"
	"github.com/toolshed/toolshed/shared/store"
)

// OpenZip returns the view of the snapshot held in data, a zip written by
// Pack, under policy (nil: DefaultDeny alone). data is kept (not copied)
// and must not change. A snapshot never changes: its Version is always 1
// (the S3 source opens a new view when the pointer moves, and ends the
// one it replaces). A view opened here is never done: nothing replaces it.
func OpenZip(data []byte, commit string, policy *Policy) (View, error) {
	return OpenZipAt(bytes.NewReader(data), int64(len(data)), commit, policy)
}

// OpenZipAt is OpenZip over a zip of size bytes read through r, which
// must not change either: a view that reads only the parts of the zip it
// is asked for (the indexer's batches read theirs from the bucket).
func OpenZipAt(ra io.ReaderAt, size int64, commit string, policy *Policy) (View, error) {
	z, err := openZip(ra, size, commit, policy)
	if err != nil {
		return nil, err
	}
	return z, nil
}

// openZip is OpenZipAt, returning the snapshot itself (for the S3 source,
// which ends it).
func openZip(ra io.ReaderAt, size int64, commit string, policy *Policy) (*zipSnapshot, error) {
	r, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("open snapshot zip: %w", err)
	}
	return newSnapshot(r, commit, policy)
}

// newSnapshot returns the snapshot of the files of fsys (a zip, or a
// commit's tree: OpenTree) under policy (nil: DefaultDeny alone).
func newSnapshot(fsys fs.FS, commit string, policy *Policy) (*zipSnapshot, error) {
	if policy == nil {
		var err error
		if policy, err = NewPolicy(nil, ""); err != nil {
			return nil, err
		}
	}
	return &zipSnapshot{policedFS: policedFS{fsys: fsys, policy: policy}, r: fsys, commit: commit, done: make(chan struct{})}, nil
}

// zipSnapshot is a snapshot's view: a zip's files, or a commit's (Tree).
type zipSnapshot struct {
	policedFS       // what tools read (Open, Stat, ReadDir and the rest): the files through the policy
	r         fs.FS // the files, unpoliced: Searchable's walk
	commit    string
	// repo is the folder of the repository the S3 source read it from
	// (reposcope.Ref.Key; "" for a zip opened alone): see Key. size is
	// what it takes in memory, as its pointer says (Pointer.memory).
	repo string
	size int64
	// pointer is the pointer that made the snapshot current (PointerOf),
	// set by the S3 source, and replaced when the commit is pushed again
	// (the same zip, but perhaps other precise indexes).
	pointer atomic.Pointer[Pointer]

	// done is closed by end, once the source no longer serves the
	// snapshot. held counts the bytes its followers keep for it (Hold);
	// onHold, when set, is called when that grows (the S3 source keeps
	// its memory budget then).
	done   chan struct{}
	ending sync.Once
	held   atomic.Int64
	onHold func()

	mu       sync.Mutex
	files    []*File            // built once by Searchable
	building chan struct{}      // while they are built; closed when done
	stop     context.CancelFunc // stops the build under way (end does)
	err      error              // the last build's failure
}

var _ View = (*zipSnapshot)(nil)

func (z *zipSnapshot) Commit() string { return z.commit }

// Version is always 1: a snapshot never changes.
func (z *zipSnapshot) Version() uint64 { return 1 }

// Changed returns a channel that is never closed for v ≥ 1.
func (z *zipSnapshot) Changed(v uint64) <-chan struct{} { return changedSince(v, 1, nil) }

// Done implements View: closed by end.
func (z *zipSnapshot) Done() <-chan struct{} { return z.done }

// end tells the snapshot's followers that the source no longer serves it,
// and stops the build of its files under way.
func (z *zipSnapshot) end() {
	z.ending.Do(func() {
		close(z.done)
		z.mu.Lock()
		defer z.mu.Unlock()
		if z.stop != nil {
			z.stop()
		}
	})
}

// Hold implements View.
func (z *zipSnapshot) Hold(n int64) {
	z.held.Add(n)
	if n > 0 && z.onHold != nil {
		z.onHold()
	}
}

// memory is what the snapshot takes in memory, with what its followers
// hold for it.
func (z *zipSnapshot) memory() int64 { return z.size + z.held.Load() }

// changedSince is Changed for a view at version now that closes next at its
// next change (nil: never).
func changedSince(v, now uint64, next chan struct{}) <-chan struct{} {
	if v < now {
		c := make(chan struct{})
		close(c)
		return c
	}
	return next
}

// filesMemory is what the searchable files take once read (0 before).
func (z *zipSnapshot) filesMemory() int64 {
	z.mu.Lock()
	defer z.mu.Unlock()
	var n int64
	for _, f := range z.files {
		n += f.memory()
	}
	return n
}

// built reports whether the searchable files are read.
func (z *zipSnapshot) built() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.files != nil
}

// Searchable decompresses the searchable files on first use and keeps
// them while the snapshot lives: a snapshot never changes. The build runs
// on its own: a caller whose context ends returns, and the build goes on
// for the next caller (a large snapshot is not started over by every call
// that times out), until the snapshot is done (errEnded: none starts
// then).
func (z *zipSnapshot) Searchable(ctx context.Context) ([]*File, error) {
	z.mu.Lock()
	if z.files != nil {
		defer z.mu.Unlock()
		return z.files, nil
	}
	if z.building == nil {
		if z.ended() {
			z.mu.Unlock()
			return nil, errEnded
		}
		building, stop := context.WithTimeout(context.Background(), buildTimeout)
		z.building, z.stop = make(chan struct{}), stop
		go z.build(building)
	}
	done := z.building
	z.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the searchable files: %w", ctx.Err())
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.files == nil {
		return nil, z.err
	}
	return z.files, nil
}

// buildTimeout bounds the decompression of a snapshot's searchable files.
const buildTimeout = 5 * time.Minute

// errEnded is Searchable's answer once the snapshot is done before its
// files were read: its source replaced it (a push) or dropped it.
var errEnded = fmt.Errorf("the repository snapshot was replaced or let go while its files were read; call again: %w", store.ErrStorage)

// ended reports whether the snapshot is done.
func (z *zipSnapshot) ended() bool {
	select {
	case <-z.done:
		return true
	default:
		return false
	}
}

// build reads the searchable files for Searchable, until ctx ends: end
// cancels it, so that neither the zip nor what was decompressed of it
// outlives the snapshot.
func (z *zipSnapshot) build(ctx context.Context) {
	files, err := searchable(ctx, z.r, z.policy, func(c candidate) (*File, error) {
		info, err := c.d.Info()
		if err != nil {
			return nil, err
		}
		data, err := fs.ReadFile(z.r, c.path)
		if err != nil {
			return nil, err
		}
		return newFile(c.path, data, info.ModTime(), false), nil
	})
	switch {
	case z.ended():
		files, err = nil, errEnded
	case err == nil && files == nil:
		files = []*File{}
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.files, z.err = files, err
	z.stop()
	close(z.building)
	z.building, z.stop = nil, nil
}

// PackStats says what Pack wrote.
type PackStats struct {
	Files   int      // files in the zip
	Bytes   int64    // their total size, uncompressed
	Skipped []string // paths that were not regular files (symbolic links, folders, devices) or had vanished
	// Refused are the files left out because their content holds a
	// secret, which no view would let a tool read: "path (rule id)".
	Refused []string
}

// ErrTooLarge means the files to pack exceed the size limit.
var ErrTooLarge = errors.New("repository too large")

// Pack writes a zip of the named files of dir (slash paths relative to
// dir) to w, deflated, each with its modification time. Reads go through
// os.Root and symbolic links are never followed: a link is skipped, so
// nothing outside dir is packed. A file whose content holds a secret
// (secretscan.ContentRules) is left out (PackStats.Refused): no tool may
// read it. Pack fails with ErrTooLarge, before writing anything, when the
// files total more than maxBytes.
func Pack(w io.Writer, dir string, paths []string, maxBytes int64) (PackStats, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return PackStats{}, fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()

	type entry struct {
		path string
		info fs.FileInfo
	}
	var st PackStats
	var entries []entry
	for _, p := range paths {
		if !fs.ValidPath(p) || p == "." {
			st.Skipped = append(st.Skipped, p)
			continue
		}
		info, err := root.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || symlinkedParent(root, p) {
			st.Skipped = append(st.Skipped, p)
			continue
		}
		st.Bytes += info.Size()
		entries = append(entries, entry{p, info})
	}
	if st.Bytes > maxBytes {
		return st, fmt.Errorf("%w: %d files, %d bytes, over the limit of %d bytes", ErrTooLarge, len(entries), st.Bytes, maxBytes)
	}

	zw := zip.NewWriter(w)
	for _, e := range entries {
		rule, err := packFile(zw, root, e.path, e.info)
		switch {
		case err != nil:
			return st, err
		case rule != nil:
			st.Refused = append(st.Refused, fmt.Sprintf("%s (rule %s)", e.path, rule.ID))
			st.Bytes -= e.info.Size()
		default:
			st.Files++
		}
	}
	if err := zw.Close(); err != nil {
		return st, fmt.Errorf("finish zip: %w", err)
	}
	return st, nil
}

// symlinkedParent reports whether a folder on the way to p is a symbolic
// link (os.Root would follow it, but it may lead elsewhere in dir).
func symlinkedParent(root *os.Root, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		info, err := root.Lstat(d)
		if err != nil || info.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// packFile adds the file p to the zip, unless its content holds a secret:
// it then returns the rule that found it, and adds nothing. The file is
// streamed twice and never held whole: scanned, then copied, each time
// at most the size Lstat saw (a file that grew since is packed as it was
// listed). The copy is scanned again as it is written, which passes on no
// byte of a secret: a file changed between the two to hold one fails the
// pack.
func packFile(zw *zip.Writer, root *os.Root, p string, info fs.FileInfo) (*secretscan.ContentRule, error) {
	f, err := regularfile.Open(root, p) // Lstat saw a regular file, but it may have been replaced since
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", p, err)
	}
	defer f.Close()
	listed := func() io.Reader { return secretscan.NewReader(io.NewSectionReader(f, 0, info.Size())) }
	_, err = io.Copy(io.Discard, listed())
	if found, ok := errors.AsType[*secretscan.Found](err); ok {
		return found.Rule, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", p, err)
	}
	h := &zip.FileHeader{Name: p, Method: zip.Deflate, Modified: info.ModTime().UTC().Truncate(time.Second)}
	h.SetMode(info.Mode().Perm())
	out, err := zw.CreateHeader(h)
	if err == nil {
		_, err = io.Copy(out, listed())
	}
	if _, ok := errors.AsType[*secretscan.Found](err); ok {
		return nil, fmt.Errorf("pack %s: it changed while it was packed: %w", p, err)
	}
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", p, err)
	}
	return nil, nil
}
