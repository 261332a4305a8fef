package fileio_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/fileio"
)

// TestSymlinks: symbolic links in a local workspace that lead outside it
// (to the system, to another tenant, to the folder above, by an absolute
// path, in a loop) give "Access denied" for reading and writing, and
// nothing outside changes; a link that stays inside works.
func TestSymlinks(t *testing.T) {
	be := newDirBackend(t)
	e := newEnv(t, be, generous)
	e.write(t, bob, "secret.txt", "bob's secret")
	e.write(t, alice, "notes/today.md", "inside")
	outside := filepath.Join(be.base, "outside")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(be.workspaces(), alice)
	links := map[string]string{
		"etc":      "/etc",
		"bob":      "../bob",
		"up":       "../..",
		"outside":  outside,
		"abs-self": filepath.Join(home, "notes"), // absolute, even to inside, is refused by os.Root
		"loop":     "loop",
		"inside":   "notes",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	before := be.stored(t)

	for _, p := range []string{"etc/passwd", "bob/secret.txt", "up/outside/x.txt", "outside/x.txt", "abs-self/today.md", "loop", "loop/x", "etc"} {
		fails(t, e.Call(alice, fileio.ToolName, readArgs(p)), toolerr.PathNotAllowed, "Access denied", "")
	}
	for _, p := range []string{"etc/new.conf", "bob/secret.txt", "bob/new.txt", "up/outside/x.txt", "outside/x.txt", "outside/new/y.txt", "abs-self/new.md", "loop/x"} {
		fails(t, e.Call(alice, fileio.ToolName, writeArgs(p, "pwned")), toolerr.PathNotAllowed, "Access denied", "")
	}
	if after := be.stored(t); !maps.Equal(after, before) {
		t.Errorf("files changed:\n got %q\nwant %q", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}

	if got := e.read(t, alice, "inside/today.md"); got != "inside" {
		t.Errorf("through a link inside the workspace: %q", got)
	}
	e.write(t, alice, "inside/tomorrow.md", "also inside")
	if got := e.read(t, alice, "notes/tomorrow.md"); got != "also inside" {
		t.Errorf("written through a link inside the workspace: %q", got)
	}
}
