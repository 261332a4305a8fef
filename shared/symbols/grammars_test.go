//go:build cgo

package symbols

import (
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/language"
)

// TestGrammars: the grammars are exactly the tree-sitter parsers
// shared/language's table names, and each one's query compiles.
func TestGrammars(t *testing.T) {
	parsers := slices.DeleteFunc(language.Parsers(), func(p string) bool { return p == language.Go })
	for _, p := range parsers {
		g := grammarOf(p)
		if g == nil {
			t.Errorf("the language table names the parser %q, and there is no such grammar", p)
			continue
		}
		if _, err := g.newQuery(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for p := range grammars {
		if !slices.Contains(parsers, p) {
			t.Errorf("grammar %q is not a parser of the language table", p)
		}
	}
	if missing := Missing(); len(missing) > 0 {
		t.Errorf("a build with cgo misses %v", missing)
	}
}
