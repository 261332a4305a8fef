//go:build unix

package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/workspace"
)

// TestSpecialFilesAreNotOpened: a named pipe in a workspace (put there by
// something other than file-io) is refused at once as not a regular file,
// and no read stays waiting on it for a writer.
func TestSpecialFilesAreNotOpened(t *testing.T) {
	base := t.TempDir()
	d := workspace.NewDir(base, workspace.Quota{Bytes: 1 << 20, Files: 10})
	if err := d.Write(context.Background(), "alice", "f.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(base, "alice", "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.Read(context.Background(), "alice", "pipe")
		done <- err
	}()
	// Until the read answers, look for it waiting on the pipe: opening the
	// pipe to write without waiting fails (ENXIO) unless a reader waits
	// (and then lets it go on).
	for {
		select {
		case err := <-done:
			if we, ok := errors.AsType[*workspace.Error](err); !ok || we.Kind != workspace.NotRegular ||
				we.Reason != "pipe is not a regular file but a named pipe (FIFO)" {
				t.Errorf("reading a named pipe: %v, want NotRegular saying what it is", err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
			t.Fatal("the read waits on the named pipe for a writer")
		}
	}
}
