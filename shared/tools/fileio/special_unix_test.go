//go:build unix

package fileio_test

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/fileio"
)

// TestSpecialFiles: a named pipe or a socket put in a local workspace by
// something other than file-io is not a file one can read: read_file
// answers INVALID_INPUT saying what it is, in the words the repository
// tools use, and at once.
func TestSpecialFiles(t *testing.T) {
	be := newDirBackend(t)
	e := newEnv(t, be, generous)
	e.write(t, alice, "notes/today.md", "x")
	home := filepath.Join(be.workspaces(), alice)
	if err := syscall.Mkfifo(filepath.Join(home, "notes", "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(home, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for p, what := range map[string]string{"notes/pipe": "a named pipe (FIFO)", "socket": "a socket"} {
		fails(t, e.Call(alice, fileio.ToolName, readArgs(p)), toolerr.InvalidInput,
			p+" is not a regular file but "+what+": file-io reads only regular files", "")
	}
}
