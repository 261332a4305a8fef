package repo_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// freshness is how soon a change must be seen by every tool.
const freshness = 2 * time.Second

// change is one edit of a working tree and what the view must show after it.
type change struct {
	name string
	do   func(t *testing.T, dir string)
	// want reports what is still missing from the searchable files (path
	// → content), or "" when the view shows the change.
	want func(files map[string]string) string
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func has(path, content string) func(map[string]string) string {
	return func(files map[string]string) string {
		if got, ok := files[path]; !ok || got != content {
			return fmt.Sprintf("%s = %q (present %t), want %q", path, got, ok, content)
		}
		return ""
	}
}

func lacks(paths ...string) func(map[string]string) string {
	return func(files map[string]string) string {
		for _, p := range paths {
			if _, ok := files[p]; ok {
				return p + " is still listed"
			}
		}
		return ""
	}
}

func all(checks ...func(map[string]string) string) func(map[string]string) string {
	return func(files map[string]string) string {
		for _, c := range checks {
			if msg := c(files); msg != "" {
				return msg
			}
		}
		return ""
	}
}

// changes are applied in order to one tree: each starts from what the
// previous left.
var changes = []change{
	{"edit", func(t *testing.T, dir string) { write(t, dir, "a.txt", "edited\n") }, has("a.txt", "edited\n")},
	{"edit keeping size and time", func(t *testing.T, dir string) {
		write(t, dir, "a.txt", "EDITED\n")
		os.Chtimes(filepath.Join(dir, "a.txt"), repotest.ModTime, repotest.ModTime)
	}, has("a.txt", "EDITED\n")},
	{"new untracked file", func(t *testing.T, dir string) { write(t, dir, "new.txt", "brand new\n") }, has("new.txt", "brand new\n")},
	{"delete", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "b/c.txt")) }, lacks("b/c.txt")},
	{"rename a file", func(t *testing.T, dir string) {
		os.Rename(filepath.Join(dir, "new.txt"), filepath.Join(dir, "renamed.txt"))
	}, all(lacks("new.txt"), has("renamed.txt", "brand new\n"))},
	{"new folders", func(t *testing.T, dir string) { write(t, dir, "x/y/z.txt", "deep\n") }, has("x/y/z.txt", "deep\n")},
	{"rename a folder", func(t *testing.T, dir string) {
		os.Rename(filepath.Join(dir, "x"), filepath.Join(dir, "w"))
	}, all(lacks("x/y/z.txt"), has("w/y/z.txt", "deep\n"))},
	{"write in a renamed folder", func(t *testing.T, dir string) { write(t, dir, "w/y/later.txt", "later\n") },
		all(has("w/y/later.txt", "later\n"), lacks("x/y/later.txt"))},
	{"atomic save", func(t *testing.T, dir string) {
		write(t, dir, ".a.txt.swp", "saved\n")
		os.Rename(filepath.Join(dir, ".a.txt.swp"), filepath.Join(dir, "a.txt"))
	}, all(has("a.txt", "saved\n"), lacks(".a.txt.swp"))},
	{"ignore a pattern", func(t *testing.T, dir string) {
		write(t, dir, "app.log", "log\n")
		write(t, dir, ".gitignore", "*.log\n")
	}, lacks("app.log")},
	{"stop ignoring it", func(t *testing.T, dir string) { write(t, dir, ".gitignore", "# nothing\n") }, has("app.log", "log\n")},
	{"a secret never shows", func(t *testing.T, dir string) {
		write(t, dir, "config/server.pem", "KEY\n")
		write(t, dir, "config/app.yaml", "port: 1\n")
	}, all(has("config/app.yaml", "port: 1\n"), lacks("config/server.pem"))},
	{"the data directory never shows", func(t *testing.T, dir string) {
		write(t, dir, "data/workspace/bob/diary.txt", "dear diary\n")
		write(t, dir, "data.txt", "next to it\n")
	}, all(has("data.txt", "next to it\n"), lacks("data/workspace/bob/diary.txt"))},
	{"binary", func(t *testing.T, dir string) { write(t, dir, "a.txt", "now\x00binary") }, lacks("a.txt")},
	{"delete a folder", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "w")) }, lacks("w/y/z.txt", "w/y/later.txt")},
	{"burst of 1,000 writes", func(t *testing.T, dir string) {
		for i := range 1000 {
			write(t, dir, fmt.Sprintf("burst/%02d/f%04d.txt", i%10, i), fmt.Sprintf("file %d\n", i))
		}
	}, func(files map[string]string) string {
		for i := range 1000 {
			p := fmt.Sprintf("burst/%02d/f%04d.txt", i%10, i)
			if files[p] != fmt.Sprintf("file %d\n", i) {
				return p + " is missing or stale"
			}
		}
		return ""
	}},
}

