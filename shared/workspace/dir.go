package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/toolshed/toolshed/shared/regularfile"
)

// Dir keeps the workspaces in a local directory, one folder per tenant,
// each opened with os.Root for every operation. Writes of one tenant are
// serialized in the process, so its quota holds exactly.
//
// Writes in progress are staged in the folder Staging beside the
// workspaces, which no tenant's path can reach, and renamed into the
// workspace when complete.
type Dir struct {
	dir   string
	quota Quota

	locks tenantLocks
}

// Staging is the folder of Dir's directory that holds writes in progress.
// No tenant is named like it (a tenant starts with a letter or digit), so
// it lies outside every workspace: no path a tenant gives can name it, and
// every name inside a workspace is a tenant's file. Sweep empties it.
const Staging = ".staging"

// NewDir returns the workspaces under dir (<data dir>/workspace), created
// on first use.
func NewDir(dir string, quota Quota) *Dir {
	return &Dir{dir: dir, quota: quota}
}

// Permissions of what Dir creates: workspaces are private to the server.
const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// openAll returns the root of the folder holding every workspace and the
// staging folder, creating it if needed.
func (d *Dir) openAll() (*os.Root, error) {
	if err := os.MkdirAll(d.dir, dirPerm); err != nil {
		return nil, unavailable("", "cannot create the workspace folder", err)
	}
	all, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, unavailable("", "cannot open the workspace folder", err)
	}
	return all, nil
}

// open returns the root of a tenant's workspace in all, creating it if
// needed.
func open(all *os.Root, tenant string) (*os.Root, error) {
	if _, err := prefix(tenant); err != nil {
		return nil, err
	}
	if err := all.Mkdir(tenant, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, unavailable("", "cannot create the workspace", err)
	}
	root, err := all.OpenRoot(tenant)
	if err != nil {
		return nil, unavailable("", "cannot open the workspace", err)
	}
	return root, nil
}

// Read returns the contents of a tenant's file.
func (d *Dir) Read(_ context.Context, tenant, p string) ([]byte, error) {
	if _, err := resolve(tenant, p); err != nil {
		return nil, err
	}
	all, err := d.openAll()
	if err != nil {
		return nil, err
	}
	defer all.Close()
	root, err := open(all, tenant)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// A named pipe, socket or device put in a workspace (not by file-io)
	// is refused without being opened or waited on.
	f, err := regularfile.Open(root, p)
	if special, ok := errors.AsType[*regularfile.Error](err); ok {
		return nil, &Error{Kind: NotRegular, Path: p, Reason: special.Error()}
	}
	if err != nil {
		return nil, fsError(p, err, NotFound, noSuchFile)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, unavailable(p, "cannot read the file", err)
	case info.IsDir():
		return nil, &Error{Kind: NotFound, Path: p, Reason: folderInTheWay}
	}
	return readFile(p, f, info.Size())
}

// Write replaces (or creates) a tenant's file with data, creating parent
// folders: data goes to a temporary file in Staging, is synced, and is
// renamed over the file. The rename is the commit point: a write whose
// context ended before it (its deadline passed while it waited for the
// tenant's lock, say) is not made and returns the context's error; once
// renamed, the write is made and returns nil.
//
// The parent folders are made through the tenant's root, which refuses a
// symbolic link that leads out of the workspace, so the rename (through
// the root of every workspace, as it crosses from Staging) lands inside it.
func (d *Dir) Write(ctx context.Context, tenant, p string, data []byte) error {
	if _, err := resolve(tenant, p); err != nil {
		return err
	}
	if len(data) > MaxFileBytes {
		return tooLarge(p)
	}
	unlock := d.locks.lock(tenant)
	defer unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	all, err := d.openAll()
	if err != nil {
		return err
	}
	defer all.Close()
	root, err := open(all, tenant)
	if err != nil {
		return err
	}
	defer root.Close()

	stored, err := measure(ctx, root, p)
	if err != nil {
		return err
	}
	if err := stored.allow(d.quota, int64(len(data))); err != nil {
		return err
	}
	dir := path.Dir(p)
	if err := root.MkdirAll(dir, dirPerm); err != nil {
		return fsError(p, err, Conflict, fileInTheWay)
	}
	if err := all.MkdirAll(Staging, dirPerm); err != nil {
		return unavailable(p, "cannot create the staging folder", err)
	}
	tmp := path.Join(Staging, tempName())
	if err := writeSynced(all, tmp, data); err != nil {
		all.Remove(tmp)
		return fsError(p, err, Unavailable, "cannot write the file")
	}
	if err := ctx.Err(); err != nil {
		all.Remove(tmp)
		return err
	}
	if err := all.Rename(tmp, path.Join(tenant, p)); err != nil {
		all.Remove(tmp)
		return fsError(p, err, Conflict, folderInTheWay)
	}
	// Make the rename itself durable.
	if folder, err := root.Open(dir); err == nil {
		folder.Sync()
		folder.Close()
	}
	return nil
}

