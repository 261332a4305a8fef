package mcpserver_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// exampleRepo is the small TypeScript project the contract examples read.
const exampleRepo = "../toolset/testdata/example-repo"

// repoTools are the tools the repository server serves: hello and every
// tool the resources, prompts and completions compose.
var repoTools = []string{"hello", "read_file", "list_files", "find_symbols", "read_memory", "write_memory_entry", "list_tasks", "add_task"}

// newRepoPipeline serves repoTools over the repositories repos (-repo
// specs; exampleRepo without any), with an embedded store in a temporary
// directory and no rate limits.
func newRepoPipeline(t *testing.T, repos ...string) *toolkit.Pipeline {
	t.Helper()
	dir := t.TempDir()
	db, err := boltstore.Open(filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if len(repos) == 0 {
		repos = []string{exampleRepo}
	}
	env := wiring.NewEnv(config.Config{DataDir: dir, Repos: repos}, nil).UseStores(db.Stores(), nil)
	t.Cleanup(func() { env.Close() })
	tools, err := family.Build(context.Background(), toolset.Families, env, repoTools...)
	if err != nil {
		t.Fatal(err)
	}
	var served []toolkit.Tool
	for _, tool := range tools {
		for _, name := range repoTools {
			if tool.Name == name {
				served = append(served, tool)
			}
		}
	}
	p, err := wiring.Pipeline(served, wiring.PipelineOptions{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newRepoHandler is the gateway's handler over newRepoPipeline(repos),
// every request from tenant "golden".
func newRepoHandler(t *testing.T, repos ...string) http.Handler {
	t.Helper()
	p := newRepoPipeline(t, repos...)
	hc := as("golden", "req-golden")
	hc.Invoker, hc.MCP = p, mcpserver.New(mcpserver.Config{Name: "toolshed", Version: "golden", Tools: p})
	return httpapi.New(hc)
}
