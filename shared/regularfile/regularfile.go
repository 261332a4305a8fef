// Package regularfile opens files for reading without ever waiting on one
// that is not a regular file. Opening a named pipe for reading waits for a
// writer, holding an OS thread for as long, and opening a device may do
// anything; a named pipe, socket or device found where a file was asked
// for is refused instead, with one error (*Error) that each caller words
// in its own vocabulary: it is not a file one can read.
//
// The same rule serves an os.Root (the repository views, file-io's
// workspaces) and paths of the file system (OS).
package regularfile

import (
	"io/fs"
	"os"
	"syscall"
)

// FS is where Open looks: an *os.Root, or OS.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
}

var _ FS = (*os.Root)(nil)

// OS is the file system itself: names are paths, as os.Stat and
// os.OpenFile take them.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// Error is the refusal of what is neither a regular file nor a folder.
type Error struct {
	Path string // as given to Open
	What string // "a named pipe (FIFO)", "a socket", "a device" or "a special file"
}

func (e *Error) Error() string { return e.Path + " is not a regular file but " + e.What }

// Open opens name in fsys for reading when it is a regular file or a
// folder (which opens at once, and is listed through the file), and
// refuses anything else with an *Error, without waiting. It stats first,
// so that a device is never opened; then opens non-blocking, so that a
// named pipe put there since opens at once, and checks again what it
// opened. Any other error is fsys's own.
func Open(fsys FS, name string) (*os.File, error) {
	info, err := fsys.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := check(name, info); err != nil {
		return nil, err
	}
	f, err := fsys.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err == nil {
		err = check(name, info)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// check refuses what info describes unless it is a regular file or a
// folder.
func check(name string, info fs.FileInfo) error {
	mode := info.Mode()
	switch {
	case mode.IsRegular(), mode.IsDir():
		return nil
	case mode&fs.ModeNamedPipe != 0:
		return &Error{Path: name, What: "a named pipe (FIFO)"}
	case mode&fs.ModeSocket != 0:
		return &Error{Path: name, What: "a socket"}
	case mode&fs.ModeDevice != 0:
		return &Error{Path: name, What: "a device"}
	}
	return &Error{Path: name, What: "a special file"}
}
