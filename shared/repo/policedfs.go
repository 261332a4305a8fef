package repo

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// policedFS is a file system as a Policy lets the repository tools see
// it; both views (the local directory and the zip snapshot) read through
// one.
//
//   - Every name is checked before any work on the file system: one that
//     is not valid (see validName) fails with fs.ErrInvalid; one the policy
//     refuses with its PATH_NOT_ALLOWED *toolerr.Error; both in a
//     *fs.PathError.
//   - Symbolic links (on a file system that has them, an fs.ReadLinkFS)
//     are followed as os.Root follows them, and the policy applies to the
//     path a link leads to as well as to the link: a link to a refused
//     path, out of the root, round in a loop or to nothing is refused
//     (PATH_NOT_ALLOWED) by every operation, Lstat and ReadLink included.
//   - Every listing (ReadDir, and ReadDir on a folder Open returned)
//     leaves out the entries the operations above refuse.
//   - What ReadFile and the files Open returns read is checked for
//     secrets (content.go): a file that holds one fails to read with
//     PATH_NOT_ALLOWED.
type policedFS struct {
	fsys   fs.FS
	policy *Policy
	// noLinks, when set, reports cheaply that a name passes no symbolic
	// link (false: it may; follow resolves it element by element).
	noLinks func(name string) bool
}

var _ interface {
	fs.StatFS
	fs.ReadLinkFS
	fs.ReadFileFS
	fs.ReadDirFS
} = policedFS{}

// Policy is the view's policy: what reads paths that are not in the
// view (a file of an older commit, a diff's) checks them with it.
func (p policedFS) Policy() *Policy { return p.policy }

// CheckContent returns nil when data, the content of the file name as
// read from elsewhere than the view (an older commit, a diff), holds no
// secret, or the PATH_NOT_ALLOWED refusal that names the rule, as a read
// through the view would fail.
func (p policedFS) CheckContent(name string, data []byte) error {
	if err := checkContent(name, data); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	return nil
}

func (p policedFS) Open(name string) (fs.File, error) {
	real, err := p.check("open", name)
	if err != nil {
		return nil, err
	}
	f, err := p.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	d, ok := f.(fs.ReadDirFile) // os.Root's files all are; zip's folders only
	if !ok {
		return checked(name, f), nil
	}
	info, err := d.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.IsDir() {
		return checked(name, f), nil
	}
	return &policedDir{ReadDirFile: d, fsys: p, name: name, real: real}, nil
}

func (p policedFS) Stat(name string) (fs.FileInfo, error) {
	if _, err := p.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(p.fsys, name)
}

// Lstat describes name itself, a symbolic link included, once the path it
// leads to is checked.
func (p policedFS) Lstat(name string) (fs.FileInfo, error) {
	if _, err := p.check("lstat", name); err != nil {
		return nil, err
	}
	return fs.Lstat(p.fsys, name)
}

