package localserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// hiddenNames are what a key limited to api must never see of the server's
// other repository, secretweb (the default one, in the folder
// secretwebdir): its name, its folder's and its contents'.
var hiddenNames = []string{"secretweb", "zqxweb"}

// limitedServer serves secretweb (the default repository) and api, with
// two keys of one tenant: all reads both, apiOnly is limited to api.
func limitedServer(t *testing.T) (base, all, apiOnly string) {
	t.Helper()
	apiDir := repotest.WriteDir(t, map[string]string{
		"README.md": "# API\n",
		"api.go":    "package api\n\n// Serve starts zqxapi.\nfunc Serve() {}\n",
	})
	webDir := filepath.Join(repotest.WriteDir(t, map[string]string{
		"secretwebdir/web.go": "package web\n\n// Serve draws zqxweb.\nfunc Serve() {}\n",
	}), "secretwebdir")
	dataDir := t.TempDir()
	db, err := boltstore.OpenIn(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	all, _, err1 := auth.Create(ctx, db.Stores().APIKeys, "acme", "all", time.Now())
	apiOnly, _, err2 := auth.Create(ctx, db.Stores().APIKeys, "acme", "api only", time.Now(), "api")
	db.Close()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cfg, err := config.FromEnv(func(k string) string { return map[string]string{"TOOLSHED_DATA_DIR": dataDir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Repos = []string{"secretweb=" + webDir, "api=" + apiDir}
	return serveConfig(t, cfg), all, apiOnly
}

// noLeak fails the test when body shows one of hiddenNames.
func noLeak(t *testing.T, what, body string) {
	t.Helper()
	for _, h := range hiddenNames {
		if strings.Contains(body, h) {
			t.Errorf("%s shows %q: %s", what, h, body)
		}
	}
}

// TestLimitedKeyLearnsNoOtherName: a key limited to api, on a server whose
// default repository is another one, meets api alone: without repo (or
// with "default") every repository tool reads api, on every route, and
// list_repos, the MCP resources, templates, prompts and completions and
// GET /healthz show no other repository, nor do errors.
func TestLimitedKeyLearnsNoOtherName(t *testing.T) {
	base, all, apiOnly := limitedServer(t)
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			for _, c := range []struct{ tool, args, want string }{
				{"read_file", `{"path":"api.go"}`, "zqxapi"},
				{"read_file", `{"path":"api.go","repo":"default"}`, "zqxapi"},
				{"read_file", `{"path":"web.go"}`, ""},
				{"read_file", `{"path":"web.go","repo":"nope"}`, ""},
				{"read_repo_file", `{"path":"README.md"}`, "# API"},
				{"grep_codebase", `{"pattern":"zqx\\w+"}`, "zqxapi"},
				{"list_files", `{}`, "api.go"},
				{"find_symbols", `{"name":"Serve"}`, "zqxapi"},
				{"find_references", `{"name":"Serve"}`, "api.go"},
				{"context_search", `{"query":"zqxapi Serve"}`, ""},
				{"list_repos", `{}`, `"name":"api","default":true`},
			} {
				a := r.call(t, base, apiOnly, c.tool, c.args)
				if !strings.Contains(a.body, c.want) {
					t.Errorf("%s %s: want %q in %s", c.tool, c.args, c.want, a.body)
				}
				noLeak(t, c.tool+" "+c.args, a.body)
			}
		})
	}
	t.Run("mcp features", func(t *testing.T) { mcpFeaturesShowNoOtherName(t, base, apiOnly) })
	t.Run("healthz", func(t *testing.T) { healthShowsOnlyTheKeysRepositories(t, base, all, apiOnly) })
}

// mcpFeaturesShowNoOtherName: resources, templates, prompts and
// completions of the key limited to api show api alone.
func mcpFeaturesShowNoOtherName(t *testing.T, base, apiOnly string) {
	complete := func(ref, arg, value, typed string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":` + ref + `,"argument":{"name":"` + arg +
			`","value":"` + value + `"},"context":{"arguments":` + typed + `}}}`
	}
	const template = `{"type":"ref/resource","uri":"repo://{repo}/{+path}"}`
	const explain = `{"type":"ref/prompt","name":"explain_file"}`
	for _, c := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, `"uri":"repo://default/api.go"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/api.go"}}`, "zqxapi"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://api/api.go"}}`, "zqxapi"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/web.go"}}`, `"error"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`, `repo://{repo}/{+path}`},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`, `"explain_file"`},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explain_file","arguments":{"path":"api.go"}}}`, "zqxapi"},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explore_area","arguments":{}}}`, "api.go"},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explain_file","arguments":{"path":"web.go"}}}`, `"error"`},
		{complete(template, "repo", "", `{}`), `"values":["default","api"]`},
		{complete(template, "path", "", `{}`), `"values":["README.md","api.go"]`},
		{complete(template, "path", "we", `{"repo":"default"}`), `"values":[]`},
		{complete(template, "path", "", `{"repo":"secretweb"}`), `"values":[]`},
		{complete(explain, "repo", "", `{}`), `"values":["default","api"]`},
		{complete(explain, "path", "a", `{}`), `"values":["api.go"]`},
	} {
		status, body := mcpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + apiOnly}, c.body)
		if status != 200 || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s; want %s", c.body, status, body, c.want)
		}
		noLeak(t, c.body, string(body))
	}
}

// healthShowsOnlyTheKeysRepositories: GET /healthz says "ok" alone to
// anyone, and the code indexes of the repositories a key may read to it.
func healthShowsOnlyTheKeysRepositories(t *testing.T, base, all, apiOnly string) {
	health := func(key string) (int, string, []string) {
		req, _ := http.NewRequest("GET", base+"/healthz", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			CodeIndexes []struct{ Repository string } `json:"codeIndexes"`
		}
		json.Unmarshal(raw, &out)
		var repos []string
		for _, ix := range out.CodeIndexes {
			repos = append(repos, ix.Repository)
		}
		return resp.StatusCode, strings.TrimSpace(string(raw)), repos
	}
	if status, body, _ := health(""); status != 200 || body != `{"status":"ok"}` {
		t.Errorf("GET /healthz without a key: %d %s", status, body)
	}
	if status, body, repos := health(apiOnly); status != 200 || strings.Join(repos, ",") != "api" {
		t.Errorf("GET /healthz with the key limited to api: %d %s", status, body)
	} else {
		noLeak(t, "GET /healthz", body)
	}
	if status, body, repos := health(all); status != 200 || len(repos) != 2 || !strings.Contains(body, `"repository":"secretweb"`) {
		t.Errorf("GET /healthz with the key to every repository: %d %s", status, body)
	}
	if status, body, _ := health("tsk_wrong"); status != 401 {
		t.Errorf("GET /healthz with a wrong key: %d %s", status, body)
	}
}
