package repofiles

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
)

// countingFS is a repository that counts the file system operations made
// on it: the work a read_file call does for its dependencies.
type countingFS struct {
	fstest.MapFS
	ops atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.ops.Add(1)
	return c.MapFS.Open(name)
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	c.ops.Add(1)
	return c.MapFS.Stat(name)
}

func (c *countingFS) Lstat(name string) (fs.FileInfo, error) {
	c.ops.Add(1)
	return c.MapFS.Lstat(name)
}

func (c *countingFS) ReadLink(name string) (string, error) {
	c.ops.Add(1)
	return c.MapFS.ReadLink(name)
}

func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.ops.Add(1)
	return c.MapFS.ReadDir(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.ops.Add(1)
	return c.MapFS.ReadFile(name)
}

// bigRepo is a repository with a Go module whose package big has 300 files,
// a script folder and a Python package, for files that import them many
// times over.
func bigRepo() *countingFS {
	m := fstest.MapFS{
		"go.mod":             {Data: []byte("module example.com/m\n")},
		"web/a.ts":           {Data: []byte("export const a = 1;\n")},
		"py/pkg/__init__.py": {Data: []byte("")},
		"py/pkg/mod.py":      {Data: []byte("X = 1\n")},
	}
	for i := range 300 {
		m[fmt.Sprintf("big/f%03d.go", i)] = &fstest.MapFile{Data: []byte("package big\n")}
	}
	return &countingFS{MapFS: m}
}

