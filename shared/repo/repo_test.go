package repo_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// fixture exercises every rule of the searchable walk.
var fixture = map[string]string{
	"README.md":                 "# Fixture\n",
	"docs/guide.md":             "guide\n",
	".gitignore":                "*.log\n/tmp/\n!keep.log\n# comment\n\n",
	"app.log":                   "ignored by *.log\n",
	"keep.log":                  "re-included by !keep.log\n",
	"tmp/x.txt":                 "ignored: /tmp/ is anchored at the root\n",
	"src/tmp/y.txt":             "kept: /tmp/ does not match below the root\n",
	"src/.gitignore":            "generated/\n*.gen.go\r\n",
	"src/generated/a.go":        "ignored folder\n",
	"src/b.gen.go":              "ignored by src/.gitignore (CRLF line)\n",
	"src/main.go":               "package main\n",
	"src/sub/.gitignore":        "!c.gen.go\n",
	"src/sub/c.gen.go":          "re-included by a deeper .gitignore\n",
	"node_modules/pkg/index.js": "excluded\n",
	"web/node_modules/x.js":     "excluded at any depth\n",
	"web/app.js":                "kept\n",
	"dist/out.js":               "excluded\n",
	"pkg/build/x.go":            "excluded\n",
	"pkg/ok.go":                 "kept\n",
	".next/cache.js":            "excluded\n",
	".context/notes.md":         "excluded\n",
	".hidden/secret.txt":        "hidden folder\n",
	".env":                      "SECRET=1\n",
	"src/.env.local":            "SECRET=2\n",
	"config/server.pem":         "-----BEGIN PRIVATE KEY-----\n",
	"docs/secrets.yaml":         "password: hunter2\n",
	"deploy.KEY":                "key\n",
	"bin.dat":                   "abc\x00def",
	"bom.txt":                   "\xEF\xBB\xBFhello\n",
	"empty.txt":                 "",
}

// refused are the fixture's files the default policy refuses (and some
// that do not exist: a refusal never says whether a file exists).
var refused = []string{".env", "src/.env.local", "config/server.pem", "docs/secrets.yaml", ".git/config", "deploy.KEY", "keys/x/id.key"}

// searchablePaths are fixture's searchable files in walk order.
var searchablePaths = []string{
	"README.md", "bom.txt", "docs/guide.md", "empty.txt", "keep.log", "pkg/ok.go",
	"src/main.go", "src/sub/c.gen.go", "src/tmp/y.txt", "web/app.js",
}

const tenant = "acme"

// TestSources runs one conformance suite on the local directory and on the
// S3 zip snapshot of the same files, then each source's own tests, on one
// moto_server.
func TestSources(t *testing.T) {
	s3 := repotest.StartS3(t)
	dir := repotest.WriteDir(t, fixture)
	for _, src := range s3.Sources(t, tenant, dir) {
		t.Run("conformance/"+src.Name, func(t *testing.T) {
			snap, err := src.Source.Open(context.Background(), reposcope.DefaultOf(tenant))
			if err != nil {
				t.Fatal(err)
			}
			testConformance(t, snap)
		})
	}
	t.Run("local", func(t *testing.T) { testLocal(t) })
	t.Run("s3", func(t *testing.T) { testS3(t, s3) })
	t.Run("s3 holds", func(t *testing.T) { testS3Holds(t, s3) })
	t.Run("s3 counts what it revalidates", func(t *testing.T) { testS3CountsWhatItRevalidates(t, s3) })
	t.Run("publish", func(t *testing.T) { testPublish(t, s3) })
	t.Run("interrupted publish", func(t *testing.T) { testInterruptedPublish(t, s3) })
	t.Run("pointer numbers", func(t *testing.T) { testPointerNumbers(t, s3) })
	t.Run("unnumbered pointer", func(t *testing.T) { testUnnumberedPointer(t, s3) })
	t.Run("publish precise", func(t *testing.T) { testPublishPrecise(t, s3) })
}

