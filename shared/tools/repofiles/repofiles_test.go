package repofiles_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/memory"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
)

const (
	alice = "alice" // the tenant whose repository the fixture is
	bob   = "bob"
)

// fixture is a repository with files for every rule.
var fixture = map[string]string{
	"README.md":                          "# Fixture\n",
	"CLAUDE.md":                          "Be brief.\n",
	"app/go.mod":                         "module example.com/app\n\ngo 1.22\n",
	"docs/guide.md":                      "guide\n",
	"docs/deep/er/notes.md":              "deep\n",
	"docs/exact.md":                      strings.Repeat("a", repofiles.RepoFileMaxBytes),
	"docs/big.md":                        strings.Repeat("a", repofiles.RepoFileMaxBytes+1),
	"docs/latin1.md":                     "caf\xe9\n",
	"docs/secrets.yaml":                  "password: x\n",
	"docs/deploy.key":                    "KEY\n",
	"docs/a/b/c.pem":                     "PEM\n",
	"docs/.env":                          "SECRET=1\n",
	"docs/sub/.git/config":               "[core]\n",
	"stacks/tls/server.pem":              "PEM\n",
	"paths/intro.md":                     "intro\n",
	".claude/skills/review/SKILL.md":     "# Review\n",
	".claude/commands/ship.md":           "ship it\n",
	".claude/memory/decisions.jsonl":     `{"timestamp":"2025-01-10T09:00:00Z","decision":"committed"}` + "\n",
	".claude/memory/best_practices.md":   "- Committed practice.", // no final newline
	".env":                               "SECRET=1\n",
	".env.local":                         "SECRET=2\n",
	"config/.env":                        "SECRET=3\n",
	"config/secrets.yaml":                "password: x\n",
	".git/config":                        "[core]\n",
	"node_modules/x/y.js":                "module.exports = 1\n",
	"web/node_modules/x.js":              "module.exports = 2\n",
	"a/b/c.pem":                          "PEM\n",
	"src/exact.txt":                      strings.Repeat("b", repofiles.FileMaxBytes),
	"src/big.txt":                        strings.Repeat("b", repofiles.FileMaxBytes+1),
	"src/binary.dat":                     "\x00\x01\x02\xff",
	"src/server/auth/AuthService.ts":     "import { TokenManager } from './TokenManager';\nexport class AuthService {}\n",
	"src/server/auth/TokenManager.ts":    "export class TokenManager {}\n",
	"src/%2e%2e/%2e%2e/etc/passwd":       "a literal folder named %2e%2e\n",
	"app/main.go":                        "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/app/internal/util\"\n\t\"github.com/x/y\"\n\t_ \"example.com/app/missing\"\n)\n\nfunc main() { fmt.Println(util.X, y.Z) }\n",
	"app/internal/util/util.go":          "package util\n\nconst X = 1\n",
	"app/internal/util/helper.go":        "package util\n",
	"app/internal/util/util_test.go":     "package util\n",
	"py/pkg/__init__.py":                 "",
	"py/pkg/core.py":                     "import os, json\nfrom . import helpers\nfrom .models import User\nfrom .. import nothing_here\nimport pkg.extra\nfrom pkg import sub\n",
	"py/pkg/helpers.py":                  "def help(): pass\n",
	"py/pkg/models.py":                   "class User: pass\n",
	"pkg/extra.py":                       "X = 1\n",
	"pkg/__init__.py":                    "",
	"pkg/sub/__init__.py":                "",
	"tsconfig.json":                      "{\n  // comment\n  \"compilerOptions\": {\"baseUrl\": \".\", \"paths\": {\"@/*\": [\"web/src/*\"]},},\n}\n",
	"web/src/a.ts":                       tsSource,
	"web/src/b.ts":                       "export const b = 1;\n",
	"web/lib/index.ts":                   "export const lib = 1;\n",
	"web/src/c.ts":                       "export const c = 1;\n",
	"web/src/d.js":                       "module.exports = 1;\n",
	"web/src/e.tsx":                      "export default 1;\n",
	"web/src/types.d.ts":                 "export type X = number;\n",
	"web/src/f.ts":                       "export const f = 1;\n",
	"web/src/node_modules/evil/index.ts": "export const evil = 1;\n",
	"gen/big.go":                         generated(110_000), // 3.3 MB
}