// lines repeats a line n times, %d replaced by its number.
func lines(n int, format string) []byte {
	var b strings.Builder
	for i := range n {
		if strings.Contains(format, "%d") {
			fmt.Fprintf(&b, format, i)
		} else {
			b.WriteString(format)
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func goImports(n int, format string) []byte {
	return append(append([]byte("package main\n\nimport (\n"), lines(n, format)...), ")\n"...)
}

// TestDependenciesBounded: a file with 20,000 imports is resolved with work
// in proportion to the entries listed, not to its imports: each import is
// resolved once, gathering stops at the listed maximum, and the answer
// says when it stopped short.
func TestDependenciesBounded(t *testing.T) {
	cases := []struct {
		name, path, lang string
		data             []byte
		listed           int
		cut              string // in the note; "" for none
		maxOps           int64
	}{
		{"a few imports", "web/main.js", "javascript",
			[]byte("import a from './a';\nimport b from './a.ts';\nrequire('react');\n"), 2, "", 100},
		{"one Go package imported 20,000 times", "cmd/main.go", "go",
			goImports(20000, "\t_ \"example.com/m/big\""), DepsMaxListed, "more dependencies than the 200", 2000},
		{"20,000 missing Go packages", "cmd/main.go", "go",
			goImports(20000, "\t_ \"example.com/m/missing%d\""), DepsMaxListed, "more dependencies than the 200", 2000},
		{"20,000 external Go packages", "cmd/main.go", "go",
			goImports(20000, "\t_ \"github.com/x/p%d\""), DepsMaxListed, "more dependencies than the 200", 50},
		{"one script required 20,000 times", "web/main.js", "javascript",
			lines(20000, "const a = require('./a');"), 1, "first 262", 100},
		{"20,000 missing scripts", "web/main.js", "javascript",
			lines(20000, "require('./missing%d');"), DepsMaxListed, "more dependencies than the 200", 201 * 30},
		{"20,000 npm packages", "web/main.js", "javascript",
			lines(20000, "import x from 'pkg%d';"), DepsMaxListed, "more dependencies than the 200", 50},
		{"one Python module imported 20,000 times", "py/main.py", "python",
			lines(20000, "from .pkg import mod"), 2, "first 262", 100},
		{"20,000 missing Python modules", "py/main.py", "python",
			lines(20000, "from .m%d import x"), DepsMaxListed, "more dependencies than the 200", 201 * 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := bigRepo()
			got := dependencies(t.Context(), fsys, tc.path, tc.data, tc.lang)
			if len(got.deps) != tc.listed {
				t.Errorf("listed %d dependencies, want %d", len(got.deps), tc.listed)
			}
			if tc.cut == "" && got.cut != "" || !strings.Contains(got.cut, tc.cut) {
				t.Errorf("note %q, want one saying %q", got.cut, tc.cut)
			}
			if n := fsys.ops.Load(); n > tc.maxOps {
				t.Errorf("%d file system operations, want at most %d", n, tc.maxOps)
			}
			checkGathered(t, got)
		})
	}
}

// TestDependenciesScanHead: imports are looked for in the file's first
// DepsScanBytes only, and the note says so.
func TestDependenciesScanHead(t *testing.T) {
	pad := lines(DepsScanBytes/18, "// padding padding")
	data := append(append([]byte("require('./a');\n"), pad...), "require('./late');\n"...)
	got := dependencies(t.Context(), bigRepo(), "web/main.js", data, "javascript")
	if len(got.deps) != 1 || got.deps[0].Path != "web/a.ts" {
		t.Errorf("dependencies %+v, want web/a.ts alone", got.deps)
	}
	if !strings.Contains(got.cut, "first") {
		t.Errorf("note %q does not say only the head was read", got.cut)
	}
}

// TestDependenciesStopWithContext: once the call's time is up, gathering
// stops and says so, with what it found.
func TestDependenciesStopWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fsys := bigRepo()
	got := dependencies(ctx, fsys, "cmd/main.go", goImports(20000, "\t_ \"example.com/m/big\""), "go")
	if len(got.deps) != 0 || !strings.Contains(got.cut, "time") {
		t.Errorf("after the context ended: %d dependencies, note %q", len(got.deps), got.cut)
	}
	if n := fsys.ops.Load(); n > 5 {
		t.Errorf("%d file system operations after the context ended", n)
	}
}

// checkGathered checks what every answer holds to: at most DepsMaxListed
// entries, each path once, contents within their bounds.
func checkGathered(t *testing.T, got gathered) {
	t.Helper()
	if len(got.deps) > DepsMaxListed {
		t.Errorf("%d dependencies listed, over %d", len(got.deps), DepsMaxListed)
	}
	seen := map[string]bool{}
	total := 0
	for _, d := range got.deps {
		key := d.Type + ":" + d.Path
		if d.Type != depExternal && d.Type != depUnresolved {
			key = d.Path
		}
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		if d.Content != nil {
			if len(*d.Content) > DepMaxBytes {
				t.Errorf("%s: %d bytes of content, over %d", d.Path, len(*d.Content), DepMaxBytes)
			}
			total += len(*d.Content)
		}
	}
	if total > DepsMaxBytes {
		t.Errorf("%d bytes of content in all, over %d", total, DepsMaxBytes)
	}
}

// FuzzDependencies: whatever a file holds, gathering its dependencies
// neither panics nor leaves its bounds, in any of the three languages.
func FuzzDependencies(f *testing.F) {
	f.Add(0, []byte("package main\nimport (\n\t\"example.com/m/big\"\n\t\"fmt\"\n)\n"))
	f.Add(0, []byte("package main\nimport \"example.com/m/big\nimport (\n"))
	f.Add(1, []byte("import a from './a';\nimport type {X} from '../web/a.js';\nconst b = require('./b'); import('./a')\n/* import z from './z' */"))
	f.Add(1, []byte("import x from '\"; require(\"./a\"); `import('./a')` // require('./c')"))
	f.Add(2, []byte("import os, json\nfrom . import mod\nfrom .pkg import (mod, other)\nfrom ... import x\nimport pkg.mod\n"))
	f.Add(2, []byte("from \t.\timport\t*\nimport ,,, \n"))
	langs := []string{"go", "javascript", "python"}
	paths := []string{"cmd/main.go", "web/main.js", "py/pkg/main.py"}
	f.Fuzz(func(t *testing.T, lang int, data []byte) {
		i := (lang%len(langs) + len(langs)) % len(langs)
		fsys := bigRepo()
		checkGathered(t, dependencies(t.Context(), fsys, paths[i], data, langs[i]))
		// Work in proportion to what is listed: a few operations per
		// entry (a Go package's folder listing, a script's candidates).
		if n := fsys.ops.Load(); n > 201*40 {
			t.Errorf("%d file system operations", n)
		}
	})
}
