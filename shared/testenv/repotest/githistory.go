package repotest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// GitStart is the date of GitHistory's first commit; each next one is an
// hour later.
var GitStart = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)

// GitHistory makes a git repository with a known history in a new
// temporary directory and returns the directory. Its commits have fixed
// authors and dates, so their ids are the same on every run:
//
//	1 Ada    "Add the server"         README.md, src/server.go, .env (a denied file)
//	2 Grace  "Add a logo"             logo.png (binary), .env deleted
//	3 Ada    "Rename server to app"   src/server.go → src/app.go, one line changed (branch feature)
//	4 Grace  "Document the server"    README.md (main)
//	5 Ada    "Merge branch 'feature'" (main; tag v1.0, annotated)
//	6 Grace  "Grow the app"           src/app.go, two lines added
//
// HEAD is main at commit 6; the branch feature stays at commit 3.
func GitHistory(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	g := gitFixture{tb: tb, dir: dir}
	g.run("init", "-q", "-b", "main")
	server := numbered("server", 10)
	g.commit(1, "Add the server", map[string]string{"README.md": "# Demo\n", "src/server.go": server, ".env": "API_KEY=fixture-not-a-secret\n"})
	g.commit(2, "Add a logo", map[string]string{"logo.png": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01", ".env": ""})
	g.run("checkout", "-q", "-b", "feature")
	g.run("mv", "src/server.go", "src/app.go")
	g.commit(3, "Rename server to app", map[string]string{"src/app.go": strings.Replace(server, "server line 5", "app line 5", 1)})
	g.run("checkout", "-q", "main")
	g.commit(4, "Document the server", map[string]string{"README.md": "# Demo\n\nThe server answers.\n"})
	g.env = g.dates(5)
	g.run("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	g.run("tag", "-a", "-m", "First release", "v1.0")
	app, _ := os.ReadFile(filepath.Join(dir, "src/app.go"))
	g.commit(6, "Grow the app", map[string]string{"src/app.go": string(app) + "grown line 1\ngrown line 2\n"})
	return dir
}

// numbered is n lines "<word> line i".
func numbered(word string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", word, i)
	}
	return b.String()
}

type gitFixture struct {
	tb  testing.TB
	dir string
	env []string
}

// dates is the environment of commit i: its author and dates.
func (g *gitFixture) dates(i int) []string {
	who := [][2]string{{"Ada", "ada@example.com"}, {"Grace", "grace@example.com"}}[(i+1)%2]
	at := GitStart.Add(time.Duration(i-1) * time.Hour).Format(time.RFC3339)
	return []string{"GIT_AUTHOR_NAME=" + who[0], "GIT_AUTHOR_EMAIL=" + who[1], "GIT_AUTHOR_DATE=" + at,
		"GIT_COMMITTER_NAME=" + who[0], "GIT_COMMITTER_EMAIL=" + who[1], "GIT_COMMITTER_DATE=" + at}
}

// commit writes files (an empty content deletes the file) and commits
// them as commit i.
func (g *gitFixture) commit(i int, message string, files map[string]string) {
	g.tb.Helper()
	for name, content := range files {
		p := filepath.Join(g.dir, filepath.FromSlash(name))
		if content == "" {
			g.run("rm", "-q", "--", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			g.tb.Fatal(err)
		}
		g.run("add", "--", name)
	}
	g.env = g.dates(i)
	g.run("commit", "-q", "-m", message)
}

func (g *gitFixture) run(args ...string) string {
	g.tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Env = append(cmd.Env, g.env...)
	if len(g.env) == 0 {
		cmd.Env = append(cmd.Env, g.dates(1)...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// authorT is the author and committer of Git and GitCommit, dated now.
var authorT = []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"}

// Git runs git with args in dir as author T, with no user or system
// configuration, and returns what it printed, trimmed; it fails tb when
// git fails.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	g := gitFixture{tb: tb, dir: dir, env: authorT}
	return g.run(args...)
}

// GitCommit commits files (written over what is there) to the repository
// in dir, as author T, dated now.
func GitCommit(tb testing.TB, dir, message string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "-m", message)
}