// generated is a generated Go file of n lines after its header, of 30 bytes
// each.
func generated(n int) string {
	var b strings.Builder
	b.WriteString("// Code generated for tests. DO NOT EDIT.\n\npackage gen\n\n")
	for i := range n {
		fmt.Fprintf(&b, "var v%06d = %06d // %s\n", i, i, "xxxxx")
	}
	return b.String()
}

const tsSource = `import { b } from './b.js';
import { lib } from '../lib';
import { c } from '@/c';
import React from 'react';
import { thing } from '@scope/pkg/deep';
import type { X } from './types';
export * from './f';
// import { nope } from './commented-out';
/* import { nope2 } from './block-comment'; */
const url = "http://example.com/x"; // a string, not a comment
const d = require('./d');
const e = await import('./e');
import { gone } from './missing';
import { evil } from './node_modules/evil';
`

type readRepoResult struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Exists  bool   `json:"exists"`
	Size    int    `json:"size"`
}

type dep struct {
	Path    string  `json:"path"`
	Type    string  `json:"type"`
	Level   int     `json:"level"`
	Content *string `json:"content"`
	Note    string  `json:"note"`
}

type readFileResult struct {
	File struct {
		Path     string `json:"path"`
		Content  string `json:"content"`
		Size     int    `json:"size"`
		Lines    int    `json:"lines"`
		Language string `json:"language"`
		Range    *struct {
			StartLine int  `json:"startLine"`
			EndLine   int  `json:"endLine"`
			More      bool `json:"more"`
		} `json:"range"`
	} `json:"file"`
	Dependencies []dep `json:"dependencies"`
	Metadata     struct {
		Module       *string `json:"module"`
		Role         *string `json:"role"`
		LastModified *string `json:"lastModified"`
	} `json:"metadata"`
}

// env is both tools and the memory tools over one source and a fresh
// embedded store.
type env struct {
	*tooltest.Harness
	st store.Stores
}

func newEnv(t *testing.T, src repo.Source) env {
	t.Helper()
	st := tooltest.BoltStores(t)
	clock := tooltest.NewClock()
	tools := append(repofiles.Tools(src, githistory.Revisions{}, st.Memory, st.Access, clock.Now), memory.Tools(st.Memory, clock.Now, cursor.RandomKey())...)
	return env{Harness: tooltest.New(t, st, tools), st: st}
}

// TestTools runs every test on the local directory and on its S3 zip
// snapshot (moto_server).
func TestTools(t *testing.T) {
	s3 := repotest.StartS3(t)
	dir := repotest.WriteDir(t, fixture)
	for _, src := range s3.Sources(t, alice, dir) {
		t.Run(src.Name, func(t *testing.T) {
			for _, tc := range toolTests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, newEnv(t, src.Source)) })
			}
		})
	}
	t.Run("local symbolic links", testSymlinks)
	t.Run("no repository", func(t *testing.T) { testNoRepository(t, s3) })
}

var toolTests = []struct {
	name string
	run  func(t *testing.T, e env)
}{
	{"read_repo_file allowed", testRepoFileAllowed},
	{"read_repo_file refused", testRepoFileRefused},
	{"memory overlay", testMemoryOverlay},
	{"read_file", testReadFile},
	{"read_file refused", testReadFileRefused},
	{"read_file ranges of a large file", testLargeFileRanges},
	{"access counting", testAccess},
	{"go dependencies", testGoDeps},
	{"typescript dependencies", testTSDeps},
	{"python dependencies", testPythonDeps},
}

func testRepoFileAllowed(t *testing.T, e env) {
	for _, p := range []string{"README.md", "CLAUDE.md", "docs/guide.md", "docs/deep/er/notes.md", "docs/exact.md",
		"paths/intro.md", ".claude/skills/review/SKILL.md", ".claude/commands/ship.md"} {
		var out readRepoResult
		e.OK(t, alice, repofiles.ReadRepoFileTool, fmt.Sprintf(`{"path":%q}`, p), &out)
		if out.Path != p || out.Content != fixture[p] || !out.Exists || out.Size != len(fixture[p]) {
			t.Errorf("%s: got %+v", p, short(out))
		}
	}
}

