package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/workspace"
)

func kind(err error) workspace.Kind {
	var e *workspace.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// TestTenantsAreChecked: a tenant that is not a valid tenant id can never
// name a folder, whatever the caller of the package passes.
func TestTenantsAreChecked(t *testing.T) {
	base := t.TempDir()
	d := workspace.NewDir(filepath.Join(base, "workspace"), workspace.Quota{Bytes: 1 << 20, Files: 10})
	ctx := context.Background()
	for _, tenant := range []string{"", ".", "..", "../x", "a/b", "a\\b", "/abs", "a#b"} {
		if err := d.Write(ctx, tenant, "f.txt", []byte("x")); kind(err) != workspace.Denied {
			t.Errorf("write as tenant %q: %v, want Denied", tenant, err)
		}
		if _, err := d.Read(ctx, tenant, "f.txt"); kind(err) != workspace.Denied {
			t.Errorf("read as tenant %q: %v, want Denied", tenant, err)
		}
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 0 {
		t.Errorf("created %v", entries)
	}
}

// TestFailedWritesLeaveNothing: a write refused after its temporary file
// was made (the path is a folder) removes the temporary file.
func TestFailedWritesLeaveNothing(t *testing.T) {
	base := t.TempDir()
	d := workspace.NewDir(base, workspace.Quota{Bytes: 1 << 20, Files: 10})
	ctx := context.Background()
	if err := d.Write(ctx, "alice", "dir/f.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(ctx, "alice", "dir", []byte("y")); kind(err) != workspace.Conflict {
		t.Fatalf("writing over a folder: %v, want Conflict", err)
	}
	var files []string
	filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if want := filepath.Join(base, "alice", "dir", "f.txt"); len(files) != 1 || files[0] != want {
		t.Errorf("files %v, want only %s", files, want)
	}
}

// TestInterruptedWritesLeaveNothing: what an interrupted write leaves (a
// file in the staging folder beside the workspaces) is never read, never
// counted against the quota, and removed by Sweep, which removes nothing
// else; a write whose context ended before its commit is not made.
func TestInterruptedWritesLeaveNothing(t *testing.T) {
	base := t.TempDir()
	d := workspace.NewDir(base, workspace.Quota{Bytes: 1 << 20, Files: 3})
	ctx := context.Background()
	if err := d.Write(ctx, "alice", "notes/a.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	// Names that look like temporary files are the tenant's own.
	if err := d.Write(ctx, "alice", "notes/.toolshed-0123456789abcdef.tmp", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	// A crash's leftover: a big temporary file.
	os.WriteFile(filepath.Join(base, workspace.Staging, "0123456789abcdef.tmp"), make([]byte, 900<<10), 0o600)

	if _, err := d.Read(ctx, "alice", "../"+workspace.Staging+"/0123456789abcdef.tmp"); kind(err) != workspace.Denied {
		t.Errorf("reading the staging folder: %v, want Denied", err)
	}
	// The 900 KiB leftover is not counted: 200 KiB more fit in 1 MiB.
	if err := d.Write(ctx, "alice", "b.txt", make([]byte, 200<<10)); err != nil {
		t.Errorf("a write within the quota, leftovers aside: %v", err)
	}
	n, err := d.Sweep()
	if err != nil || n != 1 {
		t.Errorf("sweep removed %d files, %v; want the leftover", n, err)
	}
	var files []string
	filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(base, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if want := []string{"alice/b.txt", "alice/notes/.toolshed-0123456789abcdef.tmp", "alice/notes/a.txt"}; !slices.Equal(files, want) {
		t.Errorf("after the sweep: %v, want %v", files, want)
	}

	// Past the commit point only: a cancelled write is not made.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Write(cancelled, "alice", "c.txt", []byte("never")); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled write: %v, want context.Canceled", err)
	}
	if _, err := d.Read(ctx, "alice", "c.txt"); kind(err) != workspace.NotFound {
		t.Errorf("the cancelled write was made: %v", err)
	}
}
