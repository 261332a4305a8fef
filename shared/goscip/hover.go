package goscip

import (
	"bytes"
	"fmt"
	"go/types"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
)

// symbolInfo is the SymbolInformation of a declared symbol whose object
// is obj (nil when go/types defines none there): its documentation is the
// signature as a ```go block, then the doc comment, then, for a struct or
// an interface, its fields or methods as a ```go block, as scip-go writes
// it.
func symbolInfo(d declared, obj types.Object) *scip.SymbolInformation {
	info := &scip.SymbolInformation{Symbol: d.symbol, DisplayName: d.ident.Name}
	signature, extra := "", ""
	if obj != nil {
		signature, extra = objectSignature(obj)
		info.Kind = kindOf(obj)
	}
	if signature != "" {
		info.Documentation = append(info.Documentation, goBlock(signature))
	}
	if d.doc != "" {
		info.Documentation = append(info.Documentation, d.doc)
	}
	if extra != "" {
		info.Documentation = append(info.Documentation, goBlock(extra))
	}
	return info
}

// localInfo is the SymbolInformation of a local: its name, kind and
// signature (scip-go writes the signature of locals this way too).
func localInfo(symbol string, obj types.Object) *scip.SymbolInformation {
	info := &scip.SymbolInformation{Symbol: symbol}
	if obj == nil {
		return info
	}
	info.DisplayName, info.Kind = obj.Name(), kindOf(obj)
	if signature, _ := objectSignature(obj); signature != "" {
		info.SignatureDocumentation = &scip.Document{Language: "go", Text: signature}
	}
	return info
}

func goBlock(code string) string { return "```go\n" + code + "\n```" }

// unqualified writes types without their package, as scip-go does.
func unqualified(*types.Package) string { return "" }

// objectSignature is how scip-go shows a declaration (typeStringForObject):
// "func (T).M(x int) error", "const C untyped int = 1", "struct field f
// string", "type T struct" plus its fields; a named type that is neither
// a struct nor an interface reads "type T int" (scip-go shows only "int").
func objectSignature(obj types.Object) (signature, extra string) {
	switch obj := obj.(type) {
	case *types.PkgName:
		return "package " + obj.Name(), ""
	case *types.TypeName:
		if obj.IsAlias() || obj.Pkg() == nil {
			break
		}
		switch obj.Type().Underlying().(type) {
		case *types.Struct:
			return "type " + obj.Name() + typeParams(obj) + " struct", typeBody(obj)
		case *types.Interface:
			return "type " + obj.Name() + typeParams(obj) + " interface", typeBody(obj)
		}
	case *types.Var:
		if obj.IsField() {
			return "struct " + obj.String(), ""
		}
	case *types.Const:
		return fmt.Sprintf("%s = %s", types.ObjectString(obj, unqualified), obj.Val()), ""
	}
	return types.ObjectString(obj, unqualified), ""
}

// typeParams is a generic type's parameter list, e.g. "[K comparable, V
// any]" ("" for a type that is not generic).
func typeParams(obj *types.TypeName) string {
	named, ok := obj.Type().(*types.Named)
	if !ok || named.TypeParams().Len() == 0 {
		return ""
	}
	var b strings.Builder
	for i := range named.TypeParams().Len() {
		tp := named.TypeParams().At(i)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tp.Obj().Name() + " " + types.TypeString(tp.Constraint(), unqualified))
	}
	return "[" + b.String() + "]"
}

// typeBody lays out a struct's fields or an interface's methods one per
// line, as scip-go does (formatTypeExtra), from types.TypeString's
// one-line form.
func typeBody(obj *types.TypeName) string {
	text := types.TypeString(obj.Type().Underlying(), unqualified)
	var b bytes.Buffer
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '"':
			end := closingQuote(text, i)
			b.WriteString(text[i : end+1])
			i = end
		case ';':
			b.WriteString("\n" + strings.Repeat("    ", depth))
			i++ // the space after it
		case '{':
			if i+1 < len(text) && text[i+1] == '}' {
				b.WriteString("{}")
				i++
				continue
			}
			depth++
			b.WriteString(" {\n" + strings.Repeat("    ", depth))
		case '}':
			depth--
			b.WriteString("\n" + strings.Repeat("    ", depth) + "}")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// closingQuote is the index of the quote that ends the string literal
// (a struct tag) opening at text[open].
func closingQuote(text string, open int) int {
	for j := open + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(text) - 1
}

// kindOf is the SCIP kind of a Go object.
func kindOf(obj types.Object) scip.SymbolInformation_Kind {
	switch obj := obj.(type) {
	case *types.PkgName:
		return scip.SymbolInformation_Package
	case *types.TypeName:
		return typeKind(obj)
	case *types.Func:
		sig, _ := obj.Type().(*types.Signature)
		switch {
		case sig == nil || sig.Recv() == nil:
			return scip.SymbolInformation_Function
		case types.IsInterface(sig.Recv().Type()):
			return scip.SymbolInformation_MethodSpecification
		}
		return scip.SymbolInformation_Method
	case *types.Var:
		switch {
		case obj.IsField():
			return scip.SymbolInformation_Field
		case obj.Kind() == types.ParamVar || obj.Kind() == types.ResultVar || obj.Kind() == types.RecvVar:
			return scip.SymbolInformation_Parameter
		}
		return scip.SymbolInformation_Variable
	case *types.Const:
		return scip.SymbolInformation_Constant
	}
	return scip.SymbolInformation_UnspecifiedKind
}

func typeKind(obj *types.TypeName) scip.SymbolInformation_Kind {
	switch {
	case obj.IsAlias():
		return scip.SymbolInformation_TypeAlias
	case isTypeParam(obj):
		return scip.SymbolInformation_TypeParameter
	}
	switch obj.Type().Underlying().(type) {
	case *types.Struct:
		return scip.SymbolInformation_Struct
	case *types.Interface:
		return scip.SymbolInformation_Interface
	}
	return scip.SymbolInformation_Type
}

func isTypeParam(obj *types.TypeName) bool {
	_, ok := obj.Type().(*types.TypeParam)
	return ok
}
