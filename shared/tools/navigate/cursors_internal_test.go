package navigate

import (
	"context"
	"math"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// FuzzCursorPositions: a position only reaches a tool in a cursor the
// tool issued (shared/cursor's FuzzDecode covers what anyone else sends),
// yet every tool answers any position of the right shape, as a key that
// leaked would let one be made, with a page or INVALID_INPUT: never a
// panic, never another error.
func FuzzCursorPositions(f *testing.F) {
	files := map[string]string{
		"a/b.go":   "package b\n\nvar Alpha, Alpha2 int\n\nfunc Alpha3() { Alpha = Alpha2 }\n",
		"a/c.go":   "package b\n\nfunc AlphaC() { Alpha3() }\n",
		"a/c/d.go": "package d\n\nconst Alpha = 1\n",
		"z.md":     "Alpha\n",
	}
	key := cursor.RandomKey()
	dir := repotest.WriteDir(f, files)
	s := service{src: repotest.Local(f, dir), tables: symbols.NewTables(nil, nil), codeIndex: noCodeIndexes, cursors: key, precise: wiring.NoPreciseIndexes, preciseState: noPreciseIndexes}
	for _, seed := range []struct {
		text    string
		a, b, c uint64
	}{
		{"", 0, 0, 0}, {"a/b.go", 1, 3, 2}, {"a/c.go", 0, 13, 21}, {"z.md", 5, 0, 1},
		{"a", math.MaxInt64, math.MaxInt64, math.MaxInt64}, {"../x", 1_000_000_000, 1, 1}, {"a/b.go\x00", 3, 1 << 40, 7},
	} {
		f.Add(seed.text, seed.a, seed.b, seed.c)
	}
	f.Fuzz(func(t *testing.T, text string, a, b, c uint64) {
		na, nb, nc := int(min(a, math.MaxInt)), int(min(b, math.MaxInt)), int(min(c, math.MaxInt))
		call := toolkit.Call{Tenant: "acme"}
		ctx := context.Background()
		check := func(what string, _ toolkit.Result, err error) {
			if err != nil {
				if te := toolerr.From(err); te == nil || te.Code != toolerr.InvalidInput {
					t.Fatalf("%s: %v, want a page or INVALID_INPUT", what, err)
				}
			}
		}
		lf := listInput{Depth: 3, Limit: 2}
		lf.Cursor = key.Scope(ListFilesTool, call.Tenant, s.src.Default(), lf).Encode(text)
		res, err := s.listFiles(ctx, call, lf)
		check("list_files", res, err)

		lr := reposInput{Limit: 1}
		lr.Cursor = key.Scope(ListReposTool, call.Tenant, "", lr).Encode(text)
		res, err = s.listRepos(ctx, call, lr)
		check("list_repos", res, err)

		lookup := symbolsInput{Name: "Alpha", Match: string(symbols.Prefix), Limit: 2}
		lookup.Cursor = key.Scope(FindSymbolsTool, call.Tenant, s.src.Default(), lookup).Encode(na, text, nb, nc, na)
		res, err = s.findSymbols(ctx, call, lookup)
		check("find_symbols lookup", res, err)

		ol := symbolsInput{File: "a/b.go", Limit: 1}
		ol.Cursor = key.Scope(outlineKind, call.Tenant, s.src.Default(), ol).Encode(na)
		res, err = s.findSymbols(ctx, call, ol)
		check("find_symbols outline", res, err)

		refs := refsInput{Name: "Alpha", Limit: schema.Int(max(1, nb%5))}
		refs.Cursor = key.Scope(FindReferencesTool, call.Tenant, s.src.Default(), refs).Encode(text, na, nb)
		res, err = s.findReferences(ctx, call, refs)
		check("find_references", res, err)

		// Without a precise index, the position tools answer by search.
		at := positionInput{Path: "a/c.go", Line: 3, Column: 18}
		callers := callersInput{positionInput: at, Direction: incoming, Limit: schema.Int(max(1, nb%5))}
		callers.Cursor = key.Scope(FindCallersTool+" search incoming", call.Tenant, s.src.Default(), callers).Encode(text, na, nb)
		res, err = s.findCallers(ctx, call, callers)
		check("find_callers incoming", res, err)

		callees := callersInput{positionInput: at, Direction: outgoing, Limit: 1}
		callees.Cursor = key.Scope(FindCallersTool+" search outgoing", call.Tenant, s.src.Default(), callees).Encode(na)
		res, err = s.findCallers(ctx, call, callees)
		check("find_callers outgoing", res, err)

		impls := implsInput{positionInput: at, Limit: 1}
		impls.Cursor = key.Scope(FindImplementationsTool, call.Tenant, s.src.Default(), impls).Encode(na)
		res, err = s.findImplementations(ctx, call, impls)
		check("find_implementations", res, err)
	})
}
