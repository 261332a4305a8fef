package repo_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// viewFiles is the repository every view test reads: nested folders,
// files the deny policy refuses (secrets, keys, git's folder, in any case)
// and the server's data directory ("data").
var viewFiles = map[string]string{
	"README.md":                    "# Fixture\n",
	"main.go":                      "package main\n",
	"config/app.yaml":              "port: 1\n",
	"docs/guide.md":                "guide\n",
	"docs/deep/er/notes.md":        "deep\n",
	"src/app/main.go":              "package app\n",
	".env":                         "SECRET=1\n",
	"src/.Env.local":               "SECRET=2\n",
	"secrets.txt":                  "hunter2\n",
	"docs/secrets/plan.md":         "a folder matching secrets*\n",
	"config/server.pem":            "-----BEGIN PRIVATE KEY-----\n",
	"deploy/id.key":                "key\n",
	".git/HEAD":                    "ref: refs/heads/main\n",
	"src/app/.git/config":          "[core]\n",
	"data/store.db":                "every tenant's data\n",
	"data/workspace/bob/diary.txt": "dear diary\n",
}

// viewVisible is everything of viewFiles a view shows, folders included.
var viewVisible = []string{
	"README.md", "config", "config/app.yaml", "deploy", "docs", "docs/deep", "docs/deep/er",
	"docs/deep/er/notes.md", "docs/guide.md", "main.go", "src", "src/app", "src/app/main.go",
}

// viewRefused are paths every operation of a view refuses with
// PATH_NOT_ALLOWED, whether they exist or not.
var viewRefused = []string{
	".env", "src/.Env.local", ".ENV", "secrets.txt", "docs/secrets", "docs/secrets/plan.md",
	"config/server.pem", "deploy/id.key", ".git", ".git/HEAD", "src/app/.git/config",
	"data", "data/store.db", "DATA/workspace/bob/diary.txt", "missing/.env", "x.pem",
}

// viewLinks are the symbolic links the local view's directory holds
// besides: name → target.
var viewLinks = map[string]string{
	"docs/link.md": "guide.md",     // shown
	"docs/up.md":   "../README.md", // shown
	"docslink":     "docs",         // shown
	"keys":         "config",       // shown; keys/server.pem is refused
	"self":         ".",            // shown; self/.env and self/data are refused
	"innocent.txt": ".env",
	"diary":        "data/workspace/bob/diary.txt",
	"gitdir":       ".git",
	"escape":       "../outside.txt",
	"abs":          "/etc/passwd",
	"dangling":     "missing",
	"loop":         "loop",
}

// linkVisible are the links the local view shows.
var linkVisible = []string{"docs/link.md", "docs/up.md", "docslink", "keys", "self"}

// linkRefused are paths through links that lead to refused paths, out of
// the root, round in a loop or to nothing: every operation refuses them
// with PATH_NOT_ALLOWED.
var linkRefused = []string{
	"innocent.txt", "diary", "gitdir", "gitdir/HEAD", "self/.env", "self/data", "self/data/store.db",
	"keys/server.pem", "docslink/secrets/plan.md", "escape", "abs", "loop", "dangling", "docslink/missing.md",
}

// namedView is a view under test, with what it must show.
type namedView struct {
	name    string
	view    repo.View
	visible []string
}

