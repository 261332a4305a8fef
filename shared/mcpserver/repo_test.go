package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// exampleRepo is the small TypeScript project the contract examples read.
const exampleRepo = "../toolset/testdata/example-repo"

// repoTools are the tools the repository server serves: hello and every
// tool the resources, prompts and completions compose.
var repoTools = []string{"hello", "read_file", "list_files", "find_symbols", "read_memory", "write_memory_entry", "list_tasks", "add_task",
	"list_commits", "get_commit", "blame", "compare"}

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
	return repoHandlerOver(t, newRepoPipeline(t, repos...))
}

// repoHandlerOver is the gateway's handler over p, every request from
// tenant "golden".
func repoHandlerOver(t *testing.T, p *toolkit.Pipeline) http.Handler {
	t.Helper()
	hc := as("golden", "req-golden")
	hc.Invoker, hc.MCP = p, mcpserver.New(mcpserver.Config{Name: "toolshed", Version: "golden", Tools: p})
	return httpapi.New(hc)
}

// TestResourcesPageThroughTheTools: resources/list pages through the
// repository's top level with list_files' cursors, and resources/read
// reads a memory file through every page of read_memory's: the features
// call the tools with the arguments their cursors were issued for. A
// cursor they did not issue is refused.
func TestResourcesPageThroughTheTools(t *testing.T) {
	files := map[string]string{}
	for i := range 250 {
		files[fmt.Sprintf("f%03d.txt", i)] = "x\n"
	}
	p := newRepoPipeline(t, repotest.WriteDir(t, files))
	for i := range 150 {
		args := fmt.Sprintf(`{"file":"best_practices.md","content":"- practice %d"}`, i)
		if out := p.Invoke(context.Background(), toolkit.Request{Tool: "write_memory_entry", Args: json.RawMessage(args), Tenant: "golden"}); !out.OK {
			t.Fatalf("write_memory_entry: %+v", out.Error)
		}
	}
	h := repoHandlerOver(t, p)

	var listed []string
	pages := 0
	for cursor := ""; pages < 5; pages++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Result struct {
				Resources []struct {
					URI string `json:"uri"`
				} `json:"resources"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params})
		if err := json.Unmarshal([]byte(answer(h, string(call))), &res); err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Result.Resources {
			if strings.HasPrefix(r.URI, "repo://") {
				listed = append(listed, r.URI)
			}
		}
		if cursor = res.Result.NextCursor; cursor == "" {
			break
		}
	}
	once := len(slices.Compact(slices.Clone(listed))) == len(listed)
	if len(listed) != 250 || !slices.IsSorted(listed) || !once || pages != 1 {
		t.Errorf("listed %d files (sorted %v, once each %v) in %d pages; want the 250, sorted, once each, in 2",
			len(listed), slices.IsSorted(listed), once, pages+1)
	}

	read := answer(h, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"memory://best_practices.md"}}`)
	for _, i := range []int{0, 99, 100, 149} {
		if !strings.Contains(read, fmt.Sprintf("practice %d\\n", i)) {
			t.Errorf("the memory file lacks entry %d: %.300s", i, read)
		}
	}

	forged := answer(h, `{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{"cursor":"bGlzdF9maWxlczpmMTAwLnR4dA"}}`)
	if !strings.Contains(forged, `"code":-32602`) || !strings.Contains(forged, "cursor") {
		t.Errorf("a made-up cursor: %s", forged)
	}
}
