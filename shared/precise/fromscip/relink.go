package fromscip

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise"
)

// relink corrects a document's occurrences where the indexer's symbols
// differ from the compiler's, so that every reader of the store gets the
// compiler's answer:
//   - constructed: `new C()` names C's constructor;
//   - splitOverloads: overloads share their parameters' symbols.
func relink(doc *precise.Document) {
	constructed(doc)
	splitOverloads(doc)
}

// constructorSuffix ends the symbol scip-typescript gives a class's
// constructor: C#`<constructor>`().
const constructorSuffix = "#`<constructor>`()."

// constructed adds, at each `new C(…)` that scip-typescript makes a
// reference to C's constructor (it does when C declares one), a
// reference to the class C at the same range: the TypeScript compiler
// counts these among the class's references. The constructor's
// reference stays (its callers). The class's symbol is a prefix of its
// constructor's, so it sorts first at that range: a question asked there
// is about the class, as the language service answers it.
func constructed(doc *precise.Document) {
	for _, o := range doc.Occurrences {
		if o.Roles&precise.Definition == 0 && strings.HasSuffix(o.Symbol, constructorSuffix) {
			o.Symbol = strings.TrimSuffix(o.Symbol, constructorSuffix) + "#"
			doc.Occurrences = append(doc.Occurrences, o)
		}
	}
}

// splitOverloads gives each overload of a function or method its own
// parameters and type parameters. scip-typescript names them after the
// function (f().(x), f().[T]) whatever the overload, while each overload
// declares its own (the compiler's references of one overload's T are
// not the others'). Within a document, each definition of such a symbol
// owns its occurrences up to the next one (an overload's declaration is
// contiguous): the first keeps the symbol, each other becomes a local
// symbol of the document, with a copy of what the index says of it (the
// indexer gives one per definition, in order).
func splitOverloads(doc *precise.Document) {
	defs := map[string]int{}
	for _, o := range doc.Occurrences {
		if o.Roles&precise.Definition != 0 && (strings.HasSuffix(o.Symbol, ")") || strings.HasSuffix(o.Symbol, "]")) {
			defs[o.Symbol]++
		}
	}
	var split []string
	for sym, n := range defs {
		if n > 1 && overloadable(sym) {
			split = append(split, sym)
		}
	}
	slices.Sort(split) // the local symbols' numbers do not depend on map order
	ids := newLocalIDs(doc)
	for _, sym := range split {
		splitSymbol(doc, sym, ids)
	}
}

// overloadable reports whether a symbol is a parameter or type parameter
// of a function or method.
func overloadable(symbol string) bool {
	s, err := scip.ParseSymbol(symbol)
	if err != nil || len(s.Descriptors) < 2 {
		return false
	}
	last, owner := s.Descriptors[len(s.Descriptors)-1], s.Descriptors[len(s.Descriptors)-2]
	return owner.Suffix == scip.Descriptor_Method &&
		(last.Suffix == scip.Descriptor_Parameter || last.Suffix == scip.Descriptor_TypeParameter)
}

// splitSymbol gives the occurrences of sym from its second definition on
// a new local symbol per definition.
func splitSymbol(doc *precise.Document, sym string, ids *localIDs) {
	var at []int // doc.Occurrences' indexes of sym, by position
	for i, o := range doc.Occurrences {
		if o.Symbol == sym {
			at = append(at, i)
		}
	}
	slices.SortStableFunc(at, func(a, b int) int {
		ra, rb := doc.Occurrences[a].Range, doc.Occurrences[b].Range
		return cmp.Or(cmp.Compare(ra.Line, rb.Line), cmp.Compare(ra.Column, rb.Column))
	})
	var infos []precise.SymbolInfo
	for _, s := range doc.Symbols {
		if s.Symbol == sym {
			infos = append(infos, s)
		}
	}
	group, current := -1, sym
	for _, i := range at {
		o := &doc.Occurrences[i]
		if o.Roles&precise.Definition != 0 {
			group++
			if group > 0 {
				current = ids.next()
				info := precise.SymbolInfo{Symbol: sym}
				if len(infos) > 0 {
					info = infos[min(group, len(infos)-1)]
				}
				doc.Symbols = append(doc.Symbols, localInfo(info, current))
			}
		}
		o.Symbol = current
	}
}

// localInfo is what the index says of a global symbol, as a local one's.
func localInfo(info precise.SymbolInfo, local string) precise.SymbolInfo {
	if d := lastDescriptor(info.Symbol); d != nil {
		info.DisplayName = cmp.Or(info.DisplayName, d.Name)
		info.Kind = cmp.Or(info.Kind, d.Suffix.String())
	}
	info.Symbol = local
	return info
}

// localIDs makes local symbols no other of the document has.
type localIDs struct {
	taken map[string]bool
	n     int
}

func newLocalIDs(doc *precise.Document) *localIDs {
	ids := &localIDs{taken: map[string]bool{}}
	for _, o := range doc.Occurrences {
		if strings.HasPrefix(o.Symbol, "local ") {
			ids.taken[o.Symbol] = true
		}
	}
	return ids
}

func (ids *localIDs) next() string {
	for {
		ids.n++
		s := fmt.Sprintf("local overload%d", ids.n)
		if !ids.taken[s] {
			ids.taken[s] = true
			return s
		}
	}
}
