package githistory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

func open(t *testing.T) (*githistory.Repo, string) {
	t.Helper()
	dir := repotest.GitHistory(t)
	r, err := githistory.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func subjects(cs []githistory.Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Subject())
	}
	return out
}

func TestLog(t *testing.T) {
	r, _ := open(t)
	ctx := context.Background()
	head, err := r.Resolve(ctx, "ref", "main")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    githistory.LogQuery
		want []string
	}{
		{"all", githistory.LogQuery{}, []string{"Grow the app", "Merge branch 'feature'", "Document the server", "Rename server to app", "Add a logo", "Add the server"}},
		// A merge that brought a change to the first parent's line counts as
		// changing the path (--diff-merges=first-parent).
		{"a path", githistory.LogQuery{Path: "src/app.go"}, []string{"Grow the app", "Merge branch 'feature'", "Rename server to app"}},
		{"a path through its rename", githistory.LogQuery{Path: "src/app.go", Follow: true}, []string{"Grow the app", "Merge branch 'feature'", "Rename server to app", "Add the server"}},
		{"an author", githistory.LogQuery{Author: "GRACE"}, []string{"Grow the app", "Document the server", "Add a logo"}},
		{"a message", githistory.LogQuery{Grep: "server"}, []string{"Document the server", "Rename server to app", "Add the server"}},
		{"a page", githistory.LogQuery{Skip: 1, Max: 2}, []string{"Merge branch 'feature'", "Document the server"}},
		{"since", githistory.LogQuery{Since: repotest.GitStart.Add(4 * 3600e9)}, []string{"Grow the app", "Merge branch 'feature'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.From = head
			cs, err := r.Log(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := subjects(cs); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChangesAndPatches(t *testing.T) {
	r, _ := open(t)
	ctx := context.Background()
	cs, err := r.Log(ctx, githistory.LogQuery{From: mustResolve(t, r, "main")})
	if err != nil {
		t.Fatal(err)
	}
	logo, rename := cs[4], cs[3]
	ch, err := r.Changes(ctx, "", logo.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 2 || ch[0].Path != ".env" || ch[0].Status != "D" || ch[1].Path != "logo.png" || !ch[1].Binary || ch[1].Status != "A" {
		t.Fatalf("changes of %q: %+v", logo.Subject(), ch)
	}
	ch, err = r.Changes(ctx, "", rename.Hash)
	if err != nil || len(ch) != 1 || ch[0].Status != "R" || ch[0].OldPath != "src/server.go" || ch[0].Path != "src/app.go" {
		t.Fatalf("changes of %q: %+v %v", rename.Subject(), ch, err)
	}
	p, err := r.Patches(ctx, "", rename.Hash, ch)
	if err != nil {
		t.Fatal(err)
	}
	h := p[0].Hunks[0]
	if h.OldStart != 2 || h.NewStart != 2 || !slices.Contains(h.Lines, "-server line 5") || !slices.Contains(h.Lines, "+app line 5") {
		t.Errorf("hunk %+v", h)
	}
}

func TestBlameUncommitted(t *testing.T) {
	r, dir := open(t)
	p := filepath.Join(dir, "README.md")
	if err := os.WriteFile(p, []byte("# Demo\n\nThe server answers.\nNot yet committed.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := r.Blame(context.Background(), githistory.BlameQuery{Path: "README.md"})
	if err != nil {
		t.Fatal(err)
	}
	last := b.Hunks[len(b.Hunks)-1]
	if !b.Complete || last.Line != 4 || !last.Uncommitted() || b.Hunks[0].Author != "Ada" {
		t.Errorf("blame %+v", b)
	}
}

func mustResolve(t *testing.T, r *githistory.Repo, rev string) string {
	t.Helper()
	h, err := r.Resolve(context.Background(), "ref", rev)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestResolve(t *testing.T) {
	r, _ := open(t)
	tests := []struct {
		rev  string
		code toolerr.Code // "" resolves
	}{
		{"main", ""}, {"v1.0", ""}, {"feature", ""}, {"HEAD~2", ""}, {"main~1^2", ""},
		{"nope", toolerr.ResourceNotFound}, {"v9", toolerr.ResourceNotFound},
		{"--output=/tmp/x", toolerr.InvalidInput}, {"-p", toolerr.InvalidInput}, {"main..feature", toolerr.InvalidInput},
		{"HEAD:.env", toolerr.InvalidInput}, {"", toolerr.InvalidInput}, {"a b", toolerr.InvalidInput}, {"x\n", toolerr.InvalidInput},
	}
	for _, tt := range tests {
		h, err := r.Resolve(context.Background(), "ref", tt.rev)
		var te *toolerr.Error
		switch {
		case tt.code == "" && (err != nil || len(h) != 40):
			t.Errorf("%q: %q %v", tt.rev, h, err)
		case tt.code != "" && (!errors.As(err, &te) || te.Code != tt.code):
			t.Errorf("%q: want %s, got %v", tt.rev, tt.code, err)
		}
	}
}

func TestOpenRefusesAFolderInsideARepository(t *testing.T) {
	_, dir := open(t)
	if _, err := githistory.Open(context.Background(), filepath.Join(dir, "src")); !errors.Is(err, githistory.ErrNoHistory) {
		t.Errorf("a folder of a working tree: %v", err)
	}
	if _, err := githistory.Open(context.Background(), t.TempDir()); !errors.Is(err, githistory.ErrNoHistory) {
		t.Errorf("a folder without git: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	r, _ := open(t)
	first := mustResolve(t, r, "main~4")
	got, ok, err := r.ReadFile(context.Background(), first, "src/server.go")
	if err != nil || !ok || len(got) == 0 {
		t.Fatalf("%q %v %v", got, ok, err)
	}
	if _, ok, _ := r.ReadFile(context.Background(), first, "src/app.go"); ok {
		t.Error("a file the commit lacks was found")
	}
}

func TestBlameOutOfTimeAnswersWhatItHas(t *testing.T) {
	r, _ := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, err := r.Blame(ctx, githistory.BlameQuery{Path: "README.md", Rev: mustResolve(t, r, "main")})
	if err != nil || b.Complete {
		t.Errorf("blame with its time gone: %+v %v", b, err)
	}
}

// TestInheritedGitVariablesAreIgnored: a GIT_DIR in the server's
// environment does not make git read another repository.
func TestInheritedGitVariablesAreIgnored(t *testing.T) {
	r, _ := open(t)
	t.Setenv("GIT_DIR", t.TempDir())
	if _, err := r.Resolve(context.Background(), "ref", "main"); err != nil {
		t.Errorf("with GIT_DIR set elsewhere: %v", err)
	}
}

// TestPathsAreNeverOptions: a path that looks like an option is a path.
func TestPathsAreNeverOptions(t *testing.T) {
	r, _ := open(t)
	ctx := context.Background()
	head := mustResolve(t, r, "main")
	for _, p := range []string{"--output=/tmp/x", "-L1,2", "--all", ":(glob)**"} {
		if cs, err := r.Log(ctx, githistory.LogQuery{From: head, Path: p}); err != nil || len(cs) != 0 {
			t.Errorf("log of %q: %d commits, %v", p, len(cs), err)
		}
		if _, err := r.Blame(ctx, githistory.BlameQuery{Rev: head, Path: p}); err == nil {
			t.Errorf("blame of %q found a file", p)
		}
		if _, ok, err := r.ReadFile(ctx, head, p); ok || err != nil {
			t.Errorf("read of %q: %v %v", p, ok, err)
		}
	}
}

func FuzzCheckRev(f *testing.F) {
	for _, s := range []string{"main", "v1.0", "HEAD~2", "main^2", "-p", "--output=x", "a..b", "HEAD:.env", "a b", "x\x00", "@{-1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		if githistory.CheckRev("ref", rev) != nil {
			return
		}
		if rev == "" || rev[0] == '-' || strings.Contains(rev, "..") || strings.ContainsAny(rev, ": \\\x00\n") || len(rev) > githistory.MaxRevLen {
			t.Errorf("CheckRev accepted %q", rev)
		}
	})
}

// TestRepositoryDriversNeverRun: diff drivers a repository configures
// (a textconv program, an external diff) for its files never run, in
// blame, log, changes or patches: answers show the bytes git stores.
func TestRepositoryDriversNeverRun(t *testing.T) {
	r, dir := open(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "driver.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\ncat \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := "[diff \"evil\"]\n\ttextconv = " + script + "\n\tcommand = " + script + "\n"
	gitConfig, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	gitConfig.WriteString(config)
	gitConfig.Close()
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("* diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := mustResolve(t, r, "main")
	cs, err := r.Log(ctx, githistory.LogQuery{From: head})
	if err != nil {
		t.Fatal(err)
	}
	rename := cs[3]
	ch, err := r.Changes(ctx, "", rename.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Patches(ctx, "", rename.Hash, ch); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Blame(ctx, githistory.BlameQuery{Rev: head, Path: "README.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Blame(ctx, githistory.BlameQuery{Path: "README.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a diff driver the repository configures ran")
	}
}
