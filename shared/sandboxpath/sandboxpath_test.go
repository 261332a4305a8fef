package sandboxpath_test

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/toolshed/toolshed/shared/sandboxpath"
)

const prefix = "workspace/alice/"

func TestResolveAccepts(t *testing.T) {
	for _, p := range []string{
		"new-file.txt", "notes/2025/01/today.md", ".config/settings.json", "...", "..a", "a..", ".. a",
		"%2e%2e/x", "~/x", "$HOME/x", "a b/c d.txt", "héllo ☕.txt", "．．/x", "a/\u2025/b", "C/x", "c_:x",
		strings.Repeat("a", 255), strings.Repeat("a/", 400) + "b",
	} {
		key, err := sandboxpath.Resolve(prefix, p)
		if err != nil || key != prefix+p {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, key, err, prefix+p)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	tests := []struct {
		path   string
		escape bool
		reason string
	}{
		{"..", true, "has a '..' segment"},
		{"../x", true, "has a '..' segment"},
		{"a/../b", true, "has a '..' segment"},
		{"a/..", true, "has a '..' segment"},
		{"../", true, "has a '..' segment"},
		{"/etc/passwd", true, "is absolute"},
		{"//server/share", true, "is absolute"},
		{"/", true, "is absolute"},
		{"..\\x", true, "contains a backslash"},
		{"a\\b", true, "contains a backslash"},
		{"C:\\Windows", true, "contains a backslash"},
		{"C:/Windows", true, "starts with a drive letter"},
		{"z:x", true, "starts with a drive letter"},
		{"x\x00.txt", true, "contains a NUL byte"},
		{"a\nb", true, "contains a control character"},
		{"a\x1bb", true, "contains a control character"},
		{"a\x7fb", true, "contains a control character"},
		{"a\u0085b", true, "contains a control character"},
		{"", false, "is empty"},
		{".", false, "has a '.' segment"},
		{"./a", false, "has a '.' segment"},
		{"a/./b", false, "has a '.' segment"},
		{"a/", false, "has an empty segment"},
		{"a//b", false, "has an empty segment"},
		{"a\xffb", false, "is not valid UTF-8"},
		{strings.Repeat("a", 256), false, "has a segment longer than 255 bytes"},
		{strings.Repeat("a/", 504) + "b", false, "is too long: its storage key would be 1025 bytes"},
	}
	for _, tc := range tests {
		_, err := sandboxpath.Resolve(prefix, tc.path)
		var e *sandboxpath.Error
		if !errors.As(err, &e) || e.Escape != tc.escape || !strings.HasPrefix(e.Reason, tc.reason) {
			t.Errorf("Resolve(%q) = %v; want escape=%v, reason %q", tc.path, err, tc.escape, tc.reason)
		}
	}
}

// FuzzResolve: an accepted path is local and canonical (path.Clean leaves
// it alone, filepath.IsLocal holds), has no backslash or control
// character, and its key is the prefix followed by the path, within the
// key limit. Everything else is refused with an *Error.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"new-file.txt", "notes/2025/today.md", ".config/x", "..", "../x", "a/../b",
		"/etc/passwd", "..\\x", "C:/x", "a\x00b", "a\nb", "", ".", "a//b", "a/", "a/./b", "．．/x", "...",
		strings.Repeat("a", 256), strings.Repeat("ab/", 340)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		key, err := sandboxpath.Resolve(prefix, p)
		if err != nil {
			var e *sandboxpath.Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("Resolve(%q): %v is not an *Error with a reason", p, err)
			}
			return
		}
		if path.Clean(p) != p || !filepath.IsLocal(p) || strings.HasPrefix(p, "../") || p == ".." {
			t.Fatalf("Resolve accepted %q, which is not a clean local path", p)
		}
		if strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || unicode.IsControl(r) }) {
			t.Fatalf("Resolve accepted %q", p)
		}
		if key != prefix+p || len(key) > sandboxpath.MaxKeyBytes {
			t.Fatalf("Resolve(%q) = %q", p, key)
		}
		if !strings.HasPrefix(filepath.Join("/sandbox", p), "/sandbox/") {
			t.Fatalf("Resolve accepted %q, which joins outside the sandbox", p)
		}
	})
}
