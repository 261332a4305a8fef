package goscip

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
)

// The rules of this file give a package's declarations their SCIP symbols
// exactly as scip-go v0.1.26 does (its visitors visitor_type.go,
// visitor_func.go and visitor_var.go), quirks included, because a symbol
// is only useful if every index names it the same way:
//
//   - types `T#`, functions `F().`, methods `T#M().` (a method of a
//     generic type, whose receiver is not a plain name, is named `M().`),
//     package-level variables and constants `V.`;
//   - struct fields `T#f.`, interface methods `I#M.` (a term, not a
//     method), fields of nested anonymous structs `T#f.g.`;
//   - fields and methods of anonymous types in a variable's type or value
//     `V:f.` (`inline-L-C:f.` when the spec declares several names), and
//     interface methods in a function's results `func:F:M().`;
//   - anything else (declarations inside functions, parameters, type
//     parameters) is a local.
//
// A later rule overwrites an earlier one at the same position (scip-go
// visits types first, then each declaration in order).

// A declared is what the rules give one position.
type declared struct {
	symbol string
	ident  *ast.Ident // the name it defines
	doc    string     // its doc comment
}

// A namer applies the rules to the files of one package.
type namer struct {
	prefix string // the package's symbol prefix (unit.prefix)
	path   string // the package path
	fset   *token.FileSet
	scope  []*scip.Descriptor
	names  map[token.Pos]declared
}

func newNamer(u *unit, fset *token.FileSet) *namer {
	return &namer{prefix: u.prefix, path: u.path, fset: fset, names: map[token.Pos]declared{}}
}

// file names the declarations of f: its types first, then each variable,
// constant and function declaration.
func (n *namer) file(f *ast.File) {
	n.reset()
	ast.Walk(typeNamer{n: n}, f)
	for _, decl := range f.Decls {
		n.reset()
		switch decl := decl.(type) {
		case *ast.GenDecl:
			if decl.Tok == token.VAR || decl.Tok == token.CONST {
				ast.Walk(&varNamer{n: n}, decl)
			}
		case *ast.FuncDecl:
			ast.Walk(funcNamer{n: n}, decl)
		}
	}
}

func (n *namer) reset() { n.scope = append(n.scope[:0], namespace(n.path)) }

func (n *namer) push(name string, suffix scip.Descriptor_Suffix) {
	n.scope = append(n.scope, &scip.Descriptor{Name: name, Suffix: suffix})
}

func (n *namer) pop(count int) { n.scope = n.scope[:len(n.scope)-count] }

// set gives position pos the symbol of the scope plus (name, suffix).
func (n *namer) set(pos token.Pos, name string, suffix scip.Descriptor_Suffix, ident *ast.Ident, doc string) {
	descriptors := append(n.scope[:len(n.scope):len(n.scope)], &scip.Descriptor{Name: name, Suffix: suffix})
	n.names[pos] = declared{symbol: n.prefix + scip.VerboseSymbolFormatter.FormatDescriptors(descriptors), ident: ident, doc: doc}
}

// typeNamer names type declarations and their fields (visitor_type.go).
type typeNamer struct {
	n           *namer
	decl        *ast.GenDecl
	isInterface bool // the type declared is an interface
}

func (v typeNamer) Visit(node ast.Node) ast.Visitor {
	switch node := node.(type) {
	case *ast.GenDecl:
		v.decl = node
		for _, spec := range node.Specs {
			if ts, ok := spec.(*ast.TypeSpec); ok {
				_, v.isInterface = ts.Type.(*ast.InterfaceType)
			}
			ast.Walk(v, spec)
		}
	case *ast.File, *ast.StructType, *ast.InterfaceType, *ast.FieldList, *ast.Ident:
		return v
	case *ast.TypeSpec:
		v.n.push(node.Name.Name, scip.Descriptor_Type)
		v.n.names[node.Name.Pos()] = declared{symbol: v.n.prefix + scip.VerboseSymbolFormatter.FormatDescriptors(v.n.scope),
			ident: node.Name, doc: docText(node.Doc, node.Comment, v.decl.Doc)}
		ast.Walk(v, node.Type)
		v.n.pop(1)
	case *ast.Field:
		v.field(node)
	}
	return nil
}

func (v typeNamer) field(f *ast.Field) {
	if len(f.Names) == 0 {
		if v.isInterface { // an embedded interface or a type constraint declares nothing
			ast.Walk(v, f.Type)
			return
		}
		for _, ident := range embeddedIdents(f.Type) {
			v.n.set(ident.Pos(), ident.Name, scip.Descriptor_Term, ident, fieldDoc(f))
		}
		return
	}
	pushed := 0
	for _, name := range f.Names {
		v.n.set(name.Pos(), name.Name, scip.Descriptor_Term, name, fieldDoc(f))
		pushed += v.n.nested(v, name.Name, f.Type)
	}
	v.n.pop(pushed)
}

// nested names the fields of the anonymous types inside a field's type
// under the field's name, which stays in scope until the caller pops it:
// scip-go pops it when the whole field is done, so that a second name of
// the same field is named under the first.
func (n *namer) nested(v ast.Visitor, name string, t ast.Expr) (pushed int) {
	switch t := t.(type) {
	case *ast.MapType:
		n.push(name, scip.Descriptor_Term)
		ast.Walk(v, t.Key)
		ast.Walk(v, t.Value)
	case *ast.ArrayType:
		n.push(name, scip.Descriptor_Term)
		ast.Walk(v, t.Elt)
	case *ast.StructType, *ast.InterfaceType:
		n.push(name, scip.Descriptor_Term)
		ast.Walk(v, t)
	default:
		return 0
	}
	return 1
}