// measure walks a workspace before a write to p and tallies every regular
// file it holds, until ctx ends. Symbolic links are not followed.
func measure(ctx context.Context, root *os.Root, p string) (tally, error) {
	t := tally{path: p}
	err := fs.WalkDir(root.FS(), ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile (by hand, or by another process)
		}
		if err != nil {
			return err
		}
		t.add(name, info.Size())
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return tally{}, ctx.Err()
	case err != nil:
		return tally{}, unavailable(p, "cannot measure the workspace", err)
	}
	return t, nil
}

// tempName is a fresh name for a temporary file.
func tempName() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails
	return hex.EncodeToString(b) + ".tmp"
}

// Sweep removes what interrupted writes left in Staging and returns how
// many files it removed. The server runs it when it starts, before any
// write. It touches nothing inside a workspace: every file there is a
// tenant's. (Earlier versions staged writes inside each workspace, in
// .toolshed-tmp/ or as .toolshed-<16 hex digits>.tmp beside the file, names
// a tenant could also write; what a crash left there stays, counted as the
// tenant's.)
func (d *Dir) Sweep() (int, error) {
	staging := filepath.Join(d.dir, Staging)
	entries, err := os.ReadDir(staging)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", staging, err)
	}
	if err := os.RemoveAll(staging); err != nil {
		return 0, fmt.Errorf("sweep %s: %w", staging, err)
	}
	return len(entries), nil
}

// writeSynced creates name (it must not exist) with data, on disk.
func writeSynced(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fsError maps an error of an os.Root operation on path p. os.Root's own
// refusal of a path that leaves the root (through a symbolic link) is the
// only error that is not an OS error number. A file or folder in the wrong
// place ("not a directory", "is a directory", "exists") is an error of
// inTheWay kind, for the reason given: what it means for the operation.
func fsError(p string, err error, inTheWay Kind, reason string) error {
	var errno syscall.Errno
	switch {
	case !errors.As(err, &errno):
		return &Error{Kind: Denied, Path: p, Reason: "the path leads outside your workspace", Err: err}
	case errno == syscall.ELOOP:
		return &Error{Kind: Denied, Path: p, Reason: "the path has too many levels of symbolic links", Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Kind: NotFound, Path: p, Reason: noSuchFile, Err: err}
	case errno == syscall.ENOTDIR, errno == syscall.EISDIR, errno == syscall.EEXIST, errno == syscall.ENOTEMPTY:
		return &Error{Kind: inTheWay, Path: p, Reason: reason, Err: err}
	case errno == syscall.ENOSPC, errno == syscall.EDQUOT:
		return unavailable(p, "the disk is full", err)
	}
	return unavailable(p, "the storage failed", err)
}

// tenantLocks serializes each tenant's writes to a Dir, so that a
// quota check and the write it allows are not interleaved with another
// write of the same tenant.
type tenantLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// lock takes the tenant's lock and returns its unlock.
func (t *tenantLocks) lock(tenant string) func() {
	t.mu.Lock()
	if t.locks == nil {
		t.locks = map[string]*sync.Mutex{}
	}
	l, ok := t.locks[tenant]
	if !ok {
		l = &sync.Mutex{}
		t.locks[tenant] = l
	}
	t.mu.Unlock()
	l.Lock()
	return l.Unlock
}
