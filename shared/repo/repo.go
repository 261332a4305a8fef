// Package repo gives the repository tools (read_repo_file, read_file,
// grep_codebase, context_search) one view of each served repository. A
// View is an io/fs.FS of the repository's files (slash-separated paths
// relative to its root), the commit it shows, the searchable files held
// warm in memory, and a change feed; every path goes through the
// repository's Policy, so a file the policy refuses (secrets and keys by
// name, .git/, the server's own data directory) is never listed, searched,
// indexed or read, whichever tool asks. A file whose content holds a
// secret (a private key block, a credential: shared/secretscan) is refused
// too, whatever its name: never searchable, and never read (content.go).
//
// Two Sources yield views:
//
//   - Local serves one directory through os.Root (no symbolic link or ".."
//     leaves it; only folders and regular files are opened), as one live view; Shared serves such views, each under
//     its name, to every tenant (the local server's repositories): it follows the working
//     tree through file-system events (fsnotify), so an edit, a new
//     untracked file, a delete or a rename is seen within moments, without
//     a commit; where events are unavailable (networked file systems, a
//     tree with more folders than the kernel lets a process watch, a lost
//     event) it revalidates by stat instead.
//   - S3 serves zip snapshots published with scripts/snapshot, each
//     repository in its folder (reposcope.Ref.Key: snapshots/<tenant>/ for
//     the tenant's default repository, snapshots/<tenant>/<name>/ for the
//     others): <commit>.zip and the pointer current.json. The current
//     snapshot is downloaded once and kept in memory; the pointer is
//     revalidated with a conditional GET (ETag) at most every refresh
//     interval.
//
// A tenant without a default repository of its own reads the deployment's
// default one when one is configured; any other repository it lacks is
// ErrNoRepository. Which repository a call reads is decided once, by
// OpenFor (shared/reposcope): tools never name keys or folders.
//
// Searchable says which files search tools read: it honours .gitignore
// files at every level (and .ignore and .rgignore, as ripgrep does), skips
// the excluded folders (node_modules, .git, dist, build, .next, .context)
// at any depth, hidden files and folders, symbolic links, binary files,
// files holding secrets, paths longer than the file tools take
// (pathpolicy.DefaultMaxPathLen) and whatever the Policy refuses.
package repo

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// ErrNoRepository means the tenant has no such repository (and, for its
// default one, there is no deployment default to fall back to).
var ErrNoRepository = errors.New("no repository snapshot")

// View is a repository as the repository tools see it. Paths are slash
// separated and relative to the repository root (fs.ValidPath); any other
// name fails at once with fs.ErrInvalid. Each file's modification time is
// its fs.FileInfo's ModTime. A path the view's Policy refuses, or a
// symbolic link leading to one, fails with a *fs.PathError whose Err is
// the PATH_NOT_ALLOWED *toolerr.Error saying why, and no listing shows it.
// Reading a file whose content holds a secret fails the same way, naming
// the rule, and no byte of the secret is read; Searchable never holds it
// (Stat and ReadDir, which read no content, still show it).
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
	// Done returns a channel that is closed once the source no longer
	// serves the view: a newer snapshot replaced it, the source dropped it
	// to stay within its memory budget, or it was closed. Whatever follows
	// the view (a symbol table, a code index) stops then and lets go of
	// it, so that its memory goes with it.
	Done() <-chan struct{}
	// Hold tells the view that what follows it keeps n more bytes for it
	// (n fewer when negative): an S3 source counts them with the view's
	// own against its memory budget (S3Options.CacheBytes), and drops the
	// least recently used views to stay within it. A local directory is
	// never dropped, and ignores them.
	Hold(n int64)
}

// retryAfter is how long LatestSearchable waits before it reads a view
// again after a failure.
const retryAfter = 5 * time.Second

// LatestSearchable is how what follows a view (a code index, a symbol
// table) reads it: it returns the view's version, its searchable files at
// that version or a later one, and true. A failure is logged as "<who>:
// reading the repository failed; retrying" and read again after
// retryAfter, until ctx ends; it then returns false.
func LatestSearchable(ctx context.Context, v View, log *slog.Logger, who string) (uint64, []*File, bool) {
	for {
		version := v.Version()
		files, err := v.Searchable(ctx)
		if err == nil {
			return version, files, true
		}
		if ctx.Err() != nil {
			return 0, nil, false
		}
		log.Warn(who+": reading the repository failed; retrying", "error", err)
		select {
		case <-time.After(retryAfter):
		case <-ctx.Done():
			return 0, nil, false
		}
	}
}