// funcNamer names functions and methods (visitor_func.go).
type funcNamer struct{ n *namer }

func (v funcNamer) Visit(node ast.Node) ast.Visitor {
	switch node := node.(type) {
	case *ast.FuncDecl:
		if recv, ok := receiverTypeName(node); ok {
			v.n.push(recv, scip.Descriptor_Type)
		}
		v.n.set(node.Name.Pos(), node.Name.Name, scip.Descriptor_Method, node.Name, node.Doc.Text())
		v.n.push("func", scip.Descriptor_Meta)
		v.n.push(node.Name.Name, scip.Descriptor_Meta)
		ast.Walk(v, node.Type)
		return nil
	case *ast.FuncType:
		if node.Results != nil {
			ast.Walk(v, node.Results)
		}
		return nil
	case *ast.BlockStmt:
		return nil
	case *ast.InterfaceType:
		for _, f := range node.Methods.List {
			for _, name := range f.Names {
				v.n.set(name.Pos(), name.Name, scip.Descriptor_Method, name, fieldDoc(f))
			}
		}
		return nil
	}
	return v
}

// receiverTypeName is the name of a method's receiver type when it is a
// plain name (T or *T), as scip-go requires.
func receiverTypeName(f *ast.FuncDecl) (string, bool) {
	if f.Recv == nil || len(f.Recv.List) != 1 || f.Recv.List[0].Type == nil {
		return "", false
	}
	t := f.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if ident, ok := t.(*ast.Ident); ok {
		return ident.Name, true
	}
	return "", false
}

// varNamer names package-level variables and constants, and whatever
// scip-go's var visitor names inside them (visitor_var.go).
type varNamer struct {
	n    *namer
	decl *ast.GenDecl
}

func (v *varNamer) Visit(node ast.Node) ast.Visitor {
	switch node := node.(type) {
	case *ast.GenDecl:
		if node.Tok != token.VAR && node.Tok != token.CONST {
			return nil
		}
		v.decl = node
		return v
	case *ast.ValueSpec:
		v.valueSpec(node)
		return nil
	case *ast.Field:
		v.field(node)
		return nil
	}
	return v
}

func (v *varNamer) valueSpec(spec *ast.ValueSpec) {
	for _, name := range spec.Names {
		v.n.set(name.Pos(), name.Name, scip.Descriptor_Term, name, docText(spec.Doc, spec.Comment, v.decl.Doc))
	}
	if len(spec.Names) == 0 {
		return
	}
	scopeName := spec.Names[0].Name
	if len(spec.Names) > 1 {
		at := v.n.fset.Position(spec.Pos())
		scopeName = fmt.Sprintf("inline-%d-%d", at.Line, at.Column)
	}
	v.n.push(scopeName, scip.Descriptor_Meta)
	switch t := spec.Type.(type) {
	case nil, *ast.FuncType, *ast.Ident, *ast.ChanType, *ast.ArrayType, *ast.MapType,
		*ast.StarExpr, *ast.SelectorExpr, *ast.IndexExpr:
	case *ast.InterfaceType, *ast.StructType:
		ast.Walk(v, t)
	default:
		return // scip-go gives up on the spec here, and leaves the scope pushed
	}
	for _, value := range spec.Values {
		ast.Walk(v, value)
	}
	v.n.pop(1)
}

func (v *varNamer) field(f *ast.Field) {
	if len(f.Names) == 0 {
		for _, ident := range embeddedIdents(f.Type) {
			// scip-go keys this one by the field's position, not the name's.
			v.n.set(f.Pos(), ident.Name, scip.Descriptor_Term, ident, fieldDoc(f))
		}
		return
	}
	pushed := 0
	for _, name := range f.Names {
		v.n.set(name.Pos(), name.Name, scip.Descriptor_Term, name, fieldDoc(f))
		pushed += v.n.nested(v, name.Name, f.Type)
	}
	v.n.pop(pushed)
}

// embeddedIdents is the name an embedded field is known by, as scip-go
// finds it (getIdentOfTypeExpr): none for a generic type with several
// type arguments, or a type that is not a name.
func embeddedIdents(t ast.Expr) []*ast.Ident {
	switch t := t.(type) {
	case *ast.Ident:
		return []*ast.Ident{t}
	case *ast.SelectorExpr:
		return []*ast.Ident{t.Sel}
	case *ast.StarExpr:
		return embeddedIdents(t.X)
	case *ast.IndexExpr:
		return embeddedIdents(t.X)
	case *ast.UnaryExpr:
		return embeddedIdents(t.X)
	}
	return nil
}

// docText is the first of the comments that says something.
func docText(groups ...*ast.CommentGroup) string {
	for _, g := range groups {
		if text := g.Text(); text != "" {
			return text
		}
	}
	return ""
}

// fieldDoc is a field's doc comment and line comment.
func fieldDoc(f *ast.Field) string {
	return strings.TrimSpace(f.Doc.Text() + "\n" + f.Comment.Text())
}
