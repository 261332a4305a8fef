package pathpolicy_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/toolerr"
)

var policy = pathpolicy.MustNew(pathpolicy.Options{
	Allow:    []string{"docs/*", ".claude/skills/*", "README.md", "{a,b}/*.md"},
	Deny:     []string{"**/.env*", "**/secrets*", "**/*.pem", "**/.git"},
	MaxBytes: 10,
})

func TestCleanAndCheck(t *testing.T) {
	tests := []struct {
		in, clean string
		code      toolerr.Code // "" for allowed
	}{
		{"README.md", "README.md", ""},
		{"docs/a.md", "docs/a.md", ""},
		{"docs/deep/er/a.md", "docs/deep/er/a.md", ""},
		{".claude/skills/review/SKILL.md", ".claude/skills/review/SKILL.md", ""},
		{"a/x.md", "a/x.md", ""},
		{"b/x.md", "b/x.md", ""},
		{"docs/./a.md", "docs/a.md", ""},
		{"docs//a.md", "docs/a.md", ""},
		{"docs/a.md/", "docs/a.md", ""},
		{"c/x.md", "", toolerr.PathNotAllowed},
		{"go.mod", "", toolerr.PathNotAllowed},
		{"README.md.bak", "", toolerr.PathNotAllowed},
		{"docsx/a.md", "", toolerr.PathNotAllowed},
		{"docs", "", toolerr.PathNotAllowed}, // the folder itself is not below docs/
		{"docs/.env", "", toolerr.PathNotAllowed},
		{"docs/.env.local", "", toolerr.PathNotAllowed},
		{"docs/.ENV", "", toolerr.PathNotAllowed},
		{"docs/.env.d/x", "", toolerr.PathNotAllowed},
		{"docs/secrets.yaml", "", toolerr.PathNotAllowed},
		{"docs/Secrets/x.md", "", toolerr.PathNotAllowed},
		{"docs/a/b/c.pem", "", toolerr.PathNotAllowed},
		{"docs/.git/config", "", toolerr.PathNotAllowed},
		{"", "", toolerr.PathNotAllowed},
		{".", "", toolerr.PathNotAllowed},
		{"./", "", toolerr.PathNotAllowed},
		{"../etc/passwd", "", toolerr.PathNotAllowed},
		{"docs/../.env", "", toolerr.PathNotAllowed},
		{"docs/..", "", toolerr.PathNotAllowed},
		{"/etc/passwd", "", toolerr.PathNotAllowed},
		{"C:/Windows", "", toolerr.PathNotAllowed},
		{`docs\a.md`, "", toolerr.PathNotAllowed},
		{`..\..\etc\passwd`, "", toolerr.PathNotAllowed},
		{"docs/a.md\x00.txt", "", toolerr.PathNotAllowed},
		{"docs/a\nb.md", "", toolerr.PathNotAllowed},
		{"docs/a\x7f.md", "", toolerr.PathNotAllowed},
		{"docs/a\u0085.md", "", toolerr.PathNotAllowed},
		{"docs/a\u202e.md", "", toolerr.PathNotAllowed},
		{"docs/\xff.md", "", toolerr.PathNotAllowed},
		{"docs/" + strings.Repeat("a", 1021), "", toolerr.PathNotAllowed},
		{"docs/%2e%2e/secret", "docs/%2e%2e/secret", ""}, // not decoded: a literal folder name
	}
	for _, tc := range tests {
		clean, err := policy.Clean(tc.in)
		if err == nil {
			err = policy.Check(clean)
		}
		if code := codeOf(err); code != tc.code || (tc.code == "" && clean != tc.clean) {
			t.Errorf("%q: clean %q, error %v; want %q, code %q", tc.in, clean, err, tc.clean, tc.code)
		}
	}
}

