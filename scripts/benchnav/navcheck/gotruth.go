package navcheck

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"math/rand/v2"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/toolshed/toolshed/shared/goscip"
)

// Sample says which identifiers a Truth holds.
type Sample struct {
	// All takes every use and every symbol (for small fixtures); else
	// Uses uses are drawn at random, and the symbols of the first
	// Symbols of them.
	All           bool
	Uses, Symbols int
	// Names are ambiguous names: every method, function and type of
	// one of these names is a symbol of the Truth, in the name's group.
	Names []string
	Seed  uint64
}

// goLoadMode is the full load: syntax and types of every package, its
// dependencies' from source, so that an object used in one package and
// declared in another has its declaration's position.
const goLoadMode = packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
	packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo

// goUse is one use the Go truth found: where, and which object (an
// index into goUses.objects).
type goUse struct {
	at  Location
	obj int32
	// defines says the identifier defines something too (an embedded
	// field is the field's definition and its type's use): references
	// are asked for at the object's declaration instead.
	defines bool
}

// goObject is an object with uses: where its declaration is, and its name.
type goObject struct {
	def   Location
	kind  string
	name  string // the identifier; for Names' objects, as Go prints them
	group string // the ambiguous name it is one of, if any
}

// goUses gathers the uses of every module's packages: objects are told
// apart by their declaration's place, which holds across go/packages
// loads (std is loaded again as cmd's dependency).
type goUses struct {
	uses     []goUse
	objects  []goObject
	byDef    map[Location]int32
	files    map[string]bool
	paths    map[string]string // interned paths
	excluded map[string]int
	names    map[string]bool
}

// GoTruth type-checks the Go modules under dir as goscip's index of it
// does (the same packages, files and build settings, through
// goscip.Listings; test files left out) and takes a sample of its uses
// and symbols. Package names (go/types resolves one to its import, an
// index to the package), labels (no SCIP symbol), the blank identifier,
// the universe's objects and what unsafe declares are left out.
func GoTruth(ctx context.Context, dir string, s Sample) (*Truth, error) {
	listings, done, err := goscip.Listings(dir)
	if err != nil {
		return nil, err
	}
	defer done()
	g := &goUses{byDef: map[Location]int32{}, files: map[string]bool{}, paths: map[string]string{},
		excluded: map[string]int{}, names: map[string]bool{}}
	for _, n := range s.Names {
		g.names[n] = true
	}
	for _, l := range listings {
		cfg := &packages.Config{Context: ctx, Mode: goLoadMode, Dir: l.Dir, Env: l.Env}
		roots, err := packages.Load(cfg, "./...")
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", l.Module, err)
		}
		for _, p := range roots {
			g.addPackage(p, l.Document)
		}
	}
	return g.truth(s), nil
}

// addPackage records the uses in p's files.
func (g *goUses) addPackage(p *packages.Package, document func(string) (string, bool)) {
	if p.TypesInfo == nil {
		return
	}
	where := func(pos token.Pos) (Location, bool) {
		position := p.Fset.Position(pos)
		path, ok := document(position.Filename)
		if !ok || !pos.IsValid() {
			return Location{}, false
		}
		if g.paths[path] == "" {
			g.paths[path] = path
		}
		return Location{Path: g.paths[path], Line: position.Line, Column: position.Column}, true
	}
	for _, f := range p.GoFiles {
		if path, ok := document(f); ok {
			g.files[path] = true
		}
	}
	// Every method, function and type of an ambiguous name is a symbol,
	// used or not.
	for id, obj := range p.TypesInfo.Defs {
		if obj != nil && g.names[id.Name] && global(obj) {
			if def, ok := where(id.Pos()); ok {
				g.object(def, obj)
			}
		}
	}
	for id, obj := range p.TypesInfo.Uses {
		if why := leftOut(id, obj); why != "" {
			g.excluded[why]++
			continue
		}
		at, ok := where(id.Pos())
		def, dok := where(origin(obj).Pos())
		if !ok || !dok {
			g.excluded["outside the tree"]++
			continue
		}
		g.uses = append(g.uses, goUse{at: at, obj: g.object(def, origin(obj)), defines: p.TypesInfo.Defs[id] != nil})
	}
}

