package repo

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Local serves one directory to every tenant. Reads go through os.Root, so
// no symbolic link or ".." leaves the directory, and every Open sees the
// directory as it is now. Searchable keeps the files it read and reads a
// file again only when its size or modification time changed.
type Local struct {
	dir  string
	root *os.Root
	fsys fs.StatFS

	mu    sync.Mutex // one Searchable walk at a time
	known map[string]cachedFile
}

var _ Source = (*Local)(nil)

// cachedFile is a file Searchable read, with what tells whether it changed.
type cachedFile struct {
	size int64
	mod  time.Time
	file *File // nil: binary
}

// NewLocal opens dir. Close releases it.
func NewLocal(dir string) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repository directory %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open repository directory: %w", err)
	}
	return &Local{dir: abs, root: root, fsys: root.FS().(fs.StatFS), known: map[string]cachedFile{}}, nil
}

// Close releases the directory.
func (l *Local) Close() error { return l.root.Close() }

// Open returns the directory as it is now, whatever the tenant.
func (l *Local) Open(ctx context.Context, tenant string) (Snapshot, error) {
	return &localSnapshot{StatFS: l.fsys, local: l}, nil
}

type localSnapshot struct {
	fs.StatFS
	local *Local
}

// ReadLink and Lstat let fs.Lstat see symbolic links.
func (s *localSnapshot) ReadLink(name string) (string, error) {
	return fs.ReadLink(s.StatFS, name)
}

func (s *localSnapshot) Lstat(name string) (fs.FileInfo, error) {
	return fs.Lstat(s.StatFS, name)
}

// ReadFile reads through os.Root.
func (s *localSnapshot) ReadFile(name string) ([]byte, error) {
	return fs.ReadFile(s.StatFS, name)
}

func (s *localSnapshot) Commit() string { return headCommit(s.local.dir) }

func (s *localSnapshot) Searchable(ctx context.Context) ([]*File, error) {
	l := s.local
	l.mu.Lock()
	defer l.mu.Unlock()
	var seenMu sync.Mutex
	seen := make(map[string]cachedFile, len(l.known))
	files, err := searchable(ctx, l.fsys, func(c candidate) (*File, error) {
		info, err := c.d.Info()
		if err != nil {
			return nil, err
		}
		// Safe to read without the lock: only this walk writes seen, and
		// l.known is replaced after it.
		if k, ok := l.known[c.path]; ok && k.size == info.Size() && k.mod.Equal(info.ModTime()) {
			seenMu.Lock()
			seen[c.path] = k
			seenMu.Unlock()
			return k.file, nil
		}
		data, err := fs.ReadFile(l.fsys, c.path)
		if err != nil {
			return nil, err
		}
		f := newFile(c.path, data, info.ModTime())
		seenMu.Lock()
		seen[c.path] = cachedFile{size: info.Size(), mod: info.ModTime(), file: f}
		seenMu.Unlock()
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	l.known = seen
	return files, nil
}

// headCommit returns the commit HEAD names in the git checkout at dir, or
// "" when dir is not one (or HEAD cannot be read). It reads .git directly:
// a .git file (worktrees) points at the real git directory, whose
// "commondir" holds shared refs; refs may be loose or packed.
func headCommit(dir string) string {
	gitDir := filepath.Join(dir, ".git")
	if data, err := os.ReadFile(gitDir); err == nil {
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		gitDir = target
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, isRef := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !isRef {
		return ref
	}
	dirs := []string{gitDir}
	if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		dirs = append(dirs, c)
	}
	for _, d := range dirs {
		if data, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(data))
		}
		packed, err := os.ReadFile(filepath.Join(d, "packed-refs"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(packed), "\n") {
			if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
				return id
			}
		}
	}
	return ""
}