func testConformance(t *testing.T, snap repo.View) {
	for _, name := range refused {
		_, err := fs.ReadFile(snap, name)
		if te := new(*toolerr.Error); !errors.As(err, te) || (*te).Code != toolerr.PathNotAllowed || !strings.Contains((*te).Message, "is not readable: ") {
			t.Errorf("ReadFile(%s): %v, want PATH_NOT_ALLOWED saying why", name, err)
		}
		if _, err := fs.Stat(snap, name); !errors.As(err, new(*toolerr.Error)) {
			t.Errorf("Stat(%s): %v, want PATH_NOT_ALLOWED", name, err)
		}
	}
	for name, want := range fixture {
		if slices.Contains(refused, name) {
			continue
		}
		got, err := fs.ReadFile(snap, name)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, got, err, want)
		}
		info, err := fs.Stat(snap, name)
		if err != nil || !info.ModTime().Equal(repotest.ModTime) || info.IsDir() || info.Size() != int64(len(want)) {
			t.Errorf("Stat(%s) = %v, %v; want a file of %d bytes modified at %s", name, info, err, len(want), repotest.ModTime)
		}
	}
	if info, err := fs.Stat(snap, "docs"); err != nil || !info.IsDir() {
		t.Errorf("Stat(docs) = %v, %v; want a folder", info, err)
	}
	for _, name := range []string{"missing.md", "docs/missing.md", "README.md/x"} {
		if _, err := fs.ReadFile(snap, name); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) && err == nil {
			t.Errorf("ReadFile(%s): %v, want not found", name, err)
		}
	}
	if _, err := fs.ReadFile(snap, "missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing.md): %v, want fs.ErrNotExist", err)
	}

	files, err := snap.Searchable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
		want := strings.TrimPrefix(fixture[f.Path], "\xEF\xBB\xBF")
		if f.Text() != want || !f.ModTime.Equal(repotest.ModTime) {
			t.Errorf("searchable %s: %q at %s, want %q at %s", f.Path, f.Text(), f.ModTime, want, repotest.ModTime)
		}
		if f.Size() != len(want) || f.Lines() != repo.CountLines([]byte(want)) {
			t.Errorf("searchable %s: size %d, %d lines; want %d, %d", f.Path, f.Size(), f.Lines(), len(want), repo.CountLines([]byte(want)))
		}
		// Every trigram of the text, lower-cased, is in its filter.
		low := strings.ToLower(want)
		for i := 0; i+3 <= len(low); i++ {
			if !f.Trigrams().Has(low[i], low[i+1], low[i+2]) {
				t.Errorf("%s: trigram %q is not in the filter", f.Path, low[i:i+3])
			}
		}
	}
	if !slices.Equal(got, searchablePaths) {
		t.Errorf("searchable files:\n got %q\nwant %q", got, searchablePaths)
	}
}

func testLocal(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"a.txt": "one\n", "b/c.txt": "two\n", "outside/secret": "no\n"})
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b"} {
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	// Links out of the root, and one inside it.
	mustSymlink(t, filepath.Join(dir, "outside", "secret"), filepath.Join(root, "abs-escape"))
	mustSymlink(t, "../outside/secret", filepath.Join(root, "rel-escape"))
	mustSymlink(t, "../outside", filepath.Join(root, "dir-escape"))
	mustSymlink(t, "a.txt", filepath.Join(root, "inner-link"))

	snap, err := repo.NewLocal(root, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, name := range []string{"abs-escape", "rel-escape", "dir-escape/secret", "../outside/secret"} {
		if data, err := fs.ReadFile(snap, name); err == nil {
			t.Errorf("ReadFile(%s) read %q outside the root", name, data)
		}
	}
	if info, err := fs.Lstat(snap, "inner-link"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(inner-link) = %v, %v; want a symbolic link", info, err)
	}
	if got := searchPaths(t, snap); !slices.Equal(got, []string{"a.txt", "b/c.txt"}) {
		t.Errorf("searchable %q, want a.txt and b/c.txt (links are skipped)", got)
	}

}

func TestHeadCommit(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"not a checkout", map[string]string{"a": "x"}, ""},
		{"loose ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": id + "\n"}, id},
		{"packed ref", map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/packed-refs": "# pack-refs\n" + id + " refs/heads/main\n"}, id},
		{"detached", map[string]string{".git/HEAD": id + "\n"}, id},
		{"worktree", map[string]string{
			".git":                             "gitdir: .main-git/worktrees/wt\n",
			".main-git/worktrees/wt/HEAD":      "ref: refs/heads/topic\n",
			".main-git/worktrees/wt/commondir": "../..\n",
			".main-git/refs/heads/topic":       id + "\n",
		}, id},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := repo.NewLocal(repotest.WriteDir(t, tc.files), repo.LocalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if got := snap.Commit(); got != tc.want {
				t.Errorf("Commit() = %q, want %q", got, tc.want)
			}
		})
	}
}

func searchPaths(t *testing.T, snap repo.View) []string {
	t.Helper()
	files, err := snap.Searchable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
