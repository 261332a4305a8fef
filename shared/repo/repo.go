// Package repo gives the repository tools (read_repo_file, read_file,
// grep_codebase, context_search) one view of each served repository. A
// View is an io/fs.FS of the repository's files (slash-separated paths
// relative to its root), the commit it shows, the searchable files held
// warm in memory, and a change feed; every path goes through the
// repository's Policy, so a file the policy refuses (secrets, keys, .git/,
// the server's own data directory) is never listed, searched, indexed or
// read, whichever tool asks.
//
// Two Sources yield views:
//
//   - Local serves one directory through os.Root (no symbolic link or ".."
//     leaves it) to every tenant, as one live view: it follows the working
//     tree through file-system events (fsnotify), so an edit, a new
//     untracked file, a delete or a rename is seen within moments, without
//     a commit; where events are unavailable (networked file systems, a
//     tree with more folders than the kernel lets a process watch, a lost
//     event) it revalidates by stat instead.
//   - S3 serves zip snapshots published with scripts/snapshot:
//     snapshots/<tenant>/<commit>.zip and the pointer
//     snapshots/<tenant>/current.json. The current snapshot is downloaded
//     once and kept in memory; the pointer is revalidated with a
//     conditional GET (ETag) at most every refresh interval.
//
// A tenant without a snapshot of its own reads the default repository when
// one is configured; otherwise Open returns ErrNoRepository.
//
// Searchable says which files search tools read: it honours .gitignore
// files at every level (and .ignore and .rgignore, as ripgrep does), skips
// the excluded folders (node_modules, .git, dist, build, .next, .context)
// at any depth, hidden files and folders, symbolic links, binary files and
// whatever the Policy refuses.
package repo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// ErrNoRepository means the tenant has no snapshot and there is no default
// repository to fall back to.
var ErrNoRepository = errors.New("no repository snapshot")

// View is a repository as the repository tools see it. Paths are slash
// separated and relative to the repository root (fs.ValidPath); any other
// name fails at once with fs.ErrInvalid. Each file's modification time is
// its fs.FileInfo's ModTime. A path the view's Policy refuses, or a
// symbolic link leading to one, fails with a *fs.PathError whose Err is
// the PATH_NOT_ALLOWED *toolerr.Error saying why, and no listing shows it.
type View interface {
	fs.StatFS
	fs.ReadLinkFS
	// Commit identifies the state: the commit id (with a suffix when the
	// working tree had changes), or "" when it is not known.
	Commit() string
	// Searchable returns the files search tools read, in walk order
	// (folder by folder, names sorted). The files and the slice are shared
	// by every caller: never modify them. An unchanged file is the same
	// *File from one call to the next, so a consumer can tell what changed
	// by comparing pointers.
	Searchable(ctx context.Context) ([]*File, error)
	// Version counts the view's changes: it grows whenever Searchable
	// would return something else.
	Version() uint64
	// Changed returns a channel that is closed once the view's version is
	// past v (at once when it already is).
	Changed(v uint64) <-chan struct{}
}

// Key names a view for what is stored about it (its code index, its
// symbol table): a local directory by the hash of its path ("local-"),
// so that one data directory can serve several repositories in turn; a
// snapshot by the hash of its commit ("commit-"); "" for a view that has
// neither.
func Key(v View) string {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:6])
	}
	if d, ok := v.(interface{ Dir() string }); ok {
		return "local-" + hash(d.Dir())
	}
	if c := v.Commit(); c != "" {
		return "commit-" + hash(c)
	}
	return ""
}

// Source yields tenants' views.
type Source interface {
	// Open returns the view of the tenant's repository, the default
	// repository's when the tenant has none, or ErrNoRepository.
	Open(ctx context.Context, tenant string) (View, error)
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

// decodePointer decodes the pointer object key.
func decodePointer(raw []byte, key string) (Pointer, error) {
	var p Pointer
	if err := json.Unmarshal(raw, &p); err != nil {
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

// Shared serves one view to every tenant (the local server's directory).
type Shared struct{ View View }

// Open returns the view, whatever the tenant.
func (s Shared) Open(context.Context, string) (View, error) { return s.View, nil }

// OpenFor opens the tenant's view for a repository tool: a tenant without
// a repository gets RESOURCE_NOT_FOUND saying how to publish one.
func OpenFor(ctx context.Context, src Source, tenant string) (View, error) {
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
