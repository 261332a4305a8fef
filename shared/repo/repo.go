// Package repo gives each tenant a read-only repository: a Snapshot is an
// io/fs.FS of the repository's files (slash-separated paths relative to its
// root), the commit it was taken from, and each file's modification time
// (fs.Stat(snap, name).ModTime()).
//
// Two Sources yield snapshots:
//
//   - Local serves one directory through os.Root, so no symbolic link or
//     ".." leaves it. Every Open sees the directory as it is now.
//   - S3 serves zip snapshots published with scripts/snapshot:
//     snapshots/<tenant>/<commit>.zip and the pointer
//     snapshots/<tenant>/current.json. The current snapshot is downloaded
//     once and kept in memory; the pointer is revalidated with a
//     conditional GET (ETag) at most every refresh interval.
//
// A tenant without a snapshot of its own reads the default repository when
// one is configured; otherwise Open returns ErrNoRepository.
//
// Searchable says which files of a snapshot search tools read: it honours
// .gitignore files at every level (and .ignore and .rgignore, as ripgrep
// does), skips the excluded folders
// (node_modules, .git, dist, build, .next, .context) at any depth, hidden
// files and folders, symbolic links and binary files, like ripgrep does
// by default.
package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// ErrNoRepository means the tenant has no snapshot and there is no default
// repository to fall back to.
var ErrNoRepository = errors.New("no repository snapshot")

// Snapshot is one read-only state of a repository. Paths are slash
// separated and relative to the repository root (fs.ValidPath). Each
// file's modification time is its fs.FileInfo's ModTime.
type Snapshot interface {
	fs.StatFS
	// Commit identifies the state: the commit id (with a suffix when the
	// working tree had changes), or "" when it is not known.
	Commit() string
	// Searchable returns the files search tools read, in path order; see
	// the package function Searchable.
	Searchable(ctx context.Context) ([]*File, error)
}

// Source yields tenants' snapshots.
type Source interface {
	// Open returns the tenant's current snapshot, the default repository's
	// when the tenant has none, or ErrNoRepository.
	Open(ctx context.Context, tenant string) (Snapshot, error)
}

// Pointer is the content of snapshots/<tenant>/current.json: which zip is
// the tenant's current snapshot.
type Pointer struct {
	Commit   string    `json:"commit"`
	Key      string    `json:"key"`      // the zip's object key
	Files    int       `json:"files"`    // number of files in the zip
	Bytes    int64     `json:"bytes"`    // their total size, uncompressed
	ZipBytes int64     `json:"zipBytes"` // the size of the zip object
	Created  time.Time `json:"created"`
}

// maxPointerBytes bounds what is read of a pointer object.
const maxPointerBytes = 1 << 20

// decodePointer reads and closes the body of the pointer object key.
func decodePointer(body io.ReadCloser, key string) (Pointer, error) {
	defer body.Close()
	var p Pointer
	if err := json.NewDecoder(io.LimitReader(body, maxPointerBytes)).Decode(&p); err != nil {
		return Pointer{}, fmt.Errorf("decode %s: %w", key, err)
	}
	return p, nil
}

// Object keys under the bucket.
const (
	// Prefix is where every snapshot lives.
	Prefix = "snapshots/"
	// PointerName is the pointer object inside a tenant's folder.
	PointerName = "current.json"
)

// TenantPrefix is the folder of a tenant's snapshots: snapshots/<tenant>/.
func TenantPrefix(tenant string) string { return Prefix + tenant + "/" }

// PointerKey is the key of a tenant's pointer.
func PointerKey(tenant string) string { return TenantPrefix(tenant) + PointerName }

// ZipKey is the key of a tenant's snapshot of commit.
func ZipKey(tenant, commit string) string { return TenantPrefix(tenant) + commit + ".zip" }

// OpenFor opens the tenant's snapshot for a repository tool: a tenant
// without one gets RESOURCE_NOT_FOUND saying how to publish one.
func OpenFor(ctx context.Context, src Source, tenant string) (Snapshot, error) {
	snap, err := src.Open(ctx, tenant)
	if errors.Is(err, ErrNoRepository) {
		return nil, toolerr.New(toolerr.ResourceNotFound,
			"No repository for tenant %s: publish one with `go run ./scripts/snapshot push -tenant %s` from its checkout (or deploy with a default repository)",
			tenant, tenant).With("tenant", tenant)
	}
	if err != nil {
		return nil, fmt.Errorf("open repository of %s: %w", tenant, err)
	}
	return snap, nil
}