// TestLocalFollowsTheTree makes each change and checks that the view shows
// it within freshness, following events and, separately, revalidating by
// stat.
func TestLocalFollowsTheTree(t *testing.T) {
	for _, mode := range []repo.LocalOptions{
		{Watch: config.WatchAuto},
		{Watch: config.WatchPoll, Poll: 100 * time.Millisecond},
		{Watch: config.WatchAuto, CompressAbove: 1}, // contents held compressed
	} {
		t.Run(fmt.Sprintf("%s, compressed above %d", mode.Watch, mode.CompressAbove), func(t *testing.T) {
			dir := repotest.WriteDir(t, map[string]string{"a.txt": "one\n", "b/c.txt": "two\n", "keep.txt": "unchanged\n"})
			policy, err := repo.LocalPolicy(dir, filepath.Join(dir, "data"), nil)
			if err != nil {
				t.Fatal(err)
			}
			mode.Policy = policy
			view, err := repo.NewLocal(dir, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer view.Close()
			if want := map[bool]string{true: "polling", false: "events"}[mode.Watch == config.WatchPoll]; view.Watching() != want {
				t.Errorf("watching by %s, want %s", view.Watching(), want)
			}
			ctx := context.Background()
			first, err := view.Searchable(ctx)
			if err != nil {
				t.Fatal(err)
			}
			keep := first[slices.IndexFunc(first, func(f *repo.File) bool { return f.Path == "keep.txt" })]
			prev := contents(t, view)
			for _, c := range changes {
				before := view.Version()
				c.do(t, dir)
				files := waitFor(t, view, c.want)
				if msg := c.want(files); msg != "" {
					t.Fatalf("%s: not seen within %s: %s", c.name, freshness, msg)
				}
				if !maps.Equal(files, prev) && view.Version() <= before {
					t.Errorf("%s: the files changed but version %d did not move past %d", c.name, view.Version(), before)
				}
				prev = files
			}
			// A file nothing touched is the same *File throughout.
			files, _ := view.Searchable(ctx)
			if i := slices.IndexFunc(files, func(f *repo.File) bool { return f.Path == "keep.txt" }); i < 0 || files[i] != keep {
				t.Errorf("keep.txt was replaced although it never changed")
			}
			if !slices.IsSortedFunc(files, func(a, b *repo.File) int { return walkCompare(a.Path, b.Path) }) {
				t.Errorf("files are not in walk order")
			}
		})
	}
}

// waitFor returns the view's files (path → content) once want is
// satisfied, or after freshness.
func waitFor(t *testing.T, view repo.View, want func(map[string]string) string) map[string]string {
	t.Helper()
	deadline := time.After(freshness)
	for {
		v := view.Version()
		got := contents(t, view)
		if want(got) == "" {
			return got
		}
		select {
		case <-view.Changed(v):
		case <-time.After(20 * time.Millisecond): // events may be pending
		case <-deadline:
			return got
		}
	}
}

// contents returns the view's searchable files, path → content.
func contents(t *testing.T, view repo.View) map[string]string {
	t.Helper()
	files, err := view.Searchable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string, len(files))
	for _, f := range files {
		got[f.Path] = f.Text()
	}
	return got
}

