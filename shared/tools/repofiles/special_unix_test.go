//go:build unix

package repofiles_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
)

// TestSpecialFiles: a named pipe in a local working tree is refused at
// once (INVALID_INPUT, not a TIMEOUT while its open waits for a writer),
// by both tools, whole or a range, however often it is asked for, and no
// reader is left waiting on it.
func TestSpecialFiles(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"README.md": "# R\n"})
	pipes := []string{"src/pipe.ts", "docs/pipe.md"}
	for _, p := range pipes {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(full, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, repotest.Local(t, dir))
	calls := []struct{ tool, args string }{
		{repofiles.ReadFileTool, `{"path":"src/pipe.ts"}`},
		{repofiles.ReadFileTool, `{"path":"src/pipe.ts","startLine":1,"endLine":20}`},
		{repofiles.ReadRepoFileTool, `{"path":"docs/pipe.md"}`},
	}
	for i := range 20 {
		c := calls[i%len(calls)]
		err := e.Fail(t, alice, c.tool, c.args, toolerr.InvalidInput)
		if !strings.Contains(err.Message, "pipe.") || !strings.Contains(err.Message, "not a regular file") {
			t.Errorf("%s %s: message %q does not say the file is not a regular one", c.tool, c.args, err.Message)
		}
	}
	for _, p := range pipes {
		// A writer opens without waiting only while a reader has the pipe
		// open or waits to (ENXIO otherwise); it lets such a reader go.
		w, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(p)), os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			t.Errorf("a read of %s is left waiting for a writer", p)
		} else if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(fmt.Errorf("open %s for writing: %w", p, err))
		}
	}
}
