package githistory_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// treeFixture is a repository whose first commit holds what a view must
// refuse or treat apart: a denied file, a file holding a secret, symbolic
// links (to a file, to the denied file, out of the repository), a
// submodule, a binary file, an ignored file, and files git archive would
// have left out or rewritten (export-ignore, export-subst). Its second
// commit deletes them all but README.md. It returns the folder and the
// first commit.
func treeFixture(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string { t.Helper(); return repotest.Git(t, dir, args...) }
	git("init", "-q", "-b", "main")
	files := map[string]string{
		"README.md": "# Tree\n", "src/a.go": "package a\n", ".env": "TOKEN=x\n", "notes.txt": "keys\n" + fakesecret.PrivateKey(),
		"bin.dat": "\x00\x01binary", ".gitignore": "ignored.txt\n", "ignored.txt": "ignored\n",
		".gitattributes": "hidden.txt export-ignore\nsubst.txt export-subst\n", "hidden.txt": "not archived\n", "subst.txt": "at $Format:%H$\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link": "README.md", "envlink": ".env", "outlink": "../outside"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-f", ".")
	git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",sub")
	git("commit", "-q", "-m", "first")
	first := git("rev-parse", "HEAD")
	git("rm", "-q", "-r", "--cached", "src", ".env", "notes.txt", "bin.dat", "ignored.txt", "hidden.txt", "subst.txt", "link", "envlink", "outlink", "sub")
	git("commit", "-q", "-m", "second")
	return dir, first
}

// treeAt is the view of rev's files through a fresh Trees.
func treeAt(t *testing.T, dir, rev string) repo.View {
	t.Helper()
	view := repotest.Local(t, dir).View
	v, err := githistory.Revisions{Histories: &githistory.Local{}, Trees: &githistory.Trees{}}.At(context.Background(), view, "default", rev)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTreeKeepsTheViewsRules: a commit's files are read under every rule
// of the current view: denied paths and links to them, secrets in
// content, links out of the repository are refused; links inside are
// followed; a submodule is an empty folder; what search skips it skips;
// and a file is read as git stores it, whatever .gitattributes says of
// archives.
func TestTreeKeepsTheViewsRules(t *testing.T) {
	dir, first := treeFixture(t)
	v := treeAt(t, dir, first)
	tests := []struct {
		path string
		want string       // the content read
		code toolerr.Code // or the refusal
	}{
		{"README.md", "# Tree\n", ""},
		{"link", "# Tree\n", ""},
		{"hidden.txt", "not archived\n", ""},
		{"subst.txt", "at $Format:%H$\n", ""},
		{".env", "", toolerr.PathNotAllowed},
		{"envlink", "", toolerr.PathNotAllowed},
		{"outlink", "", toolerr.PathNotAllowed},
		{"notes.txt", "", toolerr.PathNotAllowed},
	}
	for _, tt := range tests {
		got, err := fs.ReadFile(v, tt.path)
		te, _ := errors.AsType[*toolerr.Error](err)
		switch {
		case tt.code == "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s: %q, %v; want %q", tt.path, got, err, tt.want)
		case tt.code != "" && (te == nil || te.Code != tt.code || len(got) > 0):
			t.Errorf("%s: %q, %v; want %s", tt.path, got, err, tt.code)
		}
	}
	if info, err := fs.Lstat(v, "link"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat of a link: %v %v", info, err)
	}
	if entries, err := fs.ReadDir(v, "sub"); err != nil || len(entries) != 0 {
		t.Errorf("a submodule: %v %v", entries, err)
	}
	var listed []string
	entries, _ := fs.ReadDir(v, ".")
	for _, e := range entries {
		listed = append(listed, e.Name())
	}
	if want := []string{".gitattributes", ".gitignore", "README.md", "bin.dat", "hidden.txt", "ignored.txt", "link", "notes.txt", "src", "sub", "subst.txt"}; !slices.Equal(listed, want) {
		t.Errorf("listed %q, want %q", listed, want)
	}
	files, err := v.Searchable(context.Background())
	var searched []string
	for _, f := range files {
		searched = append(searched, f.Path)
	}
	if want := []string{"README.md", "hidden.txt", "src/a.go", "subst.txt"}; err != nil || !slices.Equal(searched, want) {
		t.Errorf("searchable %q %v, want %q", searched, err, want)
	}
}

// TestTreesKeepWithinTheirBudget: a view counts its listing, and its
// searchable files once read; views past the budget are let go, the
// least recently used first.
func TestTreesKeepWithinTheirBudget(t *testing.T) {
	dir, first := treeFixture(t)
	ctx := context.Background()
	r, err := githistory.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tree, err := r.Tree(ctx, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	listing := tree.Memory()
	if _, err := tree.Searchable(ctx); err != nil {
		t.Fatal(err)
	}
	if listing <= 0 || tree.Memory() <= listing {
		t.Errorf("memory %d, then %d once searched", listing, tree.Memory())
	}

	view := repotest.Local(t, dir).View
	trees := &githistory.Trees{MaxBytes: listing + 1}
	a, _, err := trees.At(ctx, r, view, "ref", first)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, _ := trees.At(ctx, r, view, "ref", first); again != a {
		t.Error("a view kept was read again")
	}
	trees.At(ctx, r, view, "ref", "main")
	if again, _, _ := trees.At(ctx, r, view, "ref", first); again == a {
		t.Error("a view past the budget was kept")
	}
}

// TestObjectAfterAFailure: a read whose time is gone fails, an unknown
// object is ErrNoObject, and neither spoils the reads that follow (the
// program is shared).
func TestObjectAfterAFailure(t *testing.T) {
	r, _ := open(t)
	defer r.Close()
	head := mustResolve(t, r, "main")
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := r.Object(gone, head); !errors.Is(err, context.Canceled) {
		t.Errorf("a read with its time gone: %v", err)
	}
	if _, _, err := r.Object(context.Background(), strings.Repeat("0", 40)); !errors.Is(err, githistory.ErrNoObject) {
		t.Errorf("an unknown object: %v", err)
	}
	if kind, data, err := r.Object(context.Background(), head); err != nil || kind != "commit" || !strings.Contains(string(data), "Grow the app") {
		t.Errorf("then HEAD: %s %q %v", kind, data, err)
	}
}
