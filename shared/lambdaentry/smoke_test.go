package lambdaentry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/servercard"
	"github.com/toolshed/toolshed/shared/smoke"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolset"
)

// smokeTenant is the tenant of the smoke test's key.
const smokeTenant = "smoke"

// testSmoke runs the smoke test (scripts/smoke) against the deployment as
// a client reaches it: an HTTP API with the deployed routes in front of
// the real bootstraps (the authorizer, the gateway, a function per tool),
// the tenant's repository a snapshot of the example repository in S3.
func testSmoke(t *testing.T, d *deployment) {
	api := httpAPI(t, d)
	key, _, err := auth.Create(context.Background(), d.Stores.APIKeys, smokeTenant, "smoke", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s3 := repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, smokeTenant, "c1", "../toolset/testdata/example-repo")

	report, err := smoke.Run(context.Background(), smoke.Options{URL: api.URL(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.CheckSmoke(t, "the Lambda functions behind an HTTP API", report)
	if want := "toolshed " + testVersion; report.Server != want {
		t.Errorf("serverInfo %q, want %q (the build's version)", report.Server, want)
	}
	if len(report.Tools) != len(toolset.Tools()) {
		t.Errorf("tools/list: %v, want every deployed tool", report.Tools)
	}
	t.Run("tool selection", func(t *testing.T) { testSelectionDeployed(t, api.URL(), key) })
	t.Run("resources, prompts, completions", func(t *testing.T) { testFeaturesDeployed(t, api.URL(), key) })
}

// httpAPI starts an HTTP API with the routes infra/main.go gives the
// stack: /mcp (POST, GET, DELETE), /healthz and the server card to the
// gateway, POST
// /v1/tools/<name> and /mcp/tool/<name> for each tool and alias to that
// tool's function; every route but /healthz behind the authorizer. The
// gateway forwards tools/call to the same tool functions. As deployed, the
// tools' routes and /mcp have authorizers of their own (one function),
// each caching its answers for auth.AuthorizerCacheTTL.
func httpAPI(t *testing.T, d *deployment) *lambdatest.HTTPAPI {
	t.Helper()
	authorizerFn := d.Start(t, d.AuthorizerConfig())
	toolAuthorizer := &lambdatest.Authorizer{Function: authorizerFn, CacheTTL: auth.AuthorizerCacheTTL}
	mcpAuthorizer := &lambdatest.Authorizer{Function: authorizerFn, CacheTTL: auth.AuthorizerCacheTTL}
	functions := map[string]string{}
	var routes []lambdatest.Route
	for _, tool := range toolset.Tools() {
		fn := d.Tool(t, tool)
		functions[tool] = fn.Name
		c, _ := d.Contracts.Get(tool)
		for _, name := range append([]string{tool}, c.Aliases...) {
			for _, prefix := range []string{"/v1/tools/", "/mcp/tool/"} {
				routes = append(routes, lambdatest.Route{Method: "POST", Path: prefix + name, Function: fn, Authorizer: toolAuthorizer})
			}
		}
	}
	cfg := d.GatewayConfig(t, functions)
	cfg.Name = "toolshed-gateway-smoke"
	gateway := d.Start(t, cfg)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		routes = append(routes, lambdatest.Route{Method: method, Path: "/mcp", Function: gateway, Authorizer: mcpAuthorizer})
	}
	routes = append(routes, lambdatest.Route{Method: "GET", Path: "/healthz", Function: gateway},
		lambdatest.Route{Method: "GET", Path: servercard.Path, Function: gateway})
	api, err := lambdatest.NewHTTPAPI(routes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	return api
}

// testSelectionDeployed: the deployed gateway and tool functions honour a
// client's tool selection as the local server does.
func testSelectionDeployed(t *testing.T, base, key string) {
	tests := []struct {
		name, path, header, value, body string
		status                          int
		want, absent                    string
	}{
		{"subset", "/mcp", "X-MCP-Tools", "grep_codebase,read_file", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			200, `"name":"read_file"`, `"name":"hello"`},
		{"query", "/mcp?tools=hello", "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			200, `"name":"hello"`, `"name":"read_file"`},
		{"read-only", "/mcp", "X-MCP-Readonly", "true", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			200, `"name":"grep_codebase"`, `"name":"add_task"`},
		{"read-only, a writer over tools/call", "/mcp", "X-MCP-Readonly", "true",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"x"}}}`,
			200, `"TOOL_NOT_FOUND"`, `"structuredContent"`},
		{"read-only, a writer over /v1", "/v1/tools/add_task", "X-MCP-Readonly", "true", `{"args":{"title":"x"}}`,
			404, `"TOOL_NOT_FOUND"`, `"ok":true`},
		{"unknown name", "/v1/tools/hello", "X-MCP-Tools", "nope", `{"args":{"name":"x"}}`,
			400, `no tool is named \"nope\"`, `"ok":true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := postDeployed(t, base+tt.path, key, tt.header, tt.value, tt.body)
			if status != tt.status || !strings.Contains(got, tt.want) || strings.Contains(got, tt.absent) {
				t.Errorf("%d %.300s; want %d with %s and without %s", status, got, tt.status, tt.want, tt.absent)
			}
		})
	}
}

// testFeaturesDeployed: the deployed gateway serves resources, prompts and
// completions by invoking the tool functions (read_file, list_files) with
// the caller's tenant and selection: the tenant's snapshot is read, a
// denied file answers read_file's refusal, a client that did not select
// read_file reads no file; and the server card is public.
func testFeaturesDeployed(t *testing.T, base, key string) {
	tests := []struct {
		name, header, value, body string
		want, absent              string
	}{
		{"read a file resource", "", "", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/src/index.ts"}}`,
			`"text":"import { AuthService }`, `"error"`},
		{"a denied file", "", "", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/.env"}}`,
			`"code":"PATH_NOT_ALLOWED"`, `"result"`},
		{"read_file not selected", "X-MCP-Tools", "hello", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/src/index.ts"}}`,
			`"code":"TOOL_NOT_FOUND"`, `"result"`},
		{"list resources", "", "", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
			`"uri":"repo://default/README.md"`, `"error"`},
		{"complete a path", "", "", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":"src/server/"}}}`,
			`"src/server/auth/"`, `"error"`},
		{"get a prompt", "", "", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explain_file","arguments":{"path":"src/index.ts"}}}`,
			`"uri":"repo://default/src/index.ts"`, `"error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := postDeployed(t, base+"/mcp", key, tt.header, tt.value, tt.body)
			if status != 200 || !strings.Contains(got, tt.want) || strings.Contains(got, tt.absent) {
				t.Errorf("%d %.300s; want 200 with %s and without %s", status, got, tt.want, tt.absent)
			}
		})
	}
	t.Run("server card", func(t *testing.T) {
		resp, err := http.Get(base + servercard.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != servercard.MediaType || !strings.Contains(string(body), `"url":"`+base+`/mcp"`) {
			t.Errorf("%d %s %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
}

// postDeployed POSTs body to url with the key (and a header, when name is
// set) and returns the status and the answer.
func postDeployed(t *testing.T, url, key, name, value, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	if name != "" {
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(got)
}
