package lambdaentry_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestNamedRepositories is the deployed path of a tenant's named
// repository: scripts/snapshot push -repo web publishes it beside the
// tenant's default repository (snapshots/acme/web/), the indexer reacts to
// its pointer and indexes it under indexes/acme/web/, and behind the
// deployed edge (authorizer, tool functions, the gateway) the tools read it
// with repo while the default repository stays the one read without; a key
// limited to web sees web alone, as its default repository, and the
// tenant's default repository answers it as one that does not exist, on a
// tool's route and through the gateway.
func TestNamedRepositories(t *testing.T) {
	d := newDeployment(t)
	bucket, _ := d.S3(t)
	s3 := &repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "acme", "c1", repotest.WriteDir(t, map[string]string{"api.go": "package api\n\n// Serve starts zqxapi.\nfunc Serve() {}\n"}))

	// scripts/snapshot push -repo web, from a git checkout.
	web := repotest.WriteDir(t, map[string]string{"web.go": "package web\n\n// Render draws the zqxweb page.\nfunc Render() {}\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "web"}} {
		if out, err := exec.Command("git", append([]string{"-C", web}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	head, _ := exec.Command("git", "-C", web, "rev-parse", "HEAD").Output()
	commit := strings.TrimSpace(string(head))
	snapshot, err := deploytest.BuildSnapshotCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	push := d.SnapshotPush(t, snapshot, "-tenant", "acme", "-repo", "web", "-dir", web)
	if out, err := push.CombinedOutput(); err != nil || !strings.Contains(string(out), "pushed snapshots/acme/web/"+commit+".zip") {
		t.Fatalf("push -repo web: %v %s", err, out)
	}

	// The indexer indexes it on its pointer's S3 event.
	ix := d.Start(t, d.IndexerConfig(t))
	resp := invoke(t, ix, fmt.Appendf(nil, `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"snapshots/acme/web/current.json"}}}]}`))
	if resp.FunctionError != "" {
		t.Fatalf("indexer: %s\n%s", resp.Payload, ix.Output())
	}
	store := indexfile.NewStore(&indexfile.S3Blobs{Bucket: objects.New(d.Moto.S3(), bucket), Prefix: indexfile.BucketPrefix})
	if p, _, err := store.Pointer(context.Background(), "acme/web", ""); err != nil || p.Commit != commit {
		t.Fatalf("the index of acme/web: %+v, %v", p, err)
	}
	if _, _, err := store.Pointer(context.Background(), "acme", ""); err == nil {
		t.Error("indexing acme/web made an index of acme's default repository")
	}

	ctx := context.Background()
	all, _, err1 := auth.Create(ctx, d.Stores.APIKeys, "acme", "all", time.Now())
	webOnly, _, err2 := auth.Create(ctx, d.Stores.APIKeys, "acme", "web only", time.Now(), "web")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	searchCfg := d.ToolConfig(t, "context_search")
	searchCfg.Env[embedding.Kind.Name()] = embedding.KindNone
	tools := map[string]*lambdatest.Function{
		"grep_codebase":  d.Tool(t, "grep_codebase"),
		"list_repos":     d.Tool(t, "list_repos"),
		"context_search": d.Start(t, searchCfg),
	}
	functions := map[string]string{}
	routes := map[string]*lambdatest.Function{}
	for name, fn := range tools {
		functions[name] = fn.Name
		routes["POST /v1/tools/"+name] = fn
	}
	routes["POST /mcp"] = d.Start(t, d.GatewayConfig(t, functions))
	e := edge{authorizer: d.Start(t, d.AuthorizerConfig()), routes: routes}

	tests := []struct {
		key, tool, args string
		status          int
		want            []string // what the answer contains
		not             string   // what it must not
	}{
		{all, "grep_codebase", `{"pattern":"zqx\\w+"}`, 200, []string{`"file":"api.go"`}, "zqxweb"},
		{all, "grep_codebase", `{"pattern":"zqx\\w+","repo":"web"}`, 200, []string{`"file":"web.go"`}, "zqxapi"},
		{all, "grep_codebase", `{"pattern":"zqx\\w+","repo":"default"}`, 200, []string{`"file":"api.go"`}, "zqxweb"},
		{all, "list_repos", `{}`, 200, []string{`{"name":"default","default":true,"commit":"c1","files":1,"index":{"state":"none"`,
			`{"name":"web","default":false,"commit":"` + commit + `","files":1,"index":{"state":"ready","commit":"` + commit + `"`, `"total":2`}, ""},
		{all, "context_search", `{"query":"zqxweb page","repo":"web"}`, 200, []string{`"commit":"` + commit + `"`, "web.go"}, ""},
		{webOnly, "list_repos", `{}`, 200, []string{`"name":"web","default":true`, `"total":1`}, `"name":"default"`},
		{webOnly, "grep_codebase", `{"pattern":"zqx\\w+","repo":"web"}`, 200, []string{`"file":"web.go"`}, "zqxapi"},
		// Its default repository is web: "default" and no repo read it.
		{webOnly, "grep_codebase", `{"pattern":"zqx\\w+"}`, 200, []string{`"file":"web.go"`}, "zqxapi"},
		{webOnly, "context_search", `{"query":"zqxweb page","repo":"default"}`, 200, []string{"web.go"}, "api.go"},
		{webOnly, "grep_codebase", `{"pattern":"zqx\\w+","repo":"nope"}`, 404, []string{`"code":"RESOURCE_NOT_FOUND"`, `No repository \"nope\"`}, ""},
	}
	for _, tt := range tests {
		who := map[string]string{all: "all", webOnly: "web only"}[tt.key]
		status, out := e.request(t, "/v1/tools/"+tt.tool, "Bearer "+tt.key, `{"args":`+tt.args+`}`)
		if status != tt.status || tt.not != "" && strings.Contains(out, tt.not) {
			t.Errorf("%s: %s %s: %d %s", who, tt.tool, tt.args, status, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %s %s: want %s in %s", who, tt.tool, tt.args, w, out)
			}
		}
	}
	// Through the gateway, the limit travels with the invocation.
	status, out := e.request(t, "/mcp", "Bearer "+webOnly,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep_codebase","arguments":{"pattern":"zqx\\w+","repo":"api"}}}`)
	if status != 200 || !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "RESOURCE_NOT_FOUND") || strings.Contains(out, "zqxapi") {
		t.Errorf("gateway, web only, another repository: %d %s", status, out)
	}
	status, out = e.request(t, "/mcp", "Bearer "+webOnly,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep_codebase","arguments":{"pattern":"zqx\\w+"}}}`)
	if status != 200 || strings.Contains(out, `"isError":true`) || !strings.Contains(out, "zqxweb") {
		t.Errorf("gateway, web only, its default repository (web): %d %s", status, out)
	}
}
