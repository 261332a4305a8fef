package toolset_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, its signature and
// closing brace included: a reader sees one whole.
const maxFuncLines = 60

// TestFunctionsFitOnAScreen: no function of the project's own code (tests
// aside, and the third-party modules carried in shared/third_party) is
// longer than maxFuncLines; a longer one is split where a reader would.
func TestFunctionsFitOnAScreen(t *testing.T) {
	root := filepath.Join("..", "..")
	skip := map[string]bool{"node_modules": true, "third_party": true, "build": true, "cdk.out": true, ".git": true, ".toolshed": true}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && skip[d.Name()]:
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s: %s is %d lines, over %d: split it where a reader would", rel, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 1500 {
		t.Fatalf("checked only %d functions", checked)
	}
}
