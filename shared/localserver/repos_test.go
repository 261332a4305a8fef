package localserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestSeveralRepositories: a local server with two repositories (-repo
// api=DIR, and a bare path named after its folder) and two tenants' keys,
// one limited to one repository. Every repository tool reads the default
// repository without repo and the named one with it; the limited key sees
// only its repository (its default), and any other answers exactly as one
// that does not exist, on every route.
func TestSeveralRepositories(t *testing.T) {
	apiDir := repotest.WriteDir(t, map[string]string{
		"README.md": "# API\n",
		"api.go":    "package api\n\n// Serve starts zqxapi.\nfunc Serve() {}\n",
	})
	webDir := filepath.Join(repotest.WriteDir(t, map[string]string{
		"web/README.md": "# Web\n",
		"web/web.go":    "package web\n\n// Render draws zqxweb.\nfunc Render() {}\n",
	}), "web")
	dataDir := t.TempDir()
	db, err := boltstore.OpenIn(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice, _, err1 := auth.Create(ctx, db.Stores().APIKeys, "alice", "all", time.Now())
	bob, _, err2 := auth.Create(ctx, db.Stores().APIKeys, "bob", "web only", time.Now(), "web")
	db.Close()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_DATA_DIR": dataDir, "TOOLSHED_RATE_LIMITS": "grep_codebase=10000,list_repos=10000"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Repos = []string{"api=" + apiDir, webDir}
	base := serveConfig(t, cfg)
	v1 := routes[0].call

	// list_repos: every repository for alice (api her default), web alone
	// for bob (his default).
	repos := func(key, def string) []string {
		a := v1(t, base, key, "list_repos", `{}`)
		var out struct {
			Result struct {
				Repos []struct {
					Name    string `json:"name"`
					Default bool   `json:"default"`
					Files   int    `json:"files"`
				} `json:"repos"`
				Total int `json:"total"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(a.body), &out); err != nil || !a.ok {
			t.Fatalf("list_repos: %s", a.body)
		}
		var names []string
		for _, r := range out.Result.Repos {
			names = append(names, r.Name)
			if r.Default != (r.Name == def) || r.Files != 2 {
				t.Errorf("list_repos: %+v", r)
			}
		}
		if out.Result.Total != len(names) {
			t.Errorf("list_repos: total %d for %d repositories", out.Result.Total, len(names))
		}
		return names
	}
	if got := strings.Join(repos(alice, "api"), ","); got != "api,web" {
		t.Errorf("alice's repositories: %s", got)
	}
	if got := strings.Join(repos(bob, "web"), ","); got != "web" {
		t.Errorf("bob's repositories: %s", got)
	}

	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			// The default repository without repo, the named one with it.
			for _, c := range []struct{ key, tool, args, want string }{
				{alice, "grep_codebase", `{"pattern":"zqx\\w+"}`, "zqxapi"},
				{alice, "grep_codebase", `{"pattern":"zqx\\w+","repo":"web"}`, "zqxweb"},
				{alice, "grep_codebase", `{"pattern":"zqx\\w+","repo":"api"}`, "zqxapi"},
				{alice, "read_file", `{"path":"web.go","repo":"web"}`, "zqxweb"},
				{alice, "read_repo_file", `{"path":"README.md","repo":"web"}`, "# Web"},
				{alice, "list_files", `{"repo":"web"}`, "web.go"},
				{alice, "find_symbols", `{"name":"Render","repo":"web"}`, "func Render()"},
				{alice, "find_references", `{"name":"Serve"}`, "api.go"},
				{bob, "grep_codebase", `{"pattern":"zqx\\w+","repo":"web"}`, "zqxweb"},
				{bob, "list_files", `{"repo":"web"}`, "web.go"},
				{bob, "read_file", `{"path":"web.go"}`, "zqxweb"},
				{bob, "grep_codebase", `{"pattern":"zqx\\w+","repo":"default"}`, "zqxweb"},
			} {
				a := r.call(t, base, c.key, c.tool, c.args)
				if !a.ok || !strings.Contains(a.body, c.want) {
					t.Errorf("%s %s: want %q in %s", c.tool, c.args, c.want, a.body)
				}
				if other := map[string]string{"zqxapi": "zqxweb", "zqxweb": "zqxapi"}[c.want]; other != "" && strings.Contains(a.body, other) {
					t.Errorf("%s %s: the other repository answered: %s", c.tool, c.args, a.body)
				}
			}
			// Bob's key reads web alone: api and a repository that does not
			// exist answer alike.
			notFound := "RESOURCE_NOT_FOUND"
			if r.name == "mcp/tool" {
				notFound = "NOT_FOUND" // the task-API envelope's name
			}
			// The message, with the repository's name left out.
			message := func(body string) string {
				i, j := strings.Index(body, "No repository"), strings.Index(body, "can read")
				if i < 0 || j < i {
					return body
				}
				return strings.NewReplacer("nope", "X", "api", "X", "default", "X").Replace(body[i:j])
			}
			missing := r.call(t, base, bob, "grep_codebase", `{"pattern":"zqx","repo":"nope"}`)
			for _, c := range []struct{ tool, args string }{
				{"grep_codebase", `{"pattern":"zqx","repo":"api"}`},
				{"read_file", `{"path":"api.go","repo":"api"}`},
				{"list_files", `{"repo":"api"}`},
				{"find_symbols", `{"name":"Serve","repo":"api"}`},
				{"find_references", `{"name":"Serve","repo":"api"}`},
				{"read_repo_file", `{"path":"README.md","repo":"api"}`},
				{"context_search", `{"query":"zqxapi Serve","repo":"api"}`},
			} {
				a := r.call(t, base, bob, c.tool, c.args)
				if a.ok || a.code != notFound || strings.Contains(a.body, "zqxapi") {
					t.Errorf("bob's %s %s: %s", c.tool, c.args, a.body)
					continue
				}
				if message(a.body) != message(missing.body) {
					t.Errorf("bob's %s %s answers %q, a missing repository %q", c.tool, c.args, message(a.body), message(missing.body))
				}
			}
		})
	}

	// MCP resources: repo://<name>/<path> reads that repository through
	// read_file (repo://default/ the caller's default one); the repository
	// name completes from list_repos, and a path within the repository
	// named in the completion's context.
	t.Run("mcp resources", func(t *testing.T) {
		for _, c := range []struct{ key, body, want, not string }{
			{alice, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://web/web.go"}}`, "zqxweb", "zqxapi"},
			{alice, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"repo://default/api.go"}}`, "zqxapi", "zqxweb"},
			{alice, `{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"repo","value":"w"}}}`, `"web"`, `"api"`},
			{alice, `{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":"we"},"context":{"arguments":{"repo":"web"}}}}`, `"web.go"`, "api.go"},
			{bob, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"repo://api/api.go"}}`, "RESOURCE_NOT_FOUND", "zqxapi"},
			{bob, `{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"repo","value":""}}}`, `"web"`, `"api"`},
		} {
			status, body := mcpPost(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + c.key}, c.body)
			if status != 200 || !strings.Contains(string(body), c.want) || strings.Contains(string(body), c.not) {
				t.Errorf("%s: %d %s; want %s and no %s", c.body, status, body, c.want, c.not)
			}
		}
	})
}