func testRepoFileRefused(t *testing.T, e env) {
	checkRefusals(t, e, repofiles.ReadRepoFileTool, []refusal{
		{".env", toolerr.PathNotAllowed},
		{".env.local", toolerr.PathNotAllowed},
		{"docs/.env", toolerr.PathNotAllowed},
		{"config/secrets.yaml", toolerr.PathNotAllowed},
		{"docs/secrets.yaml", toolerr.PathNotAllowed},
		{"docs/deploy.key", toolerr.PathNotAllowed},
		{"a/b/c.pem", toolerr.PathNotAllowed},
		{"docs/a/b/c.pem", toolerr.PathNotAllowed},
		{"stacks/tls/server.pem", toolerr.PathNotAllowed},
		{".git/config", toolerr.PathNotAllowed},
		{"docs/sub/.git/config", toolerr.PathNotAllowed},
		{"node_modules/x/y.js", toolerr.PathNotAllowed},
		{"go.mod", toolerr.PathNotAllowed},
		{"docs", toolerr.PathNotAllowed},
		{"docs/deep", toolerr.InvalidInput}, // a folder
		{"docs/big.md", toolerr.SizeLimitExceeded},
		{"docs/latin1.md", toolerr.InvalidInput},
		{"docs/missing.md", toolerr.ResourceNotFound},
		{"docs/guide.md/x", toolerr.ResourceNotFound},
		{"../../../etc/passwd", toolerr.InvalidInput},
		{"docs/../.env", toolerr.InvalidInput},
		{"/etc/passwd", toolerr.InvalidInput},
		{"docs/%2e%2e/x", toolerr.InvalidInput},
		{"docs\\guide.md", toolerr.InvalidInput},
		{"docs/guide.md\x00", toolerr.InvalidInput},
	})
	// Raw invalid UTF-8 on the wire (json.Marshal would replace it).
	e.Fail(t, alice, repofiles.ReadRepoFileTool, "{\"path\":\"docs/\xff.md\"}", toolerr.InvalidInput)
}

