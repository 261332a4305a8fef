package symbols

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// parseGo finds the symbols of Go source: the package clause when it has
// a doc comment (a module: where the package is documented), functions
// and methods (a method's Container is its receiver's type), types
// (structs as classes, interfaces, others as types) with their fields and
// interface methods, constants and variables. A declaration in a group
// ("const ( ... )") spans its own lines; one alone spans its keyword too.
// Source with syntax errors yields what go/parser could read.
func parseGo(text string) []Symbol {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", text, parser.ParseComments|parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	g := goFile{tf: fset.File(f.Pos())}
	if f.Doc != nil {
		g.add(f.Name, Module, "", span{f.Package, f.Name.End()}, f.Doc)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.funcDecl(d)
		case *ast.GenDecl:
			g.genDecl(d)
		}
	}
	return finish(text, g.syms)
}

// span is the source between two positions, as a node.
type span struct{ from, to token.Pos }

func (s span) Pos() token.Pos { return s.from }
func (s span) End() token.Pos { return s.to }

// goFile collects the symbols of one Go file.
type goFile struct {
	tf   *token.File
	syms []Symbol
}

// add records a symbol named by name spanning node, documented by the
// first non-empty comment group of docs.
func (g *goFile) add(name *ast.Ident, kind Kind, container string, node ast.Node, docs ...*ast.CommentGroup) {
	if name == nil || name.Name == "_" || !name.Pos().IsValid() {
		return
	}
	s := Symbol{Name: name.Name, Kind: kind, Container: container, NameAt: g.tf.Offset(name.Pos()),
		From: g.tf.Offset(node.Pos()), To: g.tf.Offset(node.End())}
	for _, doc := range docs {
		if doc != nil {
			s.DocFrom, s.DocTo = g.tf.Offset(doc.Pos()), g.tf.Offset(doc.End())
			break
		}
	}
	g.syms = append(g.syms, s)
}

func (g *goFile) funcDecl(d *ast.FuncDecl) {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		g.add(d.Name, Function, "", d, d.Doc)
		return
	}
	recv := baseType(d.Recv.List[0].Type)
	if recv == nil {
		return // a receiver go/parser could not read
	}
	g.add(d.Name, Method, recv.Name, d, d.Doc)
}

// genDecl adds the types, constants and variables of a declaration.
func (g *goFile) genDecl(d *ast.GenDecl) {
	grouped := d.Lparen.IsValid()
	for _, spec := range d.Specs {
		// A declaration alone spans its keyword and takes the
		// declaration's doc; one in a group spans itself.
		var node ast.Node = spec
		declDoc := (*ast.CommentGroup)(nil)
		if !grouped {
			node, declDoc = d, d.Doc
		}
		switch s := spec.(type) {
		case *ast.TypeSpec:
			g.typeSpec(s, node, declDoc)
		case *ast.ValueSpec:
			kind := Variable
			if d.Tok == token.CONST {
				kind = Constant
			}
			for _, name := range s.Names {
				g.add(name, kind, "", node, s.Doc, declDoc, s.Comment)
			}
		}
	}
}

// typeSpec adds a type with its fields or interface methods.
func (g *goFile) typeSpec(s *ast.TypeSpec, node ast.Node, declDoc *ast.CommentGroup) {
	switch t := s.Type.(type) {
	case *ast.StructType:
		g.add(s.Name, Class, "", node, s.Doc, declDoc, s.Comment)
		g.fields(t)
	case *ast.InterfaceType:
		g.add(s.Name, Interface, "", node, s.Doc, declDoc, s.Comment)
		for _, m := range t.Methods.List {
			if _, ok := m.Type.(*ast.FuncType); ok && len(m.Names) > 0 {
				g.add(m.Names[0], Method, "", m, m.Doc, m.Comment)
			}
		}
	default:
		g.add(s.Name, Type, "", node, s.Doc, declDoc, s.Comment)
	}
}

// fields adds a struct's fields (an embedded field is named by its type),
// and the fields of struct types written in place.
func (g *goFile) fields(t *ast.StructType) {
	for _, f := range t.Fields.List {
		names := f.Names
		if len(names) == 0 {
			names = []*ast.Ident{baseType(f.Type)}
		}
		for _, name := range names {
			g.add(name, Field, "", f, f.Doc, f.Comment)
		}
		if inner, ok := f.Type.(*ast.StructType); ok {
			g.fields(inner)
		}
	}
}

// baseType returns the name of the type an expression names, without
// pointer, package or type arguments: Reader for *bufio.Reader, List for
// List[T]; nil when it names none.
func baseType(e ast.Expr) *ast.Ident {
	for {
		switch t := e.(type) {
		case *ast.Ident:
			return t
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		default:
			return nil
		}
	}
}
