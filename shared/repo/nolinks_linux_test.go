package repo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoLinks: the kernel's answer matches the links on the way, so the
// view takes its shortcut only where no link is.
func TestNoLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"l": "a", "a/c.txt": "b.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		want bool
	}{
		{"a/b.txt", true},
		{"a", true},
		{".", true},
		{"missing/x", true}, // stops at a missing folder, before any link
		{"a/b.txt/x", true}, // stops at a file
		{"l/b.txt", false},  // a linked folder
		{"l", false},        // a link
		{"a/c.txt", false},  // a linked file
		{"a/../l/b.txt", false},
	}
	for _, tc := range tests {
		if got := noLinks(f, tc.name); got != tc.want {
			t.Errorf("noLinks(%q) = %t, want %t (needs openat2: Linux 5.6 or later)", tc.name, got, tc.want)
		}
	}
}
