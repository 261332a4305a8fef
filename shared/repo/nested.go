package repo

import (
	"fmt"
	"os"
	"path/filepath"
)

// apart refuses local repositories one of which lies inside another, or
// two that are one folder: whoever may read the outer one (a key limited
// to it, say) would read the inner one's files through it. Folders are
// compared as the file system sees them (os.SameFile on each folder above
// the inner one, symbolic links resolved), so another spelling of a path,
// a link or another case on a case-insensitive file system does not hide
// one inside another. A folder that cannot be read is left to NewLocal to
// report.
func apart(repos []LocalRepo) error {
	for i, a := range repos {
		for _, b := range repos[i+1:] {
			if inside(b.Dir, a.Dir) {
				return nestedError(b, a)
			}
			if inside(a.Dir, b.Dir) {
				return nestedError(a, b)
			}
		}
	}
	return nil
}

// inside reports whether the folder inner is the folder outer or lies in it.
func inside(inner, outer string) bool {
	o, err := os.Stat(outer)
	if err != nil {
		return false
	}
	d, err := filepath.EvalSymlinks(inner)
	if err != nil {
		return false
	}
	if d, err = filepath.Abs(d); err != nil {
		return false
	}
	for {
		if info, err := os.Stat(d); err == nil && os.SameFile(info, o) {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// nestedError says that inner is outer, or lies inside it, and how to
// serve them instead.
func nestedError(inner, outer LocalRepo) error {
	if inside(outer.Dir, inner.Dir) {
		return fmt.Errorf("repositories %q (%s) and %q (%s) are the same folder: serve it once",
			outer.Name, absolute(outer.Dir), inner.Name, absolute(inner.Dir))
	}
	return fmt.Errorf("repository %q (%s) lies inside repository %q (%s), so whoever may read %q would read %q's files through it: "+
		"serve folders that do not hold one another (%q alone, or the folders inside it side by side)",
		inner.Name, absolute(inner.Dir), outer.Name, absolute(outer.Dir), outer.Name, inner.Name, outer.Name)
}
