package codechunk

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
)

// splitGo cuts Go source into one chunk per top-level declaration, each
// with its doc comment, plus the package clause when it has a doc comment.
// Import declarations are left out. A declaration longer than maxLines is
// cut into blocks. Source that does not parse is cut into blocks.
func splitGo(ls lines) []Chunk {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", ls.text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return splitLines(ls, 0, ls.n(), KindBlock, "")
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	var out []Chunk
	add := func(from, to token.Pos, kind, name string) {
		start, end := line(from), min(line(to), ls.n())
		if start < 1 || end < start {
			return
		}
		if end-start+1 > maxLines {
			out = append(out, splitLines(ls, start-1, end, kind, name)...)
			return
		}
		out = append(out, ls.chunk(start-1, end, kind, name))
	}
	if f.Doc != nil {
		add(f.Doc.Pos(), f.Name.End(), KindPackage, "package "+f.Name.Name)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			from := d.Pos()
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			kind := "func"
			if d.Recv != nil {
				kind = "method"
			}
			add(from, d.End(), kind, funcName(fset, d))
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			from := d.Pos()
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			add(from, d.End(), d.Tok.String(), genName(d))
		}
	}
	return out
}

// funcName is "func Name" or "func (recv) Name".
func funcName(fset *token.FileSet, d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return "func " + d.Name.Name
	}
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, d.Recv.List[0].Type)
	return "func (" + b.String() + ") " + d.Name.Name
}

// genName names a type, const or var declaration by its first name.
func genName(d *ast.GenDecl) string {
	if len(d.Specs) == 0 {
		return d.Tok.String()
	}
	switch s := d.Specs[0].(type) {
	case *ast.TypeSpec:
		return "type " + s.Name.Name
	case *ast.ValueSpec:
		if len(s.Names) > 0 {
			return d.Tok.String() + " " + s.Names[0].Name
		}
	}
	return d.Tok.String()
}
