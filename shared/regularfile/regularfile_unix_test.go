//go:build unix

package regularfile_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolshed/toolshed/shared/regularfile"
)

// TestOpen: through an os.Root and through paths, a regular file and a
// folder open; a named pipe, a socket and a device are refused as what
// they are, and no reader is left waiting on the pipe; a missing file is
// the file system's own error.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), []byte("text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	root := openRoot(t, dir)
	devices := openRoot(t, "/dev")

	tests := []struct {
		name string
		fsys regularfile.FS
		path string
		want string // what is refused ("": opens); "missing": fs.ErrNotExist
	}{
		{"root file", root, "file.txt", ""},
		{"root folder", root, "folder", ""},
		{"root pipe", root, "pipe", "a named pipe (FIFO)"},
		{"root socket", root, "socket", "a socket"},
		{"root device", devices, "null", "a device"},
		{"root missing", root, "missing.txt", "missing"},
		{"path file", regularfile.OS, filepath.Join(dir, "file.txt"), ""},
		{"path folder", regularfile.OS, filepath.Join(dir, "folder"), ""},
		{"path pipe", regularfile.OS, filepath.Join(dir, "pipe"), "a named pipe (FIFO)"},
		{"path socket", regularfile.OS, filepath.Join(dir, "socket"), "a socket"},
		{"path device", regularfile.OS, "/dev/null", "a device"},
		{"path missing", regularfile.OS, filepath.Join(dir, "missing.txt"), "missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := regularfile.Open(tc.fsys, tc.path)
			if err == nil {
				defer f.Close()
			}
			refusal, refused := errors.AsType[*regularfile.Error](err)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Open(%s): %v", tc.path, err)
			case tc.want == "missing" && (refused || !errors.Is(err, fs.ErrNotExist)):
				t.Errorf("Open(%s): %v, want the file system's not-exist error", tc.path, err)
			case tc.want != "" && tc.want != "missing" && (!refused || refusal.What != tc.want ||
				err.Error() != tc.path+" is not a regular file but "+tc.want):
				t.Errorf("Open(%s): %v, want an *Error saying it is %s", tc.path, err, tc.want)
			}
		})
	}
	if data, err := readAll(root, "file.txt"); err != nil || data != "text\n" {
		t.Errorf("reading the file: %q, %v", data, err)
	}
	// A writer opens without waiting only while a reader has the pipe
	// open or waits to (ENXIO otherwise).
	if w, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
		t.Error("a reader is left waiting on the pipe")
	} else if !errors.Is(err, syscall.ENXIO) {
		t.Fatal(err)
	}
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

func readAll(fsys regularfile.FS, name string) (string, error) {
	f, err := regularfile.Open(fsys, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	return string(data), err
}
