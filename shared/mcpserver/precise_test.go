package mcpserver_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/tools/navigate"
	"github.com/toolshed/toolshed/shared/wiring"
)

// preciseCommit is the commit the golden exchanges' precise index says it
// was made of.
const preciseCommit = "5ca1ab1e"

// newPreciseHandler serves the navigation tools over a copy of the
// example project whose src/server/auth/TokenManager.ts changed after its
// precise index (scip-typescript's, made of the project as committed)
// was made: answers about the other files are precise, about that one
// made by search. Cursors are made with a fixed key, so that the golden
// files hold the same ones at every run.
func newPreciseHandler(t *testing.T) http.Handler {
	t.Helper()
	ix := precisetest.TypeScript(t, exampleRepo, "", preciseCommit)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(exampleRepo)); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(dir, "src/server/auth/TokenManager.ts")
	old, err := os.ReadFile(changed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, append([]byte("// Tokens revoked before they expire.\n"), old...), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := cursor.NewKey([]byte("golden exchanges' cursor key, 32 bytes at least"))
	if err != nil {
		t.Fatal(err)
	}
	repos := precisetest.Repos{"default": {ix}}
	p, err := wiring.Pipeline(navigate.Tools(repotest.Local(t, dir), key, repos.Indexes), wiring.PipelineOptions{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return repoHandlerOver(t, p)
}
