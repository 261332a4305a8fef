package goscip

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
)

// emitted is a unit being written (step 2): its syntax, types.Info and
// the symbol information of its declarations.
type emitted struct {
	ix          *indexer
	u           *unit
	info        *types.Info
	files       []*ast.File
	names       map[token.Pos]declared                    // its declarations, by step 2's positions
	infos       map[token.Pos]*scip.SymbolInformation     // their symbol information
	byFile      map[*token.File][]*scip.SymbolInformation // the same, by file, in position order
	pkgFile     int                                       // the file that defines the package symbol
	caseClauses map[token.Pos]types.Object                // type switch variables, by position
}

// symbolInfos makes the symbol information of p's declarations and of the
// package, and finds the type switch variables.
func (p *emitted) symbolInfos() {
	p.infos = make(map[token.Pos]*scip.SymbolInformation, len(p.names))
	p.byFile = map[*token.File][]*scip.SymbolInformation{}
	positions := make([]token.Pos, 0, len(p.names))
	for pos, d := range p.names {
		p.infos[pos] = symbolInfo(d, p.info.Defs[d.ident])
		positions = append(positions, pos)
	}
	sort.Slice(positions, func(i, j int) bool { return positions[i] < positions[j] })
	for _, pos := range positions {
		tf := p.ix.fset.File(pos)
		p.byFile[tf] = append(p.byFile[tf], p.infos[pos])
	}
	p.pkgFile = p.packageFile()
	p.caseClauses = map[token.Pos]types.Object{}
	for node, obj := range p.info.Implicits {
		if _, ok := node.(*ast.CaseClause); ok {
			p.caseClauses[obj.Pos()] = obj
		}
	}
}

// document writes the document of file f, the i-th of the unit.
func (p *emitted) document(f *ast.File, i int) error {
	tf := p.ix.fset.File(f.FileStart)
	path, ok := p.ix.paths.document(tf.Name())
	if !ok {
		return nil
	}
	d := &docBuilder{p: p, tf: tf, locals: map[token.Pos]string{}, renamed: map[string]string{},
		lookup: p.ix.lookup(p.names)}
	d.packageClause(f, i == p.pkgFile)
	for _, decl := range f.Decls {
		ast.Inspect(decl, d.visit)
	}
	var symbols []*scip.SymbolInformation
	if i == p.pkgFile {
		symbols = append(symbols, &scip.SymbolInformation{Symbol: p.u.pkgSymbol, DisplayName: p.u.name,
			Kind: scip.SymbolInformation_Package, Documentation: []string{packageDoc(f)}})
	}
	symbols = append(append(symbols, p.byFile[tf]...), d.localInfos...)
	return p.ix.out.document(&scip.Document{Language: "go", RelativePath: path, Occurrences: d.occs,
		Symbols: symbols, PositionEncoding: scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart})
}

// packageDoc is the package's doc comment, or "package name" without one.
func packageDoc(f *ast.File) string {
	if f.Doc != nil {
		return f.Doc.Text()
	}
	return "package " + f.Name.Name
}

// docBuilder collects the occurrences and locals of one document, as
// scip-go's file visitor does.
type docBuilder struct {
	p          *emitted
	tf         *token.File
	lookup     func(types.Object) (string, bool)
	occs       []*scip.Occurrence
	locals     map[token.Pos]string // local symbols, by the position of their object
	localInfos []*scip.SymbolInformation
	renamed    map[string]string // package path → the local symbol of its import name
}

func (d *docBuilder) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.ImportSpec:
		d.importSpec(n)
		return false
	case *ast.SelectorExpr:
		return !d.packageSelector(n)
	case *ast.Ident:
		d.ident(n)
	}
	return true
}

// packageClause is the package name of a file: the package symbol's
// definition in the file scip-go chooses (packageFile), a reference in
// the others.
func (d *docBuilder) packageClause(f *ast.File, defines bool) {
	role := scip.SymbolRole_ReadAccess
	if defines {
		role = scip.SymbolRole_Definition
	}
	d.occur(f.Name.Pos(), len(f.Name.Name), d.p.u.pkgSymbol, role)
}

// importSpec: a renamed import defines a local (which the file's uses of
// the name refer to); the path refers to the package.
func (d *docBuilder) importSpec(spec *ast.ImportSpec) {
	path, err := strconv.Unquote(spec.Path.Value)
	dep := d.p.u.imports[path]
	if err != nil || dep == nil {
		return
	}
	if spec.Name != nil && spec.Name.Name != "." && spec.Name.Name != "_" {
		local := d.newLocal(spec.Name.Pos(), d.p.info.Defs[spec.Name])
		d.occur(spec.Name.Pos(), len(spec.Name.Name), local, scip.SymbolRole_Definition)
		d.renamed[dep.path] = local
	}
	if dep.hasSymbol() {
		d.occur(spec.Path.Pos()+1, len(path), dep.pkgSymbol, scip.SymbolRole_ReadAccess)
	}
}

