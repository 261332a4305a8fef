package goscip

import (
	"go/types"
	"sort"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
)

// interfaces holds the method sets of every named interface with methods
// that step 1 checked (the indexed module's and its dependencies', as
// scip-go relates a module's types to the interfaces of everything it
// loads). A method is a canonical string (name and parameter and result
// types, package-qualified when unexported, as scip-go's
// canonicalizeMethod), numbered.
//
// One difference from scip-go: the Error method of an embedded error
// (which has no symbol) is part of an interface's method set here, so a
// type without an Error method does not implement interface{ error;
// Code() int }; scip-go leaves it out and relates every type with a Code
// method to that interface.
type interfaces struct {
	methodIDs map[string]int
	list      []iface
	seen      map[string]bool // interface symbols
	byMethod  map[int][]int   // an interface's first method → interfaces
}

type iface struct {
	symbol  string
	methods []int          // all its methods
	symbols map[int]string // its methods' symbols (a method of the universe's error has none)
}

func newInterfaces() *interfaces {
	return &interfaces{methodIDs: map[string]int{}, seen: map[string]bool{}, byMethod: map[int][]int{}}
}

// add records the interfaces declared at package level in pkg.
func (is *interfaces) add(pkg *types.Package, symbolOf func(types.Object) (string, bool)) {
	for _, named := range namedTypes(pkg) {
		if !types.IsInterface(named) {
			continue
		}
		symbol, ok := symbolOf(named.Obj())
		methods := methodSet(named)
		if !ok || len(methods) == 0 || is.seen[symbol] {
			continue
		}
		is.seen[symbol] = true
		it := iface{symbol: symbol, symbols: map[int]string{}}
		for _, m := range methods {
			id := is.methodID(m)
			it.methods = append(it.methods, id)
			if s, ok := symbolOf(m.Obj()); ok {
				it.symbols[id] = s
			}
		}
		is.byMethod[it.methods[0]] = append(is.byMethod[it.methods[0]], len(is.list))
		is.list = append(is.list, it)
	}
}

// relate adds is_implementation relationships to the symbols p declares:
// from each named non-interface type of pkg to every interface whose
// methods it has (with its pointer's methods), and from its methods to
// the interface methods they implement. A method promoted from another
// package's type gets none (its symbol information is that package's).
func (is *interfaces) relate(pkg *types.Package, p *emitted) {
	if pkg == nil {
		return
	}
	for _, named := range namedTypes(pkg) {
		info := p.infos[named.Obj().Pos()]
		if types.IsInterface(named) || info == nil {
			continue
		}
		has := map[int]*scip.SymbolInformation{}
		for _, m := range methodSet(named) {
			has[is.methodID(m)] = p.infos[m.Obj().Pos()]
		}
		if len(has) == 0 {
			continue
		}
		found := is.candidates(has)
		sort.Ints(found) // in the order interfaces were met: dependencies first
		for _, i := range found {
			it := is.list[i]
			info.Relationships = appendImplementation(info.Relationships, it.symbol)
			for _, id := range it.methods {
				if mi, symbol := has[id], it.symbols[id]; mi != nil && symbol != "" {
					mi.Relationships = appendImplementation(mi.Relationships, symbol)
				}
			}
		}
	}
}

// candidates are the interfaces all of whose methods are in has.
func (is *interfaces) candidates(has map[int]*scip.SymbolInformation) []int {
	var found []int
	for id := range has {
		for _, i := range is.byMethod[id] {
			if all(is.list[i].methods, has) {
				found = append(found, i)
			}
		}
	}
	return found
}

func all(methods []int, has map[int]*scip.SymbolInformation) bool {
	for _, id := range methods {
		if _, ok := has[id]; !ok {
			return false
		}
	}
	return true
}

func appendImplementation(rels []*scip.Relationship, symbol string) []*scip.Relationship {
	for _, r := range rels {
		if r.Symbol == symbol && r.IsImplementation {
			return rels
		}
	}
	return append(rels, &scip.Relationship{Symbol: symbol, IsImplementation: true})
}

func (is *interfaces) methodID(m *types.Selection) int {
	key := canonicalMethod(m)
	id, ok := is.methodIDs[key]
	if !ok {
		id = len(is.methodIDs)
		is.methodIDs[key] = id
	}
	return id
}

// namedTypes are the defined (not alias) types declared at package level.
func namedTypes(pkg *types.Package) []*types.Named {
	var named []*types.Named
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		if n, ok := tn.Type().(*types.Named); ok {
			named = append(named, n)
		}
	}
	return named
}

// methodSet is the method set of T with the methods of *T that T lacks
// (scip-go's listMethods).
func methodSet(t *types.Named) []*types.Selection {
	mset := types.NewMethodSet(t)
	var all []*types.Selection
	for i := range mset.Len() {
		all = append(all, mset.At(i))
	}
	pset := types.NewMethodSet(types.NewPointer(t))
	for i := range pset.Len() {
		if m := pset.At(i); mset.Lookup(m.Obj().Pkg(), m.Obj().Name()) == nil {
			all = append(all, m)
		}
	}
	return all
}

// canonicalMethod is scip-go's canonicalizeMethod: "name(params) results",
// with the package path first when the name is unexported, so that it
// only matches methods of the same package.
func canonicalMethod(m *types.Selection) string {
	var b strings.Builder
	obj := m.Obj()
	if !obj.Exported() && obj.Pkg() != nil {
		b.WriteString(obj.Pkg().Path() + ":")
	}
	b.WriteString(obj.Name() + "(")
	sig := m.Type().(*types.Signature)
	writeTuple(&b, sig.Params())
	b.WriteString(")")
	switch sig.Results().Len() {
	case 0:
	case 1:
		b.WriteString(" ")
		writeTuple(&b, sig.Results())
	default:
		b.WriteString(" (")
		writeTuple(&b, sig.Results())
		b.WriteString(")")
	}
	return b.String()
}

func writeTuple(b *strings.Builder, t *types.Tuple) {
	for i := range t.Len() {
		b.WriteString(t.At(i).Type().String())
	}
}