// Key names a view for what is stored about it (its code index, its
// symbol table): a local directory by the hash of its path ("local-"),
// so that one data directory can serve several repositories in turn; a
// snapshot by the hash of its commit ("commit-"), in the folder of its
// repository when an S3 source serves it ("acme/web/commit-…", as
// reposcope.Ref.Key names the folder): two repositories at the same
// commit never share what is stored; "" for a view that has neither.
func Key(v View) string {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:6])
	}
	if d, ok := v.(interface{ Dir() string }); ok {
		return "local-" + hash(d.Dir())
	}
	c := v.Commit()
	if c == "" {
		return ""
	}
	if z, ok := v.(*zipSnapshot); ok && z.repo != "" {
		return z.repo + "/commit-" + hash(c)
	}
	return "commit-" + hash(c)
}

// Source yields tenants' views.
type Source interface {
	// Default names the repository a call without "repo" reads.
	Default() string
	// Open returns the view of the repository r, the deployment's default
	// repository's for a tenant without its own default one, or
	// ErrNoRepository.
	Open(ctx context.Context, r reposcope.Ref) (View, error)
	// List returns the tenant's repositories, by name.
	List(ctx context.Context, tenant string) ([]Listing, error)
}

// Listing is what List says of one repository.
type Listing struct {
	Name   string
	Commit string // "" when not known
	Files  int    // the files of the snapshot, or those the tools see in a local directory
	// Read is the repository whose snapshot is read: this one, or the
	// deployment's default one (reposcope.Fallback).
	Read reposcope.Ref
}

// Pointer is the content of a repository's current.json: which zip is its
// current snapshot.
type Pointer struct {
	Commit string `json:"commit"`
	// Git is the git commit the snapshot was made from (HEAD, also of a
	// working tree with changes, whose Commit is "<HEAD>-dirty-<time>"):
	// the history tools' HEAD. Empty for a snapshot not made from a git
	// commit, or pushed before pointers named it.
	Git      string    `json:"git,omitempty"`
	Key      string    `json:"key"`      // the zip's object key
	Files    int       `json:"files"`    // number of files in the zip
	Bytes    int64     `json:"bytes"`    // their total size, uncompressed
	ZipBytes int64     `json:"zipBytes"` // the size of the zip object
	Created  time.Time `json:"created"`  // the clock of the machine that wrote it
	// Seq orders the repository's pointers: each push or rollback writes
	// one larger than the pointer it replaces, with a conditional write
	// (a concurrent push makes it read again), so the indexer tells an
	// older snapshot from a newer one whatever the clocks of the machines
	// that push. It is Created in milliseconds (createdSeq), or one more
	// than the replaced pointer's when the writer's clock is behind that.
	// A pointer written before pointers were numbered has none in its
	// object: it is read as createdSeq, the number it would have had.
	Seq int64 `json:"seq,omitempty"`
	// Precise are the precise indexes pushed with the snapshot (see
	// PreciseIndex), in the order push made them.
	Precise []PreciseIndex `json:"precise,omitempty"`
}

// createdSeq is the number of a pointer by its creation time (Created in
// milliseconds, 0 before 1970): what a push numbers its pointer at least,
// and what a pointer written without a number is numbered when read.
func createdSeq(p Pointer) int64 { return max(p.Created.UnixMilli(), 0) }

// maxPointerBytes bounds what is read of a pointer object.
const maxPointerBytes = 1 << 20

