package toolset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/contextsearch"
	"github.com/toolshed/toolshed/shared/tools/navigate"
	"github.com/toolshed/toolshed/shared/wiring"
)

// TestOneParsePerFile: in the local server's process, the navigation
// tools (find_symbols' lookups and outlines, find_references' definition
// marks) and context_search's live code index read one parse of each
// file, the view's symbol table's: every file is parsed once.
func TestOneParsePerFile(t *testing.T) {
	ctx := context.Background()
	dir := repotest.GoPackages(t, "container/list", "container/ring", "sort")
	vars := map[string]string{config.Repos.Name(): dir, config.DataDir.Name(): t.TempDir()}
	getenv := func(k string) string { return vars[k] }
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	st := tooltest.BoltStores(t)
	env := wiring.NewEnv(cfg, nil).UseStores(st, nil)
	env.Getenv = getenv
	t.Cleanup(func() { env.Close() })

	tools, err := navigate.Family.New(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	search, err := contextsearch.FromEnv(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	search.Settle()
	h := tooltest.New(t, st, append(tools, contextsearch.Tools(search)...))
	var found struct {
		Index struct{ State string } `json:"index"`
	}
	h.OK(t, cfg.LocalTenant, navigate.FindSymbolsTool, `{"name":"Sort"}`, &found)
	h.OK(t, cfg.LocalTenant, navigate.FindSymbolsTool, `{"file":"container/list/list.go"}`, nil)
	h.OK(t, cfg.LocalTenant, navigate.FindReferencesTool, `{"name":"Len"}`, nil)
	var searched struct {
		Results []json.RawMessage `json:"results"`
	}
	h.OK(t, cfg.LocalTenant, contextsearch.Tool, `{"query":"doubly linked list"}`, &searched)
	if found.Index.State != "ready" || len(searched.Results) == 0 {
		t.Fatalf("symbol table %q, %d code results", found.Index.State, len(searched.Results))
	}

	src, err := env.Repo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view, err := src.Open(ctx, reposcope.Ref{Tenant: cfg.LocalTenant, Name: src.Default()})
	if err != nil {
		t.Fatal(err)
	}
	files, err := view.Searchable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parsable := 0
	for _, f := range files {
		if symbols.Supports(f.Path) {
			parsable++
		}
	}
	tables, err := env.SymbolTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := tables.For(view).Parses.Load(); n != int64(parsable) {
		t.Errorf("%d parses of %d files with symbols, want each parsed once", n, parsable)
	}
	for _, l := range search.LiveIndexes() {
		if int(l.Builds.Load()) != len(files) || l.Parses.Load() != 0 {
			t.Errorf("the code index cut %d files of %d, parsing %d itself", l.Builds.Load(), len(files), l.Parses.Load())
		}
	}
}
