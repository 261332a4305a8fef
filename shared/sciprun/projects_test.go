package sciprun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// tree makes a file system of the given files; a go.mod, package.json,
// pyproject.toml or setup.cfg holds what its name says, the rest a line.
func tree(files ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, f := range files {
		name, content, _ := strings.Cut(f, "=")
		if content == "" {
			content = "x\n"
		}
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	return fsys
}

// brief is a project as the tests write it: "LANGUAGE ROOT CONFIG NAME
// FILES nested=A,B".
func brief(p Project) string {
	s := fmt.Sprintf("%s %s %s %s %d", p.Language, p.Root, or(p.Config, "-"), or(p.Name, "-"), p.Files)
	if len(p.Nested) > 0 {
		s += " nested=" + strings.Join(p.Nested, ",")
	}
	if len(p.Vendored) > 0 {
		s += " vendored=" + strings.Join(p.Vendored, ",")
	}
	return s
}

// or returns s, or otherwise when s is empty.
func or(s, otherwise string) string {
	if s != "" {
		return s
	}
	return otherwise
}

func TestProjects(t *testing.T) {
	tests := []struct {
		name  string
		fsys  fstest.MapFS
		want  []string
		cover map[string]string // file → the root of the project covering it, or why none does
	}{
		{"Go modules, nested, and what the go command ignores", tree(
			"go.mod=module example.com/top\n", "main.go", "pkg/a.go", "pkg/a_test.go",
			"infra/go.mod=module example.com/infra\n", "infra/app.go",
			"pkg/testdata/go.mod=module broken\n", "pkg/testdata/x.go",
			"vendor/dep/d.go", "_tools/go.mod=module tools\n", "_tools/t.go", ".hidden/h.go", "node_modules/m/m.go",
			"README.md"),
			[]string{"go . go.mod example.com/top 3 nested=infra", "go infra go.mod example.com/infra 1"},
			map[string]string{"pkg/a.go": ".", "infra/app.go": "infra", "pkg/testdata/x.go": "testdata/ holds no project's own code",
				"vendor/dep/d.go": "vendor/ holds no project's own code", "_tools/t.go": "the go command ignores _tools/",
				"README.md": "no SCIP indexer for markdown files", "pkg/a.rs": "no SCIP indexer for rust files"}},
		{"a Go module's own vendor folder is its project's", tree(
			"go.mod=module example.com/app\n", "app/app.go", "vendor/modules.txt", "vendor/example.com/dep/text/text.go",
			"vendor/example.com/dep/text/testdata/t.go", "vendor/example.com/dep/go.mod=module dep\n",
			"vendor/example.com/js/x.js", "tool/vendor/modules.txt", "tool/vendor/v/v.go", "tool/t.go",
			"lib/go.mod=module example.com/lib\n", "lib/vendor/l/l.go"),
			[]string{"go . go.mod example.com/app 3 vendored=vendor"},
			map[string]string{"vendor/example.com/dep/text/text.go": ".", "vendor/example.com/dep/text/testdata/t.go": "vendor/ holds no project's own code",
				"tool/vendor/v/v.go": "vendor/ holds no project's own code", "lib/vendor/l/l.go": "vendor/ holds no project's own code",
				"vendor/example.com/js/x.js": "vendor/ holds no project's own code"}},
		{"a Go file outside a module", tree("cmd/tool.go", "tools/go.mod=module tools\n", "tools/t.go"),
			[]string{"go tools go.mod tools 1"},
			map[string]string{"cmd/tool.go": "not in a Go module (no go.mod above it)"}},
		{"a standard-library tree is one project", tree(
			"src/go.mod=module std\n", "src/fmt/print.go", "src/cmd/go.mod=module cmd\n", "src/cmd/go/main.go",
			"src/cmd/vendor/golang.org/x/mod/m.go", "src/cmd/vendor/modules.txt", "src/vendor/golang.org/x/net/n.go",
			"src/vendor/modules.txt", "src/crypto/md5/_asm/go.mod=module asm\n", "src/crypto/md5/_asm/a.go",
			"misc/wasm/wasm_exec.js", "src/runtime/runtime-gdb.py"),
			[]string{"go src go.mod std 4 vendored=src/cmd/vendor,src/vendor", "python . - - 1", "typescript . - - 1"},
			map[string]string{"src/cmd/go/main.go": "src", "src/fmt/print.go": "src", "misc/wasm/wasm_exec.js": ".",
				"src/cmd/vendor/golang.org/x/mod/m.go": "src", "src/vendor/golang.org/x/net/n.go": "src"}},
		{"TypeScript and JavaScript projects", tree(
			"package.json={}", "tsconfig.json={}", "src/index.ts", "web/package.json={}", "web/app.jsx", "web/jsconfig.json={}",
			"web/node_modules/react/index.js", "tools/package.json={}", "tools/README.md", "scripts/build.mjs",
			"lib/types.d.ts", "dist/out.js"),
			[]string{"typescript . tsconfig.json - 3 nested=web", "typescript web jsconfig.json - 1"},
			map[string]string{"scripts/build.mjs": ".", "web/app.jsx": "web", "dist/out.js": "search never enters dist/",
				"web/node_modules/react/index.js": "search never enters node_modules/"}},
		{"Python projects", tree(
			"pyproject.toml=[tool.black]\nname = \"no\"\n[project]\nname = \"zoo\"\n", "zoo/__init__.py", "zoo/a.py",
			"plugins/p1/setup.cfg=[metadata]\nname = p1\n", "plugins/p1/p1.py", "plugins/p2/setup.py", "plugins/p2/p2.pyi",
			"docs/conf.py", ".venv/lib/site.py"),
			[]string{"python . pyproject.toml zoo 3 nested=plugins/p1,plugins/p2", "python plugins/p1 setup.cfg p1 1",
				"python plugins/p2 setup.py - 2"},
			map[string]string{"docs/conf.py": ".", "plugins/p2/p2.pyi": "plugins/p2", ".venv/lib/site.py": "hidden folder .venv/"}},
		{"Python files with no project file", tree("tool.py", "lib/util.py"),
			[]string{"python . - - 2"}, map[string]string{"lib/util.py": "."}},
		{"a project file without files of its language", tree("package.json={}", "go.mod=module m\n", "main.go"),
			[]string{"go . go.mod m 1"},
			map[string]string{"index.js": "no scip-typescript project covers it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			projects, err := Projects(context.Background(), tc.fsys)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range projects {
				got = append(got, brief(p))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Projects:\n got %q\nwant %q", got, tc.want)
			}
			for file, want := range tc.cover {
				p, err := Cover(projects, file)
				got := p.Root
				if err != nil {
					got = strings.TrimPrefix(err.Error(), ErrNotCovered.Error()+": ")
				}
				if got != want || (err != nil) != errors.Is(err, ErrNotCovered) {
					t.Errorf("Cover(%s) = %q, %v; want %q", file, p.Root, err, want)
				}
			}
		})
	}
}

// TestProjectsOfTheFixtures checks the fixtures the indexers are run on.
func TestProjectsOfTheFixtures(t *testing.T) {
	projects, err := Projects(context.Background(), os.DirFS("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range projects {
		got = append(got, brief(p)+" "+p.Indexer)
	}
	want := []string{"python python pyproject.toml zoo 3 scip-python", "typescript javascript package.json - 2 scip-typescript",
		"typescript typescript tsconfig.json - 3 scip-typescript"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Projects(testdata):\n got %q\nwant %q", got, want)
	}
}

// TestProjectsStops checks the walk's bounds: it ends with its context.
func TestProjectsStops(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 5000 {
		fsys[fmt.Sprintf("d/f%d.go", i)] = &fstest.MapFile{Data: []byte("package d\n")}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Projects(ctx, fsys); !errors.Is(err, context.Canceled) {
		t.Errorf("Projects with a context ended: %v, want context.Canceled", err)
	}
}
