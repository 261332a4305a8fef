package pathmatch_test

import (
	"io/fs"
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

// deep is a path 128 KB long, 2^16 folders deep.
var deep = strings.Repeat("a/", 1<<16)

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
		case took > 5*time.Second: // milliseconds; the bound only catches a loop

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

// sets are the kinds of pattern lists the policies hold: the default deny
// list, an allow list, and patterns as deployments configure them.
var sets = []struct {
	patterns []string
	c        pathmatch.Case
}{
	{deny, pathmatch.IgnoreCase},
	{allow, pathmatch.CaseSensitive},
	{[]string{"**/*.sqlite", "**/private", "config/prod/*", "**/node_modules", "docs/**", "**", "a/**/b/*.go", "x/?[a-c]*/{y,z/w}"}, pathmatch.IgnoreCase},
}

// FuzzMatch checks that Match ends for any pattern and path, and that on
// the policies' kinds of patterns and any valid path (fs.ValidPath, the
// only kind the views pass on) it agrees with its definition: the first
// pattern that matches the path itself or the part of it before some "/".
func FuzzMatch(f *testing.F) {
	for _, name := range []string{".env", "a/.env.d/x", "/main.go", "", ".", "a/", "a//b", "\xff/.git/x", "docs", "docs/a/b.md",
		"B/c/d", "a/b/../c", "x/Pb/z/w/v", "a/q/r/b/c.go", strings.Repeat("a/", 500) + "SECRETS"} {
		for _, p := range []string{"**/.env*", "docs/*", "{a,b/c}/*", `x\*`, "[a-c]?/d", "**/a/**/b", "[", "/x", "a/"} {
			f.Add(p, name)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if set, err := pathmatch.New([]string{pattern}, pathmatch.IgnoreCase); err == nil {
			set.Match(name) // ends, whatever the pattern and path
		}
		if !fs.ValidPath(name) {
			return
		}
		for _, s := range sets {
			m, ok := mustNew(t, s.patterns, s.c).Match(name)
			want, wantFolder := firstMatch(s.patterns, s.c, name)
			if ok != (want >= 0) || (ok && (m.Index != want || m.InFolder != wantFolder)) {
				t.Fatalf("Match(%q) in %q = %+v, %t; want pattern %d, in a folder %t", name, s.patterns, m, ok, want, wantFolder)
			}
		}
	})
}

// firstMatch is Match by its definition, folder by folder: the index of
// the first pattern that matches name or a folder above it (-1 for none),
// and whether it matched a folder rather than name itself.
func firstMatch(patterns []string, c pathmatch.Case, name string) (int, bool) {
	for i, p := range patterns {
		if c == pathmatch.IgnoreCase {
			p, name = strings.ToLower(p), strings.ToLower(name)
		}
		if doublestar.MatchUnvalidated(p, name) {
			return i, false
		}
		for j := strings.LastIndexByte(name, '/'); j >= 0; j = strings.LastIndexByte(name[:j], '/') {
			if doublestar.MatchUnvalidated(p, name[:j]) {
				return i, true
			}
		}
	}
	return -1, false
}

func mustNew(t *testing.T, patterns []string, c pathmatch.Case) *pathmatch.Set {
	t.Helper()
	s, err := pathmatch.New(patterns, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