// leftOut says why a use is not compared, or "".
func leftOut(id *ast.Ident, obj types.Object) string {
	switch {
	case id.Name == "_":
		return "blank"
	case obj.Pkg() == nil:
		return "universe"
	case obj.Pkg().Path() == "unsafe":
		return "unsafe"
	}
	switch obj.(type) {
	case *types.PkgName:
		return "package name"
	case *types.Label:
		return "label"
	}
	return ""
}

// object returns the index of the object declared at def.
func (g *goUses) object(def Location, obj types.Object) int32 {
	if i, ok := g.byDef[def]; ok {
		return i
	}
	o := goObject{def: def, name: obj.Name(), kind: kind(obj)}
	if g.names[obj.Name()] && global(obj) {
		o.name, o.group = printed(obj), obj.Name()
	}
	g.objects = append(g.objects, o)
	g.byDef[def] = int32(len(g.objects) - 1)
	return int32(len(g.objects) - 1)
}

// kind says what obj is, as Go calls it.
func kind(obj types.Object) string {
	switch obj := obj.(type) {
	case *types.Func:
		if obj.Signature().Recv() != nil {
			return "method"
		}
		return "func"
	case *types.TypeName:
		if _, ok := obj.Type().(*types.TypeParam); ok {
			return "type parameter"
		}
		return "type"
	case *types.Const:
		return "const"
	case *types.Var:
		switch {
		case obj.IsField():
			return "field"
		case obj.Parent() == obj.Pkg().Scope():
			return "var"
		}
		return "local var"
	}
	return "other"
}

// global reports whether obj is a method or a package's function or type.
func global(obj types.Object) bool {
	switch obj := obj.(type) {
	case *types.Func:
		return obj.Signature().Recv() != nil || obj.Parent() == obj.Pkg().Scope()
	case *types.TypeName:
		return obj.Parent() == obj.Pkg().Scope()
	}
	return false
}

// printed names obj as Go prints it: (*os.File).Close, io.Reader.Read,
// net/http.Get.
func printed(obj types.Object) string {
	if f, ok := obj.(*types.Func); ok && f.Signature().Recv() != nil {
		recv := f.Signature().Recv().Type()
		if _, iface := recv.Underlying().(*types.Interface); iface {
			if named, ok := recv.(*types.Named); ok {
				return named.Obj().Pkg().Path() + "." + named.Obj().Name() + "." + f.Name()
			}
		}
		return "(" + types.TypeString(recv, nil) + ")." + f.Name()
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

func origin(obj types.Object) types.Object {
	switch obj := obj.(type) {
	case *types.Var:
		return obj.Origin()
	case *types.Func:
		return obj.Origin()
	}
	return obj
}

// truth draws the sample.
func (g *goUses) truth(s Sample) *Truth {
	slices.SortFunc(g.uses, func(a, b goUse) int { return compareLocations(a.at, b.at) })
	g.uses = slices.CompactFunc(g.uses, func(a, b goUse) bool { return a.at == b.at })
	t := &Truth{Files: g.files, Excluded: g.excluded}
	picked := g.uses
	if !s.All {
		rng := rand.New(rand.NewPCG(s.Seed, s.Seed))
		picked = nil
		for _, i := range rng.Perm(len(g.uses))[:min(s.Uses, len(g.uses))] {
			picked = append(picked, g.uses[i])
		}
	}
	bySymbol := map[int32][]Location{}
	for _, u := range g.uses {
		bySymbol[u.obj] = append(bySymbol[u.obj], u.at)
	}
	chosen := map[int32]bool{}
	for i, u := range picked {
		o := g.objects[u.obj]
		t.Uses = append(t.Uses, Use{At: u.at, Name: o.name, Definitions: []Location{o.def}})
		if (s.All || i < s.Symbols) && !chosen[u.obj] {
			chosen[u.obj] = true
			at := u.at
			if u.defines {
				at = o.def
			}
			t.Symbols = append(t.Symbols, Symbol{Name: o.name, Kind: o.kind, At: at, Uses: bySymbol[u.obj]})
		}
	}
	var named []Symbol
	for i, o := range g.objects {
		if o.group != "" {
			named = append(named, Symbol{Name: o.name, Kind: o.kind, Group: o.group, At: o.def, Uses: bySymbol[int32(i)]})
		}
	}
	slices.SortFunc(named, func(a, b Symbol) int { return compareLocations(a.At, b.At) })
	t.Symbols = append(t.Symbols, named...)
	return t
}

func compareLocations(a, b Location) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	return a.Column - b.Column
}
