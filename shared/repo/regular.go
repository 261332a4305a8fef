package repo

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// rootFS is an os.Root's file system as the local view reads it: root.FS()
// (Stat, Lstat, ReadLink), except that Open and ReadFile open only folders
// and regular files. A named pipe, a socket or a device in a working tree
// is refused at once: opening a pipe for reading waits for a writer,
// holding an OS thread for as long, and a device may do anything.
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

func (r rootFS) open(op, name string) (*os.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return openRegular(name, r.root.Stat, r.root.OpenFile)
}

// openRegular opens name for reading through stat and open (os.Stat and
// os.OpenFile, or an os.Root's) when it is a folder or a regular file, and
// refuses anything else without waiting: stat first, so that a device is
// never opened; then open non-blocking, so that a named pipe put there
// since opens at once, and check again what was opened.
func openRegular(name string, stat func(string) (fs.FileInfo, error),
	open func(string, int, fs.FileMode) (*os.File, error)) (*os.File, error) {
	info, err := stat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(name, info); err != nil {
		return nil, err
	}
	f, err := open(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err == nil {
		err = regular(name, info)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readRegular reads the regular file at path (of the file system, outside
// any view) without waiting on one that is not.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path, os.Stat, os.OpenFile)
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

// regular refuses, as an *fs.PathError holding INVALID_INPUT, what is
// neither a folder nor a regular file.
func regular(name string, info fs.FileInfo) error {
	mode := info.Mode()
	if mode.IsRegular() || mode.IsDir() {
		return nil
	}
	kind := "a special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	}
	err := toolerr.New(toolerr.InvalidInput, "%s is not a regular file but %s: the repository tools read only regular files", name, kind).
		With("path", name)
	return &fs.PathError{Op: "open", Path: name, Err: err}
}