// decodePointer decodes the pointer object key, numbering one written
// without a number (Pointer.Seq).
func decodePointer(raw []byte, key string) (Pointer, error) {
	var p Pointer
	if err := json.Unmarshal(raw, &p); err != nil {
		return Pointer{}, fmt.Errorf("decode %s: %w", key, err)
	}
	if p.Seq == 0 {
		p.Seq = createdSeq(p)
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

// RepoPrefix is the folder of a repository's snapshots:
// snapshots/<tenant>/ for a tenant's default repository,
// snapshots/<tenant>/<name>/ for the others.
func RepoPrefix(r reposcope.Ref) string { return Prefix + r.Key() + "/" }

// PointerKey is the key of a repository's pointer.
func PointerKey(r reposcope.Ref) string { return RepoPrefix(r) + PointerName }

// ZipKey is the key of a repository's snapshot of commit.
func ZipKey(r reposcope.Ref, commit string) string { return RepoPrefix(r) + commit + ".zip" }

// Named is one repository of a Shared source.
type Named struct {
	Name string
	View View
}

// Shared serves the same repositories to every tenant (the local
// server's directories): View, the default one, named Name (""
// reposcope.Default), and Others.
type Shared struct {
	View   View
	Name   string
	Others []Named
}

var _ Source = Shared{}

// Default implements Source.
func (s Shared) Default() string { return cmp.Or(s.Name, reposcope.Default) }

// Open returns the view named r.Name, whatever the tenant.
func (s Shared) Open(_ context.Context, r reposcope.Ref) (View, error) {
	if r.Name == s.Default() {
		return s.View, nil
	}
	for _, n := range s.Others {
		if n.Name == r.Name {
			return n.View, nil
		}
	}
	return nil, ErrNoRepository
}

// List implements Source: every repository, whatever the tenant.
func (s Shared) List(ctx context.Context, tenant string) ([]Listing, error) {
	all := append([]Named{{Name: s.Default(), View: s.View}}, s.Others...)
	out := make([]Listing, len(all))
	for i, n := range all {
		files, err := n.View.Searchable(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the files of %s: %w", n.Name, err)
		}
		out[i] = Listing{Name: n.Name, Commit: n.View.Commit(), Files: len(files), Read: reposcope.Ref{Tenant: tenant, Name: n.Name}}
	}
	slices.SortFunc(out, func(a, b Listing) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// OpenFor opens the repository a repository tool's call reads: the one its
// "repo" argument names (arg), or the source's default one, within the
// repositories the caller may read (reposcope.Resolve). A repository that
// is not there, or not the caller's to read, is RESOURCE_NOT_FOUND; a
// tenant without a default repository is told how to publish one. It
// returns the repository too, as it resolved (what a listing's cursors
// are tied to: shared/cursor).
func OpenFor(ctx context.Context, src Source, call toolkit.Call, arg string) (View, reposcope.Ref, error) {
	r, err := reposcope.Resolve(call.Tenant, call.Repos, arg, src.Default())
	if err != nil {
		return nil, reposcope.Ref{}, err
	}
	view, err := src.Open(ctx, r)
	switch {
	case errors.Is(err, ErrNoRepository) && r.Name == reposcope.Default:
		return nil, r, toolerr.New(toolerr.ResourceNotFound,
			"No repository for tenant %s: publish one with `go run ./scripts/snapshot push -tenant %s` from its checkout (or deploy with a default repository)",
			r.Tenant, r.Tenant).With("tenant", r.Tenant)
	case errors.Is(err, ErrNoRepository):
		return nil, r, reposcope.NotFound(r.Name)
	case err != nil:
		return nil, r, fmt.Errorf("open repository %s: %w", r, err)
	}
	return view, r, nil
}

// LocalRepo is one repository of the local server: its name and folder.
type LocalRepo struct{ Name, Dir string }

// LocalRepos reads the local server's repositories from specs, each
// "name=path" or a path (named after its folder); the first is the
// default one. Without specs, the working directory is served. One
// repository given as a path whose folder's name cannot be a name is
// named reposcope.Default. Names must differ, only the first may be
// reposcope.Default (that name means the caller's default repository), and
// folders must not hold one another (apart).
func LocalRepos(specs []string) ([]LocalRepo, error) {
	if len(specs) == 0 {
		specs = []string{"."}
	}
	out := make([]LocalRepo, 0, len(specs))
	for _, spec := range specs {
		name, path, named := strings.Cut(spec, "=")
		if !named || reposcope.Check(name) != nil { // a path, which may hold '='
			name, path = filepath.Base(absolute(spec)), spec
			if len(specs) == 1 && reposcope.Check(name) != nil {
				name = reposcope.Default
			}
		}
		if err := reposcope.Check(name); err != nil {
			return nil, fmt.Errorf("repository %q: %w; name it: name=%s", spec, err, path)
		}
		if slices.ContainsFunc(out, func(r LocalRepo) bool { return r.Name == name }) {
			return nil, fmt.Errorf("two repositories are named %q: name them apart with name=path", name)
		}
		if name == reposcope.Default && len(out) > 0 {
			return nil, fmt.Errorf("repository %q: %q means the default repository (the first): name it otherwise with name=%s", spec, name, path)
		}
		out = append(out, LocalRepo{Name: name, Dir: path})
	}
	if err := apart(out); err != nil {
		return nil, err
	}
	return out, nil
}

// absolute is dir as an absolute path, or as given if it has none.
func absolute(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