// TestCheckAnswersAnyName: Check answers at once for names Clean would
// have refused (its folder loop used to spin forever on a rooted path),
// and a refusal names the pattern that matched.
func TestCheckAnswersAnyName(t *testing.T) {
	tests := []struct {
		name, says string // says: a piece of the refusal; "" when allowed
	}{
		{"/etc/passwd", "outside the readable paths"},
		{"/", "outside the readable paths"},
		{"/docs/a.md", "outside the readable paths"},
		{"", "outside the readable paths"},
		{"/docs/.env", "denied by **/.env*"},
		{"docs/", ""},
		{"docs/x/.GIT/config", "denied by **/.git"},
		{"docs/" + strings.Repeat("a/", 1<<16) + "b.md", ""},
	}
	for _, tc := range tests {
		err := policy.Check(tc.name)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("Check(%.40q): %v", tc.name, err)
		case tc.says != "" && (codeOf(err) != toolerr.PathNotAllowed || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("Check(%.40q): %.200v, want PATH_NOT_ALLOWED saying %q", tc.name, err, tc.says)
		}
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "0123456789")
	write("docs/big.md", "0123456789A")
	write("docs/sub/a.md", "a")
	write("outside.txt", "secret")
	os.Symlink("../outside.txt", filepath.Join(dir, "docs", "link.md"))
	os.Symlink("sub", filepath.Join(dir, "docs", "linkdir"))
	os.Symlink("/etc", filepath.Join(dir, "docs", "etc"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	mapFS := fstest.MapFS{"README.md": {Data: []byte("0123456789")}, "docs/big.md": {Data: []byte("0123456789A")}, "docs/sub/a.md": {Data: []byte("a")}}

	for name, fsys := range map[string]fs.FS{"os.Root": root.FS(), "MapFS": mapFS} {
		t.Run(name, func(t *testing.T) {
			tests := []struct {
				path, want string
				code       toolerr.Code
			}{
				{"README.md", "0123456789", ""},
				{"docs/sub/a.md", "a", ""},
				{"docs/big.md", "", toolerr.SizeLimitExceeded},
				{"docs/missing.md", "", toolerr.ResourceNotFound},
				{"docs/sub/a.md/x", "", toolerr.ResourceNotFound},
				{"docs/sub", "", toolerr.InvalidInput},
				{"../outside.txt", "", toolerr.PathNotAllowed},
				{"outside.txt", "", toolerr.PathNotAllowed},
			}
			if name == "os.Root" {
				tests = append(tests,
					struct {
						path, want string
						code       toolerr.Code
					}{"docs/link.md", "", toolerr.PathNotAllowed},
					struct {
						path, want string
						code       toolerr.Code
					}{"docs/linkdir/a.md", "", toolerr.PathNotAllowed},
					struct {
						path, want string
						code       toolerr.Code
					}{"docs/etc/passwd", "", toolerr.PathNotAllowed},
				)
			}
			for _, tc := range tests {
				f, err := policy.Read(fsys, tc.path)
				if codeOf(err) != tc.code || string(f.Data) != tc.want {
					t.Errorf("Read(%s) = %q, %v; want %q, code %q", tc.path, f.Data, err, tc.want, tc.code)
				}
				// Open refuses what Read refuses, but for the size.
				code, want := tc.code, tc.want
				if code == toolerr.SizeLimitExceeded {
					code, want = "", "0123456789A"
				}
				var data []byte
				o, err := policy.Open(fsys, tc.path)
				if err == nil {
					data, err = io.ReadAll(o)
					o.Close()
				}
				if codeOf(err) != code || string(data) != want || (err == nil && o.Path != tc.path) {
					t.Errorf("Open(%s) read %q, %v; want %q, code %q", tc.path, data, err, want, code)
				}
			}
		})
	}
	if got := codeErr(policy.Read(mapFS, "docs/big.md")).Details; got["bytes"] != int64(11) || got["limitBytes"] != int64(10) {
		t.Errorf("size details %v", got)
	}
	// OverLimit says what to do instead.
	hinted := pathpolicy.MustNew(pathpolicy.Options{MaxBytes: 10, OverLimit: "read it in parts"})
	if got := codeErr(hinted.Read(mapFS, "docs/big.md")).Message; got != "docs/big.md is over the size limit of 10 bytes: read it in parts" {
		t.Errorf("size refusal with a hint: %q", got)
	}
}

func TestNewRejectsBadPatterns(t *testing.T) {
	for _, bad := range [][]string{{"[unclosed"}, {"/abs/**"}, {"docs/"}, {""}} {
		if _, err := pathpolicy.New(pathpolicy.Options{Deny: bad}); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

// FuzzClean checks that whatever Clean accepts is a valid, relative,
// traversal-free path of printable characters.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"README.md", "../x", "a/./b", "/abs", `a\b`, "a\x00b", "docs/..", "C:/x", "a//b/", "\xff", ".", "a/\u202e"} {
		f.Add(s)
	}
	p := pathpolicy.MustNew(pathpolicy.Options{})
	f.Fuzz(func(t *testing.T, in string) {
		clean, err := p.Clean(in)
		if err != nil {
			if codeOf(err) != toolerr.PathNotAllowed {
				t.Fatalf("Clean(%q): %v, want PATH_NOT_ALLOWED", in, err)
			}
			return
		}
		if !fs.ValidPath(clean) || clean == "." || strings.Contains(clean, `\`) || !utf8.ValidString(clean) ||
			strings.HasPrefix(clean, "/") || len(clean) > pathpolicy.DefaultMaxPathLen {
			t.Fatalf("Clean(%q) = %q, not a safe relative path", in, clean)
		}
		for _, seg := range strings.Split(clean, "/") {
			if seg == ".." {
				t.Fatalf("Clean(%q) = %q keeps ..", in, clean)
			}
		}
	})
}

func codeOf(err error) toolerr.Code {
	if err == nil {
		return ""
	}
	return toolerr.From(err).Code
}

func codeErr(_ pathpolicy.File, err error) *toolerr.Error { return toolerr.From(err) }
