package repo

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/toolshed/toolshed/shared/regularfile"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// rootFS is an os.Root's file system as the local view reads it: root.FS()
// (Stat, Lstat, ReadLink), except that Open and ReadFile open only folders
// and regular files (regularfile.Open). A named pipe, a socket or a device
// in a working tree is refused at once: opening a pipe for reading waits
// for a writer, holding an OS thread for as long, and a device may do
// anything.
type rootFS struct {
	osFS // root.FS()
	root *os.Root
}

var _ fs.ReadFileFS = rootFS{}

// Open opens name (a folder or a regular file) for reading. fs.ReadDir and
// fs.WalkDir list folders through it too.
func (r rootFS) Open(name string) (fs.File, error) {
	f, err := r.open("open", name)
	if err != nil {
		return nil, err // not a nil *os.File in an fs.File
	}
	return f, nil
}

// ReadFile reads the regular file name.
func (r rootFS) ReadFile(name string) ([]byte, error) {
	f, err := r.open("readfile", name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// open opens name through regularfile.Open, whose refusal of a special
// file it words as the repository tools answer it: an *fs.PathError
// holding INVALID_INPUT.
func (r rootFS) open(op, name string) (*os.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	f, err := regularfile.Open(r.root, name)
	if special, ok := errors.AsType[*regularfile.Error](err); ok {
		err := toolerr.New(toolerr.InvalidInput, "%s: the repository tools read only regular files", special).With("path", name)
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return f, err
}

// readRegular reads the regular file at path (of the file system, outside
// any view) without waiting on one that is not.
func readRegular(path string) ([]byte, error) {
	f, err := regularfile.Open(regularfile.OS, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// readAll reads f to its end, in a buffer of its size.
func readAll(f *os.File) ([]byte, error) {
	var buf bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		buf.Grow(int(info.Size()) + 1) // +1: the read that finds the end
	}
	_, err := io.Copy(&buf, f)
	return buf.Bytes(), err
}
