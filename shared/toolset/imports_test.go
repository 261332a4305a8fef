package toolset_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestToolsImportNoTool: no tool package imports another; what tools share
// (memory files, languages, path rules) lives in a package of its own.
// Tests may use other tools (to set a fixture up through them).
func TestToolsImportNoTool(t *testing.T) {
	const prefix = "github.com/toolshed/toolshed/shared/tools/"
	dirs, err := os.ReadDir(filepath.Join("..", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join("..", "tools", d.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if other, ok := strings.CutPrefix(p, prefix); ok && other != d.Name() {
					t.Errorf("%s imports the tool package %s", path, p)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files of tool packages", checked)
	}
}
