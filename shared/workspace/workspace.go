// Package workspace keeps each tenant's files in a sandbox of its own, for
// the file-io tool. Locally (Dir) a tenant's files live in
// <data dir>/workspace/<tenant>/, reached only through os.Root, so neither
// a path nor a symbolic link can lead outside it. Deployed (Bucket) they
// live under the S3 prefix workspace/<tenant>/ of the deployment's bucket.
//
// Both backends apply the same rules: paths as package sandboxpath checks
// them, every one of them a name of the tenant's (the server reserves none
// inside a workspace, and never removes a tenant's file); files of at most
// MaxFileBytes; writes that replace a file whole (a temporary file, staged
// outside every workspace, renamed over it locally; one PUT on S3), so a
// reader sees the old or the new file, never a mix; parent folders created
// as needed, and a file where a folder is needed (or the reverse) refused
// on both; and a per-tenant quota of bytes and files, checked before each
// write against every file the tenant stores.
package workspace

import (
	"context"
	"fmt"
	"io"

	"github.com/toolshed/toolshed/shared/sandboxpath"
	"github.com/toolshed/toolshed/shared/tenant"
)

// Files is where the workspaces are: a Dir or a Bucket.
type Files interface {
	Read(ctx context.Context, tenant, path string) ([]byte, error)
	Write(ctx context.Context, tenant, path string, data []byte) error
}

var (
	_ Files = (*Dir)(nil)
	_ Files = (*Bucket)(nil)
)

// MaxFileBytes is the largest file read or written (1 MiB).
const MaxFileBytes = 1 << 20

// Prefix is the part of the bucket that holds the workspaces, one
// "workspace/<tenant>/" each.
const Prefix = "workspace/"

// Kind says why an operation failed.
type Kind int

// The kinds of failure.
const (
	// NotFound: no file at the path (or a folder there).
	NotFound Kind = iota + 1
	// Denied: the path tries to leave the sandbox ('..', absolute, a
	// symbolic link out of it, ...).
	Denied
	// BadPath: the path is malformed (empty segment, too long, ...).
	BadPath
	// Conflict: a file is where a folder must be, or a folder where the
	// file must be.
	Conflict
	// TooLarge: the file or the content is over MaxFileBytes.
	TooLarge
	// OverQuota: the write would pass the tenant's quota.
	OverQuota
	// Unavailable: the storage failed.
	Unavailable
	// NotRegular: the path is a named pipe, a socket or a device, not a
	// file one can read (a local workspace may hold one that something
	// other than file-io put there); Reason says which.
	NotRegular
)

// Error is a failed read or write.
type Error struct {
	Kind   Kind
	Path   string
	Reason string // for the caller
	Err    error  // the cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("workspace %s: %s: %v", e.Path, e.Reason, e.Err)
	}
	return fmt.Sprintf("workspace %s: %s", e.Path, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// prefix returns the key prefix of the sandbox of the tenant owner,
// Prefix + "<owner>/". Tenants are checked again here: one must never name
// another's folder.
func prefix(owner string) (string, error) {
	if err := tenant.Check(owner); err != nil {
		return "", &Error{Kind: Denied, Reason: "the request carries no valid tenant", Err: err}
	}
	return Prefix + owner + "/", nil
}

// resolve checks a path for a tenant and returns the file's key.
func resolve(tenant, p string) (string, error) {
	pre, err := prefix(tenant)
	if err != nil {
		return "", err
	}
	key, err := sandboxpath.Resolve(pre, p)
	if err != nil {
		e := err.(*sandboxpath.Error)
		kind := BadPath
		if e.Escape {
			kind = Denied
		}
		return "", &Error{Kind: kind, Path: p, Reason: "the path " + e.Reason}
	}
	return key, nil
}

// readFile reads the file at p from r, whose size the storage gives: a
// file over MaxFileBytes is refused before it is read, and while it is read
// if it grew meanwhile.
func readFile(p string, r io.Reader, size int64) ([]byte, error) {
	if size > MaxFileBytes {
		return nil, tooLarge(p)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, unavailable(p, "cannot read the file", err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge(p)
	}
	return data, nil
}

// Reasons both backends give: a missing file, and a file or folder in the
// way.
const (
	noSuchFile     = "no such file"
	fileInTheWay   = "a file is where the path needs a folder"
	folderInTheWay = "the path is a folder"
)

func unavailable(p, reason string, err error) error {
	return &Error{Kind: Unavailable, Path: p, Reason: reason, Err: err}
}

func tooLarge(p string) error {
	return &Error{Kind: TooLarge, Path: p, Reason: "files are at most 1 MiB"}
}

// Quota limits one tenant's workspace.
type Quota struct {
	Bytes int64 // total size of the files
	Files int   // number of files
}

// tally is what a tenant stores, as a backend walks or lists it before a
// write to path: its files and their bytes, and the size of the file at
// path if there is one.
type tally struct {
	path   string
	used   Quota
	old    int64 // the size of the file at path
	exists bool  // whether there is one
}

// add counts the file name (relative to the workspace) of size bytes.
func (t *tally) add(name string, size int64) {
	t.used.Files++
	t.used.Bytes += size
	if name == t.path {
		t.old, t.exists = size, true
	}
}

// allow refuses a write of size bytes to t.path that would take the tenant
// past quota. Only what the write adds counts: replacing a file passes the
// file count, and a write no larger than the file it replaces passes the
// byte count, even when the tenant is already past its quota.
func (t *tally) allow(quota Quota, size int64) error {
	switch {
	case !t.exists && t.used.Files >= quota.Files:
		return &Error{Kind: OverQuota, Path: t.path, Reason: fmt.Sprintf(
			"workspace quota exceeded: %d files of %d already stored", t.used.Files, quota.Files)}
	case size > t.old && t.used.Bytes-t.old+size > quota.Bytes:
		return &Error{Kind: OverQuota, Path: t.path, Reason: fmt.Sprintf(
			"workspace quota exceeded: %d of %d bytes stored, this write needs %d more", t.used.Bytes, quota.Bytes, size-t.old)}
	}
	return nil
}