// packageSelector handles pkg.Name: pkg refers to the package (or to its
// import name), then Name as any identifier. It reports whether sel was
// one; a package without a symbol (unsafe) gets no occurrence, nor does
// its member, as in scip-go.
func (d *docBuilder) packageSelector(sel *ast.SelectorExpr) bool {
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	pkgName, ok := d.p.info.Uses[x].(*types.PkgName)
	if !ok {
		return false
	}
	path := pkgName.Imported().Path()
	symbol, ok := d.renamed[path]
	if !ok {
		dep := d.p.u.byPath(path)
		if dep == nil || !dep.hasSymbol() {
			return true
		}
		symbol = dep.pkgSymbol
	}
	d.occur(x.Pos(), len(x.Name), symbol, scip.SymbolRole_ReadAccess)
	d.ident(sel.Sel)
	return true
}

// ident records what an identifier defines and what it uses (an embedded
// field does both). Labels and the blank identifier are left out.
func (d *docBuilder) ident(id *ast.Ident) {
	if id.Name == "_" {
		return
	}
	if obj, ok := d.p.caseClauses[id.Pos()]; ok {
		d.occur(id.Pos(), len(id.Name), d.newLocal(obj.Pos(), obj), scip.SymbolRole_Definition)
		return
	}
	if def := d.p.info.Defs[id]; def != nil && !isLabel(def) {
		symbol := d.p.names[def.Pos()].symbol
		if symbol == "" {
			symbol = d.newLocal(def.Pos(), def)
		}
		d.occur(id.Pos(), len(id.Name), symbol, scip.SymbolRole_Definition)
	}
	if use := d.p.info.Uses[id]; use != nil {
		symbol, ok := d.locals[use.Pos()]
		if !ok {
			symbol, ok = d.lookup(use)
		}
		if ok {
			d.occur(id.Pos(), len(id.Name), symbol, scip.SymbolRole_ReadAccess)
		}
	}
}

func isLabel(obj types.Object) bool {
	_, ok := obj.(*types.Label)
	return ok
}

// newLocal is the local symbol of the object at pos, made on its first
// definition: "local N", N counting the document's locals.
func (d *docBuilder) newLocal(pos token.Pos, obj types.Object) string {
	if symbol, ok := d.locals[pos]; ok {
		return symbol
	}
	symbol := "local " + strconv.Itoa(len(d.locals))
	d.locals[pos] = symbol
	d.localInfos = append(d.localInfos, localInfo(symbol, obj))
	return symbol
}

// occur adds an occurrence of symbol on the length bytes at pos (SCIP
// ranges are 0-based, columns in bytes: line, start, end).
func (d *docBuilder) occur(pos token.Pos, length int, symbol string, role scip.SymbolRole) {
	at := d.tf.PositionFor(pos, false)
	line, col := int32(at.Line-1), int32(at.Column-1)
	d.occs = append(d.occs, &scip.Occurrence{Range: []int32{line, col, col + int32(length)},
		Symbol: symbol, SymbolRoles: int32(role)})
}

// packageFile is the file whose package clause defines the package symbol,
// chosen as scip-go does (findBestPackageDefinitionPath): the one file
// with a package doc comment; else among those with one (or all), files
// whose _test-ness matches the package's, then doc.go, else the closest
// name to the package's by edit distance (measured, as scip-go does, on
// the file's whole path without .go).
func (p *emitted) packageFile() int {
	var candidates, documented []int
	for i, f := range p.files {
		candidates = append(candidates, i)
		if f.Doc != nil {
			documented = append(documented, i)
		}
	}
	if len(documented) == 1 {
		return documented[0]
	}
	if len(documented) > 1 {
		candidates = documented
	}
	names := make([]string, len(p.files))
	for i, f := range p.files {
		names[i] = p.ix.fset.File(f.FileStart).Name()
		if doc, ok := p.ix.paths.document(names[i]); ok {
			names[i] = filepath.Join(p.ix.paths.root, doc)
		}
	}
	candidates = preferTestness(p.u.name, candidates, names)
	best, bestDistance := -1, int(^uint(0)>>1)
	for _, i := range candidates {
		if filepath.Base(names[i]) == "doc.go" {
			return i
		}
		if d := editDistance(p.u.name, strings.TrimSuffix(names[i], filepath.Ext(names[i]))); d < bestDistance {
			best, bestDistance = i, d
		}
	}
	return best
}

// preferTestness keeps the files that are _test.go files exactly when the
// package is an external test package, if any.
func preferTestness(pkgName string, candidates []int, names []string) []int {
	var kept []int
	for _, i := range candidates {
		if strings.HasSuffix(pkgName, "_test") == strings.HasSuffix(names[i], "_test.go") {
			kept = append(kept, i)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return candidates
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(sa, sb string) int {
	a, b := []rune(sa), []rune(sb)
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diagonal := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			diagonal, row[j] = row[j], min(row[j]+1, row[j-1]+1, diagonal+cost)
		}
	}
	return row[len(b)]
}
