package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// PathReader reads a view's searchable files one path at a time, by the
// rules Searchable applies to the whole view (see searchable), read for
// that path alone: for an answer that shows a few files of a large
// snapshot, whose Searchable decompresses every file first (seconds for
// the Go tree). It reads through the view, so the view's policy and
// secret checks hold as for any other read. The ignore rules of a folder
// are read once per PathReader. It is not safe for concurrent use.
type PathReader struct {
	view  View
	rules map[string]*ignoreRules // the rules in force in a folder, by folder
}

// NewPathReader returns a PathReader of v.
func NewPathReader(v View) *PathReader {
	return &PathReader{view: v, rules: map[string]*ignoreRules{}}
}

// File returns the file at p (slash separated, relative to the view's
// root) as Searchable holds it, or nil when Searchable does not list it:
// a path search skips on the way (hidden, an excluded folder, ignored,
// refused by the policy, too long), a symbolic link or something else
// than a folder on the way, not a regular file, binary, or holding a
// secret. An error is a failure to read the view.
func (r *PathReader) File(p string) (*File, error) {
	if p == "." || !fs.ValidPath(p) || len(p) > pathpolicy.DefaultMaxPathLen {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	dir := "."
	for i, name := range parts {
		isDir := i < len(parts)-1
		if strings.HasPrefix(name, ".") || isDir && slices.Contains(ExcludedDirs, name) ||
			r.rulesIn(dir).ignored(parts[:i+1], isDir) {
			return nil, nil
		}
		at := path.Join(dir, name)
		info, err := fs.Lstat(r.view, at)
		if err != nil {
			return nil, notShown(p, err)
		}
		if isDir && !info.IsDir() || !isDir && !info.Mode().IsRegular() {
			return nil, nil
		}
		dir = at
	}
	return r.read(p)
}

// read reads the file at p, found searchable by its path.
func (r *PathReader) read(p string) (*File, error) {
	info, err := fs.Stat(r.view, p)
	if err != nil {
		return nil, notShown(p, err)
	}
	data, err := fs.ReadFile(r.view, p)
	if err != nil {
		return nil, notShown(p, err)
	}
	return newFile(p, data, info.ModTime(), false), nil
}

// rulesIn returns the ignore rules in force in dir, a folder the walk
// would enter.
func (r *PathReader) rulesIn(dir string) *ignoreRules {
	if rules, ok := r.rules[dir]; ok {
		return rules
	}
	inherited := &ignoreRules{}
	if dir != "." {
		inherited = r.rulesIn(path.Dir(dir))
	}
	rules := readIgnore(r.view, dir, inherited)
	r.rules[dir] = rules
	return rules
}

// notShown is nil for an error that says the view does not show p
// (missing, not a valid name, refused by the policy or for a secret in
// it), and otherwise err with context.
func notShown(p string, err error) error {
	var te *toolerr.Error
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.As(err, &te) && te.Code == toolerr.PathNotAllowed {
		return nil
	}
	return fmt.Errorf("read %s: %w", p, err)
}
