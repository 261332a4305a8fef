package pathmatch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/toolshed/toolshed/shared/pathmatch"
)

// deny is the repository's default deny list.
var deny = []string{"**/.env*", "**/secrets*", "**/*.key", "**/*.pem", "**/.git"}

// allow is an allow list like read_repo_file's.
var allow = []string{"docs/*", "README.md", "{a,b}/*.md"}

// deep is a path 2 MB long, 2^20 folders deep.
var deep = strings.Repeat("a/", 1<<20)

func TestMatch(t *testing.T) {
	denySet := mustNew(t, deny, pathmatch.IgnoreCase)
	allowSet := mustNew(t, allow, pathmatch.CaseSensitive)
	tests := []struct {
		set      *pathmatch.Set
		name     string
		pattern  string // "" for no match
		inFolder bool
	}{
		{denySet, ".env", "**/.env*", false},
		{denySet, "app/.env.production", "**/.env*", false},
		{denySet, ".ENV", "**/.env*", false},
		{denySet, "docs/.Env.d/x.txt", "**/.env*", true},
		{denySet, "Secrets.json", "**/secrets*", false},
		{denySet, "secrets/x/readme.md", "**/secrets*", true},
		{denySet, "a/b/id.KEY", "**/*.key", false},
		{denySet, "config/server.pem", "**/*.pem", false},
		{denySet, ".git", "**/.git", false},
		{denySet, "sub/.git/config", "**/.git", true},
		{denySet, ".gitignore", "", false},
		{denySet, "a/.gitx/y", "", false},
		{denySet, "envelope.go", "", false},
		{denySet, "docs/key-points.md", "", false},
		// Names no view passes on, matched as the strings they are.
		{denySet, "/main.go", "", false},
		{denySet, "/", "", false},
		{denySet, "/.env", "**/.env*", false},
		{denySet, "", "", false},
		{denySet, ".", "", false},
		{denySet, "..", "", false},
		{denySet, "a/", "", false},
		{denySet, ".env/", "**/.env*", true},
		{denySet, "a//.env", "**/.env*", false},
		{denySet, "a/../.env", "**/.env*", false},
		{denySet, "\xff/\xfe", "", false},
		{denySet, "\xff/.env", "**/.env*", false},
		{denySet, "\xff.pem", "**/*.pem", false},
		{denySet, "a\x00/.git/x", "**/.git", true},
		{denySet, deep + "main.go", "", false},
		{denySet, deep + ".env", "**/.env*", false},
		{denySet, deep + ".git/" + deep + "x", "**/.git", true},
		{allowSet, "README.md", "README.md", false},
		{allowSet, "readme.md", "", false},
		{allowSet, "docs/a.md", "docs/*", false},
		{allowSet, "docs/a/b.md", "docs/*", true},
		{allowSet, "docs", "", false},
		{allowSet, "docsx/a.md", "", false},
		{allowSet, "b/x.md", "{a,b}/*.md", false},
		{allowSet, "c/x.md", "", false},
		{allowSet, "/docs/a.md", "", false},
		{allowSet, "docs/" + deep, "docs/*", true},
	}
	for _, tc := range tests {
		name := tc.name
		if len(name) > 40 {
			name = name[:20] + "…" + name[len(name)-20:]
		}
		started := time.Now()
		m, ok := tc.set.Match(tc.name)
		took := time.Since(started)
		switch {
		case ok != (tc.pattern != "") || m.Pattern != tc.pattern || m.InFolder != tc.inFolder:
			t.Errorf("Match(%q) = %+v, %t; want pattern %q, in a folder %t", name, m, ok, tc.pattern, tc.inFolder)
		case ok && tc.set == denySet && deny[m.Index] != m.Pattern:
			t.Errorf("Match(%q): index %d is not %q", name, m.Index, m.Pattern)
		case took > time.Second: // a few milliseconds for 2 MB
			t.Errorf("Match(%q) took %s", name, took)
		}
	}
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"", "/abs/**", "docs/", "a/***/b", "[unclosed", "{a,b", `a\`} {
		if _, err := pathmatch.New([]string{"ok/*", bad}, pathmatch.CaseSensitive); err == nil {
			t.Errorf("New accepted %q", bad)
		}
		if pathmatch.Validate(bad) == nil {
			t.Errorf("Validate accepted %q", bad)
		}
	}
	empty := mustNew(t, nil, pathmatch.IgnoreCase)
	if m, ok := empty.Match("a/b"); ok {
		t.Errorf("an empty set matched: %+v", m)
	}
	// Patterns are reported as given, lower-cased or not.
	if m, ok := mustNew(t, []string{"**/*.SQLite"}, pathmatch.IgnoreCase).Match("db/x.sqlite"); !ok || m.Pattern != "**/*.SQLite" {
		t.Errorf("Match = %+v, %t; want the pattern as given", m, ok)
	}
}

func TestLiteral(t *testing.T) {
	const dir = `var/da*ta[1]{x,y}?\z`
	set := mustNew(t, []string{pathmatch.Literal(dir)}, pathmatch.IgnoreCase)
	tests := []struct {
		name string
		want bool
	}{
		{dir, true},
		{strings.ToUpper(dir), true},
		{dir + "/workspace/bob/a.txt", true},
		{"var/dataXta1xQ\\z", false},
		{"var/da*ta[1]{x,y}?", false},
		{"var/da*ta[1]{x,y}?\\z.txt", false},
		{"var", false},
	}
	for _, tc := range tests {
		if _, got := set.Match(tc.name); got != tc.want {
			t.Errorf("Match(%q) = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// FuzzMatch checks that Match ends for any pattern and path, and agrees
// with its definition: the pattern matches the path itself or the part of
// it before some "/".
func FuzzMatch(f *testing.F) {
	for _, p := range append(append([]string{"a/**", "*", "**", "{a,b/c}/*", `x\*`, "[a-c]?/d"}, deny...), allow...) {
		for _, name := range []string{".env", "a/.env.d/x", "/main.go", "", ".", "a/", "a//b", "\xff/.git/x", "docs/a/b.md", "B/c/d", "a/b/../c", strings.Repeat("a/", 500)} {
			f.Add(p, name)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		for _, c := range []pathmatch.Case{pathmatch.CaseSensitive, pathmatch.IgnoreCase} {
			set, err := pathmatch.New([]string{pattern}, c)
			if err != nil {
				return
			}
			m, ok := set.Match(name)
			p, n := pattern, name
			if c == pathmatch.IgnoreCase {
				p, n = strings.ToLower(p), strings.ToLower(n)
			}
			self := doublestar.MatchUnvalidated(p, n)
			folder := false
			for i := strings.LastIndexByte(n, '/'); i >= 0 && !folder; i = strings.LastIndexByte(n[:i], '/') {
				folder = doublestar.MatchUnvalidated(p, n[:i])
			}
			if ok != (self || folder) || (ok && m.InFolder == self) {
				t.Fatalf("Match(%q) with %q (case %d) = %+v, %t; the pattern matches the path: %t, a folder above it: %t",
					name, pattern, c, m, ok, self, folder)
			}
		}
	})
}

func mustNew(t *testing.T, patterns []string, c pathmatch.Case) *pathmatch.Set {
	t.Helper()
	s, err := pathmatch.New(patterns, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