// ReadLink returns the target of the symbolic link name, once the path it
// leads to is checked.
func (p policedFS) ReadLink(name string) (string, error) {
	if _, err := p.check("readlink", name); err != nil {
		return "", err
	}
	links, ok := p.fsys.(fs.ReadLinkFS)
	if !ok { // no symbolic links here: name is something else, or nothing
		if _, err := fs.Stat(p.fsys, name); err != nil {
			return "", err
		}
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return links.ReadLink(name)
}

func (p policedFS) ReadFile(name string) ([]byte, error) {
	if _, err := p.check("open", name); err != nil {
		return nil, err
	}
	data, err := fs.ReadFile(p.fsys, name)
	if err != nil {
		return nil, err
	}
	if err := checkContent(name, data); err != nil {
		return nil, err
	}
	return data, nil
}

// ReadDir lists a folder, sorted by name, without what the view refuses.
func (p policedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	real, err := p.check("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(p.fsys, name)
	return p.visible(name, real, entries), err
}

// check refuses, as fs functions fail, a name the view does not serve
// (see policedFS), and returns the path it leads to.
func (p policedFS) check(op, name string) (string, error) {
	if !validName(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if err := p.policy.Check(name); err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	real, err := p.follow(name)
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return real, nil
}

// follow returns the path the valid name leads to through symbolic links,
// or why the view does not serve it.
func (p policedFS) follow(name string) (string, error) {
	links, ok := p.fsys.(fs.ReadLinkFS)
	if !ok || (p.noLinks != nil && p.noLinks(name)) {
		return name, nil // no symbolic link on the way
	}
	real, err := resolve(links, name)
	if err != nil {
		return "", err
	}
	if real != name {
		if why := p.policy.refusal(real); why != "" {
			return "", denied(name, "it leads through a symbolic link to %s, which is refused: %s", real, why)
		}
	}
	return real, nil
}

// visible returns, in place, the entries of the folder dir (real: the
// folder it leads to, a path without links) that the view serves.
func (p policedFS) visible(dir, real string, entries []fs.DirEntry) []fs.DirEntry {
	out := entries[:0]
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		at := name // where the entry is
		if real != dir {
			at = path.Join(real, e.Name())
		}
		switch {
		case !validName(name), p.policy.refusal(name) != "", at != name && p.policy.refusal(at) != "":
			continue
		case e.Type()&fs.ModeSymlink != 0:
			if _, err := p.follow(at); err != nil {
				continue // leads to a refused path, or nowhere
			}
		}
		out = append(out, e)
	}
	return out
}

// validName reports whether the view serves name at all: a valid fs path
// (fs.ValidPath: UTF-8, relative, clean, not empty) without a NUL byte,
// which no file system allows in a name.
func validName(name string) bool {
	return fs.ValidPath(name) && strings.IndexByte(name, 0) < 0
}

// policedDir is a folder Open returned: its listing leaves out what the
// view refuses.
type policedDir struct {
	fs.ReadDirFile
	fsys policedFS
	name string // as opened
	real string // the folder name leads to
}

var _ fs.ReadDirFile = (*policedDir)(nil)

func (d *policedDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		entries, err := d.ReadDirFile.ReadDir(n)
		entries = d.fsys.visible(d.name, d.real, entries)
		// A batch the view refused whole is not the end of the folder.
		if len(entries) > 0 || err != nil || n <= 0 {
			return entries, err
		}
	}
}

// maxLinks bounds the symbolic links one path may go through (as Linux
// does).
const maxLinks = 40

// resolve returns the path name leads to in fsys, following symbolic links
// in every element as os.Root does: relative links, inside the root. A
// link out of the root, round in a loop or to nothing is refused
// (PATH_NOT_ALLOWED, as the file tools refused any link before they read
// through a view).
func resolve(fsys fs.ReadLinkFS, name string) (string, error) {
	done, rest := ".", name // done: resolved, a path without links
	for links := 0; rest != ""; {
		var elem string
		elem, rest, _ = strings.Cut(rest, "/")
		switch elem {
		case "", ".":
			continue
		case "..":
			if done == "." {
				return "", leadsOut(name)
			}
			done = path.Dir(done)
			continue
		}
		next := path.Join(done, elem)
		info, err := fsys.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && links > 0 {
			return "", denied(name, "it leads through a symbolic link to nothing")
		}
		if err != nil {
			return "", unwrapPath(err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", denied(name, "its symbolic links go round in a loop")
		}
		target, err := fsys.ReadLink(next)
		if err != nil {
			return "", unwrapPath(err)
		}
		if path.IsAbs(target) {
			return "", leadsOut(name)
		}
		if rest != "" {
			target += "/" + rest // not path.Join: ".." after a link is resolved from where the link leads
		}
		rest = target
	}
	return done, nil
}

// leadsOut is the refusal of a name whose links lead out of the root.
func leadsOut(name string) error {
	return denied(name, "it leads through a symbolic link out of the repository")
}

// unwrapPath is the cause of a *fs.PathError (which names a path of
// resolve's own), or err.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
