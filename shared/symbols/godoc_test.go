package symbols_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/symbols"
)

// TestGoAgainstGoDoc: in a few standard packages, every exported
// function, type, method, constant and variable go/doc lists is found,
// with the right kind and container.
func TestGoAgainstGoDoc(t *testing.T) {
	for _, pkg := range []string{"net/textproto", "strings", "container/list", "go/ast"} {
		t.Run(pkg, func(t *testing.T) {
			dir := filepath.Join(runtime.GOROOT(), "src", filepath.FromSlash(pkg))
			names, err := filepath.Glob(filepath.Join(dir, "*.go"))
			if err != nil || len(names) == 0 {
				t.Fatalf("no Go files in %s: %v", dir, err)
			}
			fset := token.NewFileSet()
			var files []*ast.File
			found := map[string]symbols.Kind{} // "container.name" → kind
			for _, name := range names {
				if strings.HasSuffix(name, "_test.go") {
					continue
				}
				text, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				f, err := parser.ParseFile(fset, name, text, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
				for _, s := range symbols.Parse(filepath.Base(name), string(text)).Symbols {
					if s.Kind != symbols.Field {
						found[s.Container+"."+s.Name] = s.Kind
					}
				}
			}
			p, err := doc.NewFromFiles(fset, files, pkg)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]symbols.Kind{}
			values := func(vs []*doc.Value, kind symbols.Kind) {
				for _, v := range vs {
					for _, n := range v.Names {
						want["."+n] = kind
					}
				}
			}
			values(p.Consts, symbols.Constant)
			values(p.Vars, symbols.Variable)
			for _, f := range p.Funcs {
				want["."+f.Name] = symbols.Function
			}
			for _, typ := range p.Types {
				want["."+typ.Name] = typeKind(typ)
				values(typ.Consts, symbols.Constant)
				values(typ.Vars, symbols.Variable)
				for _, f := range typ.Funcs {
					want["."+f.Name] = symbols.Function
				}
				for _, m := range typ.Methods {
					want[typ.Name+"."+m.Name] = symbols.Method
				}
			}
			if len(want) < 10 {
				t.Fatalf("go/doc lists only %d declarations in %s", len(want), pkg)
			}
			for name, kind := range want {
				if got, ok := found[name]; !ok || got != kind {
					t.Errorf("%s: %s %q, go/doc says %s", pkg, got, name, kind)
				}
			}
		})
	}
}

// typeKind is the kind of a type go/doc lists: a struct is a class.
func typeKind(typ *doc.Type) symbols.Kind {
	for _, spec := range typ.Decl.Specs {
		if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == typ.Name {
			switch ts.Type.(type) {
			case *ast.StructType:
				return symbols.Class
			case *ast.InterfaceType:
				return symbols.Interface
			}
		}
	}
	return symbols.Type
}