// walkCompare is the order of a walk: segment by segment.
func walkCompare(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func TestLocalPolicyPlacesTheDataDirectory(t *testing.T) {
	repoDir := t.TempDir()
	tests := []struct {
		name, data string
		want       string // the data directory inside the repository; "error" when refused
	}{
		{"inside", filepath.Join(repoDir, ".toolshed"), ".toolshed"},
		{"deeper, not there yet", filepath.Join(repoDir, "var", "Data"), "var/data"},
		{"elsewhere", t.TempDir(), ""},
		{"none", "", ""},
		{"the repository itself", repoDir, "error"},
		{"holding the repository", filepath.Dir(repoDir), "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := repo.LocalPolicy(repoDir, tc.data, nil)
			switch {
			case tc.want == "error":
				if err == nil {
					t.Fatalf("accepted data directory %s for repository %s", tc.data, repoDir)
				}
			case err != nil:
				t.Fatal(err)
			case p.DataDir() != tc.want:
				t.Errorf("data directory inside the repository: %q, want %q", p.DataDir(), tc.want)
			}
		})
	}
	// Through a symbolic link to the repository, the data directory is
	// still found inside it.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repoDir, link); err != nil {
		t.Fatal(err)
	}
	if p, err := repo.LocalPolicy(link, filepath.Join(repoDir, ".toolshed"), nil); err != nil || p.DataDir() != ".toolshed" {
		t.Errorf("through a link: %v, %v", p, err)
	}
}

func TestPolicyChecks(t *testing.T) {
	extra, err := repo.ParseDeny([]string{"*.sqlite", " private/", "/config/prod/*"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := repo.NewPolicy(extra, ".toolshed")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		why  string // "" when allowed; else a piece of the refusal
	}{
		{"README.md", ""},
		{"src/app.ts", ""},
		{"envelope.go", ""},
		{"docs/key-points.md", ""},
		{".env", "rule env-file"},
		{"app/.env.production", "rule env-file"},
		{"Secrets.json", "rule secrets-file"},
		{"config/server.PEM", `"*.pem" (rule pem-file`},
		{"a/b/id.key", `"*.key"`},
		{"id_rsa", `"*_rsa" (rule ssh-private-key: a private SSH key)`},
		{"deploy/keys/id_ED25519", "rule ssh-private-key"},
		{"home/.ssh/config", `lies in a folder matching ".ssh" (rule ssh-folder`},
		{".aws/credentials", "rule aws-credentials"},
		{".netrc", "rule netrc"},
		{".git-credentials", "rule git-credentials"},
		{"web/.npmrc", "rule npmrc"},
		{".pgpass", "rule pgpass"},
		{"certs/client.p12", "rule pkcs12-file"},
		{"infra/terraform.tfstate", "rule terraform-state"},
		{"infra/terraform.tfstate.backup", "rule terraform-state"},
		{".bash_history", "rule shell-history"},
		{"crypto/rsa/rsa.go", ""},
		{"cmd/go/internal/auth/netrc.go", ""},
		{"aws/credentials.go", ""},
		{"docs/ssh.md", ""},
		{"src/.gitignore", ""},
		{"rsa_test.go", ""},
		{"secrets/x/readme.md", "lies in a folder matching"},
		{".git/HEAD", "git's own folder"},
		{"sub/.git/config", "git's own folder"},
		{".toolshed/toolshed.db", "server's data directory"},
		{".TOOLSHED/workspace/bob/a.txt", "server's data directory"},
		{".toolshed", "server's data directory"},
		{".toolshed-notes.md", ""},
		{"db/cache.sqlite", "TOOLSHED_REPO_DENY"},
		{"private/plan.md", "TOOLSHED_REPO_DENY"},
		{"src/private/plan.md", "TOOLSHED_REPO_DENY"},
		{"config/prod/db.yaml", "TOOLSHED_REPO_DENY"},
		{"x/config/prod/db.yaml", ""},
		// Names no view passes on still get an answer, at once.
		{"/main.go", ""},
		{"/.env", "rule env-file"},
		{"", ""},
		{".", ""},
		{"a/", ""},
		{".git/", "git's own folder"},
		{"a/../.env", "rule env-file"},
		{"\xff/id.key", `"*.key"`},
		{strings.Repeat("a/", 1<<16) + "main.go", ""},
		{strings.Repeat("a/", 1<<16) + ".env.local", "rule env-file"},
	}
	for _, tc := range tests {
		err := p.Check(tc.path)
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%.60s refused: %.200v", tc.path, err)
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%.60s: %.200v, want a refusal saying %q", tc.path, err, tc.why)
		}
	}
	for _, bad := range []string{"a[", `c:\x`, "!id_rsa", " !.env*", "!/.aws/credentials"} {
		if _, err := repo.ParseDeny([]string{"*.db", bad}); err == nil {
			t.Errorf("ParseDeny(%q) accepted", bad)
		}
	}
}