func testMemoryOverlay(t *testing.T, e env) {
	write := func(tenant, args string) {
		e.OK(t, tenant, memory.WriteTool, args, nil)
	}
	write(alice, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","decision":"first"}}`)
	write(alice, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T11:00:00Z","decision":"second"}}`)
	write(alice, `{"file":"best_practices.md","content":"- Appended practice."}`)
	write(alice, `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","event":"start"}}`)
	write(bob, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","decision":"bob's"}}`)

	tests := []struct {
		tenant, path, want string
	}{
		{alice, ".claude/memory/decisions.jsonl", fixture[".claude/memory/decisions.jsonl"] +
			`{"timestamp":"2025-01-15T10:00:00Z","decision":"first"}` + "\n" +
			`{"timestamp":"2025-01-15T11:00:00Z","decision":"second"}` + "\n"},
		{alice, ".claude/memory/best_practices.md", "- Committed practice.\n\n- Appended practice.\n"},
		{alice, ".claude/memory/progress_log.jsonl", `{"timestamp":"2025-01-15T10:00:00Z","event":"start"}` + "\n"},
		// bob reads alice's repository only if it is his; here he has no
		// snapshot on S3 and the shared directory locally.
	}
	for _, tc := range tests {
		var out readRepoResult
		e.OK(t, tc.tenant, repofiles.ReadRepoFileTool, fmt.Sprintf(`{"path":%q}`, tc.path), &out)
		if out.Content != tc.want || out.Size != len(tc.want) {
			t.Errorf("%s as %s:\n got %q\nwant %q", tc.path, tc.tenant, out.Content, tc.want)
		}
	}
	// Another tenant's entries never show.
	var out readRepoResult
	e.OK(t, bob, repofiles.ReadRepoFileTool, `{"path":".claude/memory/decisions.jsonl"}`, &out)
	if strings.Contains(out.Content, "first") || !strings.Contains(out.Content, "bob's") {
		t.Errorf("bob reads %q", out.Content)
	}
	e.Fail(t, bob, repofiles.ReadRepoFileTool, `{"path":".claude/memory/progress_log.jsonl"}`, toolerr.ResourceNotFound)
	// Other files in the memory folder are plain files.
	e.Fail(t, alice, repofiles.ReadRepoFileTool, `{"path":".claude/memory/other.md"}`, toolerr.ResourceNotFound)

	// Past 100 KB in all, read_memory is the way.
	for range 25 {
		write(alice, fmt.Sprintf(`{"file":"best_practices.md","content":%q}`, strings.Repeat("x", 4500)))
	}
	err := e.Fail(t, alice, repofiles.ReadRepoFileTool, `{"path":".claude/memory/best_practices.md"}`, toolerr.SizeLimitExceeded)
	if !strings.Contains(err.Message, "read_memory") {
		t.Errorf("message %q does not point to read_memory", err.Message)
	}
}

func testReadFile(t *testing.T, e env) {
	tests := []struct {
		path, lang, module, role string
		lines                    int
	}{
		{"src/server/auth/AuthService.ts", "typescript", "auth", "core", 2},
		{"app/main.go", "go", "main", "core", 10},
		{"app/internal/util/util_test.go", "go", "util", "test", 1},
		{"py/pkg/core.py", "python", "pkg", "core", 6},
		{"docs/guide.md", "markdown", "docs", "docs", 1},
		{"README.md", "markdown", "", "docs", 1},
		{"tsconfig.json", "json", "", "config", 4},
		{".claude/memory/best_practices.md", "markdown", ".claude", "docs", 1},
		{"src/exact.txt", "text", "src", "other", 1},
		{"py/pkg/__init__.py", "python", "pkg", "core", 0},
	}
	for _, tc := range tests {
		var out readFileResult
		e.OK(t, alice, repofiles.ReadFileTool, fmt.Sprintf(`{"path":%q}`, tc.path), &out)
		f, m := out.File, out.Metadata
		if f.Path != tc.path || f.Content != fixture[tc.path] || f.Size != len(fixture[tc.path]) || f.Lines != tc.lines || f.Language != tc.lang {
			t.Errorf("%s: file %s %d bytes %d lines %s", tc.path, f.Path, f.Size, f.Lines, f.Language)
		}
		if deref(m.Module) != tc.module || deref(m.Role) != tc.role || deref(m.LastModified) != "2025-01-15T09:00:00Z" {
			t.Errorf("%s: module %q role %q modified %q, want %q %q", tc.path, deref(m.Module), deref(m.Role), deref(m.LastModified), tc.module, tc.role)
		}
		if out.Dependencies == nil || len(out.Dependencies) != 0 {
			t.Errorf("%s: dependencies %v without includeDeps", tc.path, out.Dependencies)
		}
	}
	var out readFileResult
	e.OK(t, alice, repofiles.ReadFileTool, `{"path":"src/server/auth/AuthService.ts","includeDeps":true,"maxDepth":0}`, &out)
	if len(out.Dependencies) != 0 {
		t.Errorf("maxDepth 0 loaded %v", out.Dependencies)
	}
}

func testReadFileRefused(t *testing.T, e env) {
	checkRefusals(t, e, repofiles.ReadFileTool, []refusal{
		{".env", toolerr.PathNotAllowed},
		{".env.local", toolerr.PathNotAllowed},
		{"config/.env", toolerr.PathNotAllowed},
		{"docs/.env", toolerr.PathNotAllowed},
		{".git/config", toolerr.PathNotAllowed},
		{"docs/sub/.git/config", toolerr.PathNotAllowed},
		{"node_modules/x/y.js", toolerr.PathNotAllowed},
		{"web/node_modules/x.js", toolerr.PathNotAllowed},
		{"src/big.txt", toolerr.SizeLimitExceeded},
		{"src/binary.dat", toolerr.InvalidInput},
		{"src", toolerr.InvalidInput},
		{"invalid/path.ts", toolerr.ResourceNotFound},
		{"src/%2e%2e/%2e%2e/etc/shadow", toolerr.ResourceNotFound},
		{"../../../etc/passwd", toolerr.InvalidInput},
		{"src/../../etc/passwd", toolerr.InvalidInput},
		{"/etc/passwd", toolerr.InvalidInput},
		{"..\\..\\etc\\passwd", toolerr.InvalidInput},
		{"src/x\u202e.ts", toolerr.PathNotAllowed}, // the schema lets format characters through; the policy does not
	})
	// A literal folder name, read inside the root.
	const literal = "src/%2e%2e/%2e%2e/etc/passwd"
	var out readFileResult
	e.OK(t, alice, repofiles.ReadFileTool, fmt.Sprintf(`{"path":%q}`, literal), &out)
	if out.File.Content != fixture[literal] {
		t.Errorf("%s: %q", literal, out.File.Content)
	}
	var exact readFileResult
	e.OK(t, alice, repofiles.ReadFileTool, `{"path":"src/exact.txt"}`, &exact)
	if exact.File.Size != repofiles.FileMaxBytes {
		t.Errorf("1 MB file: %d bytes", exact.File.Size)
	}
}

// testLargeFileRanges: any range of a file over read_file's 1 MB (one
// find_symbols outlines, find_references points into) is read, at most
// 1 MB of it; the file whole is SIZE_LIMIT_EXCEEDED, saying to pass a range.
func testLargeFileRanges(t *testing.T, e env) {
	const p = "gen/big.go"
	lines := strings.SplitAfter(fixture[p], "\n")
	lines = lines[:len(lines)-1] // after the last newline
	var out readFileResult
	e.OK(t, alice, repofiles.ReadFileTool, `{"path":"gen/big.go","startLine":100000,"endLine":100019,"includeDeps":true}`, &out)
	f := out.File
	if want := strings.Join(lines[99_999:100_019], ""); f.Content != want || f.Lines != len(lines) || f.Size != len(fixture[p]) ||
		f.Range == nil || f.Range.StartLine != 100_000 || f.Range.EndLine != 100_019 || !f.Range.More {
		t.Errorf("lines 100000-100019: %q, %d lines, %d bytes, range %+v; want %q", short(readRepoResult{Content: f.Content}), f.Lines, f.Size, f.Range, want)
	}
	if deref(out.Metadata.Module) != "gen" || f.Language != "go" {
		t.Errorf("module %q, language %q", deref(out.Metadata.Module), f.Language)
	}
	err := e.Fail(t, alice, repofiles.ReadFileTool, `{"path":"gen/big.go"}`, toolerr.SizeLimitExceeded)
	if !strings.Contains(err.Message, "startLine and endLine") {
		t.Errorf("refusal of the whole file: %q does not say to pass a range", err.Message)
	}
	// More than 1 MB of lines: cut after the last whole line within it.
	out = readFileResult{}
	e.OK(t, alice, repofiles.ReadFileTool, `{"path":"gen/big.go","startLine":2}`, &out)
	f = out.File
	if f.Range == nil || !f.Range.More || f.Content != strings.Join(lines[1:f.Range.EndLine], "") ||
		len(f.Content) > repofiles.FileMaxBytes || len(f.Content)+len(lines[f.Range.EndLine]) <= repofiles.FileMaxBytes {
		t.Errorf("lines 2 on: %d bytes, range %+v", len(f.Content), f.Range)
	}
}

// refusal is a path a tool refuses, with the code of its answer.
type refusal struct {
	path string
	code toolerr.Code
}

// checkRefusals calls tool with each path and wants its code; a missing
// file is the seed's "File not found".
func checkRefusals(t *testing.T, e env, tool string, tests []refusal) {
	t.Helper()
	for _, tc := range tests {
		args, _ := json.Marshal(map[string]string{"path": tc.path})
		err := e.Fail(t, alice, tool, string(args), tc.code)
		if tc.code == toolerr.ResourceNotFound && !strings.HasPrefix(err.Message, "File not found") {
			t.Errorf("%s: message %q", tc.path, err.Message)
		}
	}
}

func testAccess(t *testing.T, e env) {
	ctx := context.Background()
	for range 3 {
		e.OK(t, alice, repofiles.ReadFileTool, `{"path":"docs/guide.md"}`, nil)
	}
	e.Fail(t, alice, repofiles.ReadFileTool, `{"path":".env"}`, toolerr.PathNotAllowed)
	e.Fail(t, alice, repofiles.ReadFileTool, `{"path":"docs/missing.md"}`, toolerr.ResourceNotFound)
	e.Fail(t, alice, repofiles.ReadFileTool, `{"path":"src/big.txt"}`, toolerr.SizeLimitExceeded)
	got, err := e.st.Access.Get(ctx, alice, "docs/guide.md")
	if err != nil || got.Count != 3 || got.LastAccess.IsZero() {
		t.Errorf("access of docs/guide.md: %+v, %v; want 3 reads", got, err)
	}
	for _, p := range []string{".env", "docs/missing.md", "src/big.txt"} {
		if got, err := e.st.Access.Get(ctx, alice, p); err == nil {
			t.Errorf("a failed read of %s was counted: %+v", p, got)
		}
	}
	if _, err := e.st.Access.Get(ctx, bob, "docs/guide.md"); err == nil {
		t.Error("alice's reads were counted for bob")
	}
	// read_repo_file does not count.
	e.OK(t, alice, repofiles.ReadRepoFileTool, `{"path":"README.md"}`, nil)
	if _, err := e.st.Access.Get(ctx, alice, "README.md"); err == nil {
		t.Error("read_repo_file was counted")
	}
}

func testGoDeps(t *testing.T, e env) {
	got := deps(t, e, "app/main.go")
	want := []string{
		"external fmt",
		"import app/internal/util/helper.go +content",
		"import app/internal/util/util.go +content",
		"external github.com/x/y",
		"unresolved example.com/app/missing",
	}
	checkDeps(t, got, want)
}

func testTSDeps(t *testing.T, e env) {
	got := deps(t, e, "web/src/a.ts")
	want := []string{
		"import web/src/b.ts +content",
		"import web/lib/index.ts +content",
		"import web/src/c.ts +content",
		"external react",
		"external @scope/pkg",
		"type-import web/src/types.d.ts +content",
		"import web/src/f.ts +content",
		"require web/src/d.js +content",
		"dynamic-import web/src/e.tsx +content",
		"unresolved ./missing",
		"import web/src/node_modules/evil/index.ts", // resolved, but read_file's rules keep its content out
	}
	checkDeps(t, got, want)
	// The seed's example: AuthService with its imports.
	checkDeps(t, deps(t, e, "src/server/auth/AuthService.ts"), []string{"import src/server/auth/TokenManager.ts +content"})
}

func testPythonDeps(t *testing.T, e env) {
	got := deps(t, e, "py/pkg/core.py")
	want := []string{
		"external os",
		"external json",
		"import py/pkg/helpers.py +content",
		"import py/pkg/models.py +content",
		"unresolved ..nothing_here",
		"import pkg/extra.py +content",
		"import pkg/__init__.py +content",
		"import pkg/sub/__init__.py +content",
	}
	checkDeps(t, got, want)
}

// deps reads a file with its dependencies and describes each as
// "type path [+content]".
func deps(t *testing.T, e env, p string) []string {
	t.Helper()
	var out readFileResult
	e.OK(t, alice, repofiles.ReadFileTool, fmt.Sprintf(`{"path":%q,"includeDeps":true}`, p), &out)
	var got []string
	for _, d := range out.Dependencies {
		s := d.Type + " " + d.Path
		if d.Content != nil {
			s += " +content"
			if *d.Content != fixture[d.Path] {
				t.Errorf("%s: content %q", d.Path, *d.Content)
			}
		}
		if d.Level != 1 {
			t.Errorf("%s: level %d", d.Path, d.Level)
		}
		got = append(got, s)
	}
	return got
}

func checkDeps(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dependencies:\n got %q\nwant %q", got, want)
	}
}

// testSymlinks: links in a local directory are never followed, whether
// they leave the root or lead to a denied file inside it.
func testSymlinks(t *testing.T) {
	parent := repotest.WriteDir(t, map[string]string{"outside.md": "outside\n", "root/docs/guide.md": "guide\n", "root/.env": "SECRET=1\n"})
	root := filepath.Join(parent, "root")
	for target, link := range map[string]string{
		"../../outside.md": "docs/escape.md",
		"/etc/passwd":      "docs/passwd.md",
		"../.env":          "docs/env.md",
		"..":               "docs/up",
		"guide.md":         "docs/inner.md",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, repotest.Local(t, root))
	for _, p := range []string{"docs/escape.md", "docs/passwd.md", "docs/env.md", "docs/up/.env", "docs/up/docs/guide.md", "docs/inner.md"} {
		args := fmt.Sprintf(`{"path":%q}`, p)
		e.Fail(t, alice, repofiles.ReadRepoFileTool, args, toolerr.PathNotAllowed)
		e.Fail(t, alice, repofiles.ReadFileTool, args, toolerr.PathNotAllowed)
	}
}

// testNoRepository: on S3, a tenant without a snapshot and no default is
// told how to push one; memory files still show the tenant's entries.
func testNoRepository(t *testing.T, s3 *repotest.S3) {
	e := newEnv(t, s3.Source(repo.S3Options{}))
	for _, tool := range []string{repofiles.ReadFileTool, repofiles.ReadRepoFileTool} {
		err := e.Fail(t, "nobody", tool, `{"path":"README.md"}`, toolerr.ResourceNotFound)
		if !strings.Contains(err.Message, "go run ./scripts/snapshot push -tenant nobody") {
			t.Errorf("%s: message %q does not say how to push", tool, err.Message)
		}
	}
	e.OK(t, "nobody", memory.WriteTool, `{"file":"best_practices.md","content":"- Works without a repository."}`, nil)
	var out readRepoResult
	e.OK(t, "nobody", repofiles.ReadRepoFileTool, `{"path":".claude/memory/best_practices.md"}`, &out)
	if out.Content != "- Works without a repository.\n" {
		t.Errorf("memory without a repository: %q", out.Content)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func short(r readRepoResult) string {
	if len(r.Content) > 40 {
		r.Content = r.Content[:40] + "…"
	}
	return fmt.Sprintf("%+v", r)
}
