package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
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
	d := workspace.NewDir(filepath.Join(base, "workspace"), config.Quota{Bytes: 1 << 20, Files: 10})
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
	d := workspace.NewDir(base, config.Quota{Bytes: 1 << 20, Files: 10})
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