// FuzzPolicyCheck checks that Check answers at once for any name, always
// with PATH_NOT_ALLOWED, and that on valid paths it follows the folder
// rule: a refused folder refuses everything in it, and the case of ASCII
// letters never matters.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []string{"README.md", ".env", "a/.ENV.d/x", "/main.go", "", ".", "a/", "a//b", "./a", "a/../.git/x",
		"\xff/x.pem", ".toolshed/db", "x/.Toolshed/y", "db/cache.sqlite", "Secrets/x", strings.Repeat("a/", 300) + "id.key"} {
		f.Add(s)
	}
	extra, err := repo.ParseDeny([]string{"*.sqlite", "config/prod/*"})
	if err != nil {
		f.Fatal(err)
	}
	p, err := repo.NewPolicy(extra, "x/.toolshed")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := p.Check(name)
		if err != nil && toolerr.From(err).Code != toolerr.PathNotAllowed {
			t.Fatalf("Check(%q) = %v, want PATH_NOT_ALLOWED", name, err)
		}
		if !fs.ValidPath(name) {
			return
		}
		ascii := !strings.ContainsFunc(name, func(r rune) bool { return r >= utf8.RuneSelf }) // ToUpper then ToLower may change other letters ('ı')
		if upper := p.Check(strings.ToUpper(name)); ascii && (upper == nil) != (err == nil) {
			t.Fatalf("Check(%q) = %v but Check of it in upper case = %v", name, err, upper)
		}
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if p.Check(dir) != nil && err == nil {
				t.Fatalf("Check(%q) allows it, but refuses the folder %s", name, dir)
			}
		}
	})
}

// TestLocalBeyondItsMemoryBudget: files beyond CacheBytes are not held in
// memory but still searched, read from disk each time, and fresh.
func TestLocalBeyondItsMemoryBudget(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat(fmt.Sprintf("line of file %d\n", i), 100) // 1.5 KB each
	}
	dir := repotest.WriteDir(t, files)
	view, err := repo.NewLocal(dir, repo.LocalOptions{CacheBytes: 10 << 10}) // room for a few
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	got := contents(t, view)
	if len(got) != 20 {
		t.Fatalf("%d files searchable, want 20", len(got))
	}
	for p, want := range files {
		if got[p] != want {
			t.Errorf("%s: %d bytes, want %d", p, len(got[p]), len(want))
		}
	}
	write(t, dir, "f19.txt", "changed\n")
	if files := waitFor(t, view, has("f19.txt", "changed\n")); files["f19.txt"] != "changed\n" {
		t.Errorf("a file beyond the budget is not fresh: %q", files["f19.txt"])
	}
}

// TestLocalDoneOnceClosed: a local view is served until it is closed,
// whatever its followers hold.
func TestLocalDoneOnceClosed(t *testing.T) {
	view, err := repo.NewLocal(repotest.WriteDir(t, map[string]string{"a.txt": "a\n"}), repo.LocalOptions{CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	view.Hold(1 << 30)
	if done(view) {
		t.Error("an open view is done")
	}
	view.Close()
	if !done(view) {
		t.Error("a closed view is not done")
	}
}
