package repo

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// TreeEntry is one entry of a commit's tree, as OpenTree takes it: a
// regular file, a symbolic link (whose content is its target) or a
// submodule (fs.ModeDir: an empty folder, as a checkout that has not
// fetched it shows it).
type TreeEntry struct {
	Path string      // slash separated, relative to the root
	Mode fs.FileMode // the permission bits of a file, fs.ModeSymlink, or fs.ModeDir
	Size int64       // the content's length
	ID   string      // what read is given for the content
}

// Tree is the view of a commit's files given as a listing and a reader of
// contents (githistory reads both from git): a snapshot like a zip's,
// whose files are read one at a time when asked, never all at once but by
// Searchable. Every rule of the zip view holds, through the same code
// (policedFS): the policy's deny list on every path and on where every
// symbolic link leads, the secret scan of every content read, and the
// searchable files' rules.
type Tree struct {
	*zipSnapshot
	listing int64 // what the listing takes in memory
}

// treeEntryBytes estimates what an entry of the listing takes besides its
// path and id.
const treeEntryBytes = 96

// OpenTree returns the view of the files entries list, whose contents
// read returns (by TreeEntry.ID), at commit, each file modified at mod,
// under policy (nil: DefaultDeny alone). Folders are those the paths
// imply. An entry whose path is not valid (fs.ValidPath) is left out, as
// are entries below a file or a link.
func OpenTree(entries []TreeEntry, read func(id string) ([]byte, error), commit string, mod time.Time, policy *Policy) (*Tree, error) {
	fsys := &treeFS{read: read, mod: mod, nodes: map[string]*treeNode{".": {name: ".", mode: fs.ModeDir | 0o755}}}
	var listing int64
	for _, e := range entries {
		if fsys.add(e) {
			listing += int64(len(e.Path)+len(e.ID)) + treeEntryBytes
		}
	}
	for _, n := range fsys.nodes {
		slices.SortFunc(n.children, func(a, b *treeNode) int { return strings.Compare(a.name, b.name) })
	}
	z, err := newSnapshot(fsys, commit, policy)
	if err != nil {
		return nil, err
	}
	return &Tree{zipSnapshot: z, listing: listing}, nil
}

// Memory is what the view takes: its listing, and the searchable files
// once Searchable read them.
func (t *Tree) Memory() int64 { return t.listing + t.filesMemory() + t.held.Load() }

// treeFS is a file system over a tree's listing: Lstat, ReadLink and
// ReadDir read the listing alone; Open, ReadFile and Stat follow symbolic
// links inside the tree (resolve, as os.Root does), and a file's content
// is read when it is read, not when it is opened.
type treeFS struct {
	nodes map[string]*treeNode // by path; "." is the root
	read  func(id string) ([]byte, error)
	mod   time.Time
}

var _ interface {
	fs.ReadLinkFS
	fs.ReadFileFS
	fs.ReadDirFS
	fs.StatFS
} = (*treeFS)(nil)

type treeNode struct {
	name     string // the last element of the path
	mode     fs.FileMode
	size     int64
	id       string
	children []*treeNode // a folder's, sorted by name
}

// add adds e and the folders on its way, and reports whether it did.
func (t *treeFS) add(e TreeEntry) bool {
	if !validName(e.Path) || e.Path == "." || t.nodes[e.Path] != nil {
		return false
	}
	parent := t.folder(path.Dir(e.Path))
	if parent == nil {
		return false
	}
	mode := e.Mode
	if mode.IsDir() {
		mode = fs.ModeDir | 0o755
	}
	n := &treeNode{name: path.Base(e.Path), mode: mode, size: e.Size, id: e.ID}
	parent.children = append(parent.children, n)
	t.nodes[e.Path] = n
	return true
}

// folder returns the folder dir, made with the folders on its way when
// missing, or nil when something else than a folder is on the way.
func (t *treeFS) folder(dir string) *treeNode {
	if n := t.nodes[dir]; n != nil {
		if !n.mode.IsDir() {
			return nil
		}
		return n
	}
	parent := t.folder(path.Dir(dir))
	if parent == nil {
		return nil
	}
	n := &treeNode{name: path.Base(dir), mode: fs.ModeDir | 0o755}
	parent.children = append(parent.children, n)
	t.nodes[dir] = n
	return n
}

// lookup returns the entry name itself (no link followed).
func (t *treeFS) lookup(op, name string) (*treeNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := t.nodes[name]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// follow returns the entry name leads to through symbolic links.
func (t *treeFS) follow(op, name string) (*treeNode, string, error) {
	if !fs.ValidPath(name) {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	real, err := resolve(t, name)
	if err != nil {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	n, err := t.lookup(op, real)
	return n, real, err
}

func (t *treeFS) Lstat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("lstat", name)
	if err != nil {
		return nil, err
	}
	return treeInfo{n, t.mod}, nil
}

func (t *treeFS) ReadLink(name string) (string, error) {
	n, err := t.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := t.content("readlink", name, n)
	return string(target), err
}

func (t *treeFS) Stat(name string) (fs.FileInfo, error) {
	n, _, err := t.follow("stat", name)
	if err != nil {
		return nil, err
	}
	return treeInfo{n, t.mod}, nil
}

func (t *treeFS) ReadFile(name string) ([]byte, error) {
	n, _, err := t.follow("read", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("is a folder: %w", fs.ErrInvalid)}
	}
	return t.content("read", name, n)
}

func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, _, err := t.follow("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fmt.Errorf("not a folder: %w", fs.ErrInvalid)}
	}
	return t.entries(n), nil
}

func (t *treeFS) Open(name string) (fs.File, error) {
	n, _, err := t.follow("open", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return &treeDir{info: treeInfo{n, t.mod}, rest: t.entries(n)}, nil
	}
	return &treeFile{fsys: t, name: name, node: n}, nil
}

// entries is the listing of the folder n.
func (t *treeFS) entries(n *treeNode) []fs.DirEntry {
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = fs.FileInfoToDirEntry(treeInfo{c, t.mod})
	}
	return out
}

// content reads the content of n (the entry name).
func (t *treeFS) content(op, name string, n *treeNode) ([]byte, error) {
	data, err := t.read(n.id)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return data, nil
}

// treeInfo is what Stat says of an entry.
type treeInfo struct {
	n   *treeNode
	mod time.Time
}

func (i treeInfo) Name() string       { return i.n.name }
func (i treeInfo) Size() int64        { return i.n.size }
func (i treeInfo) Mode() fs.FileMode  { return i.n.mode }
func (i treeInfo) ModTime() time.Time { return i.mod }
func (i treeInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i treeInfo) Sys() any           { return nil }

// treeFile is a file Open returned: its content is read on the first
// Read.
type treeFile struct {
	fsys *treeFS
	name string
	node *treeNode
	r    *bytes.Reader
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return treeInfo{f.node, f.fsys.mod}, nil }
func (f *treeFile) Close() error               { return nil }

func (f *treeFile) Read(b []byte) (int, error) {
	if f.r == nil {
		data, err := f.fsys.content("read", f.name, f.node)
		if err != nil {
			return 0, err
		}
		f.r = bytes.NewReader(data)
	}
	return f.r.Read(b)
}

// treeDir is a folder Open returned.
type treeDir struct {
	info treeInfo
	rest []fs.DirEntry // not listed yet
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Close() error               { return nil }

func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: fmt.Errorf("is a folder: %w", fs.ErrInvalid)}
}

func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.rest
		d.rest = nil
		return out, nil
	}
	if len(d.rest) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.rest))
	out := d.rest[:k:k]
	d.rest = d.rest[k:]
	return out, nil
}
