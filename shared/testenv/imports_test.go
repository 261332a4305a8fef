package testenv_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRuntimeDoesNotImportTestenv: the test environments stay out of every
// binary; only tests, benchmarks, scripts and testenv itself import them.
func TestRuntimeDoesNotImportTestenv(t *testing.T) {
	const prefix = "github.com/toolshed/toolshed/shared/testenv"
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == "scripts", rel == "infra", rel == "node_modules", rel == filepath.Join("shared", "testenv"),
				strings.HasPrefix(d.Name(), ".") && rel != ".", d.Name() == "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, prefix) {
				t.Errorf("%s imports %s: test environments are for tests, benchmarks and scripts", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d runtime files: is the walk rooted at the repository?", checked)
	}
}