// testViews returns the two views of viewFiles: the local directory (with
// viewLinks besides) and its zip snapshot, both keeping out "data".
func testViews(t *testing.T) []namedView {
	t.Helper()
	dir := repotest.WriteDir(t, viewFiles)
	var zipped bytes.Buffer
	if _, err := repo.Pack(&zipped, dir, repotest.Files(t, dir), repo.DefaultMaxBytes); err != nil {
		t.Fatal(err)
	}
	for name, target := range viewLinks {
		mustSymlink(t, target, filepath.Join(dir, filepath.FromSlash(name)))
	}
	policy, err := repo.LocalPolicy(dir, filepath.Join(dir, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	local, err := repo.NewLocal(dir, repo.LocalOptions{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	snap, err := repo.OpenZip(zipped.Bytes(), "fixture", policy)
	if err != nil {
		t.Fatal(err)
	}
	return []namedView{
		{"local", local, slices.Sorted(slices.Values(append(slices.Clone(viewVisible), linkVisible...)))},
		{"zip", snap, viewVisible},
	}
}

// TestViewsAreFileSystems runs testing/fstest.TestFS on each view, and
// checks that what the views list is exactly what they should show.
func TestViewsAreFileSystems(t *testing.T) {
	for _, v := range testViews(t) {
		t.Run(v.name, func(t *testing.T) {
			if err := fstest.TestFS(v.view, v.visible...); err != nil {
				t.Fatal(err)
			}
			var listed []string
			err := fs.WalkDir(v.view, ".", func(p string, _ fs.DirEntry, err error) error {
				if p != "." {
					listed = append(listed, p)
				}
				return err
			})
			if err != nil || !slices.Equal(listed, v.visible) {
				t.Errorf("listed %q, %v;\nwant %q", listed, err, v.visible)
			}
		})
	}
}

// TestViewsRefuseDeniedPaths: every operation refuses a denied path with
// PATH_NOT_ALLOWED, and no folder handle lists one.
func TestViewsRefuseDeniedPaths(t *testing.T) {
	for _, v := range testViews(t) {
		t.Run(v.name, func(t *testing.T) {
			refused := viewRefused
			if v.name == "local" {
				refused = append(slices.Clone(refused), linkRefused...)
			}
			for _, name := range refused {
				for op, err := range operations(v.view, name) {
					if pe, ok := errors.AsType[*fs.PathError](err); !ok || toolerr.From(pe.Err).Code != toolerr.PathNotAllowed {
						t.Errorf("%s(%q): %v, want a *fs.PathError with PATH_NOT_ALLOWED", op, name, err)
					}
				}
			}
			for op, err := range operations(v.view, "docs/missing.md") {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s(docs/missing.md): %v, want fs.ErrNotExist", op, err)
				}
			}
			// The root folder's handle lists no denied name, however it is read.
			for _, n := range []int{-1, 1, 2} {
				if got := readDirNames(t, v.view, ".", n); slices.Contains(got, ".env") || slices.Contains(got, "data") || slices.Contains(got, "escape") {
					t.Errorf("Open(.).ReadDir(%d) lists %q", n, got)
				}
			}
			if v.name == "local" {
				if got, want := readDirNames(t, v.view, "keys", -1), []string{"app.yaml"}; !slices.Equal(got, want) {
					t.Errorf("keys (→ config) lists %q, want %q", got, want)
				}
				if got := readDirNames(t, v.view, "self", -1); slices.Contains(got, "data") || slices.Contains(got, ".env") {
					t.Errorf("self (→ .) lists %q", got)
				}
				if got, err := v.view.ReadLink("docs/link.md"); got != "guide.md" || err != nil {
					t.Errorf("ReadLink(docs/link.md) = %q, %v", got, err)
				}
			}
		})
	}
}

// TestViewsRefuseInvalidNames: each operation of each view answers an
// invalid name at once with fs.ErrInvalid. Open("/main.go") used to loop
// forever in the deny check.
func TestViewsRefuseInvalidNames(t *testing.T) {
	invalid := []string{"/main.go", "/", "", "..", "a/../b", "main.go/..", "a//b", "./a", "./main.go", "a/", "main.go/",
		"main.go\x00", "\x00", "\xff", "/.env", "docs/" + strings.Repeat("a/", 1<<16) + "..", "/" + strings.Repeat("a/", 1<<16)}
	for _, v := range testViews(t) {
		t.Run(v.name, func(t *testing.T) {
			for _, name := range invalid {
				shown := name
				if len(shown) > 40 {
					shown = shown[:40] + "…"
				}
				done := make(chan map[string]error, 1)
				go func() { done <- operations(v.view, name) }()
				select {
				case errs := <-done:
					for op, err := range errs {
						if _, ok := errors.AsType[*fs.PathError](err); !ok || !errors.Is(err, fs.ErrInvalid) {
							t.Errorf("%s(%q): %v, want a *fs.PathError with fs.ErrInvalid", op, shown, err)
						}
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("operations on %q did not return", shown)
				}
			}
		})
	}
}

// operations tries every operation of a view on name and returns their
// errors by operation.
func operations(view repo.View, name string) map[string]error {
	errs := map[string]error{}
	f, err := view.Open(name)
	if err == nil {
		f.Close()
	}
	errs["Open"] = err
	_, errs["Stat"] = view.Stat(name)
	_, errs["Lstat"] = view.Lstat(name)
	_, errs["ReadLink"] = view.ReadLink(name)
	_, errs["ReadFile"] = fs.ReadFile(view, name)
	_, errs["ReadDir"] = fs.ReadDir(view, name)
	return errs
}

// readDirNames lists the folder dir through the handle Open returns,
// reading n entries at a time.
func readDirNames(t *testing.T, view repo.View, dir string, n int) []string {
	t.Helper()
	f, err := view.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	for {
		entries, err := f.(fs.ReadDirFile).ReadDir(n)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if n <= 0 || err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatalf("ReadDir(%d) of %s: %v", n, dir, err)
		}
	}
}
