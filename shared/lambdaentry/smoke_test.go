package lambdaentry_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
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
		t.Errorf("tools/list: %v, want every tool", report.Tools)
	}
	t.Run("tool selection", func(t *testing.T) { testSelectionDeployed(t, api.URL(), key) })
}

// httpAPI starts an HTTP API with the routes infra/main.go gives the
// stack: /mcp (POST, GET, DELETE) and /healthz to the gateway, POST
// /v1/tools/<name> and /mcp/tool/<name> for each tool and alias to that
// tool's function; every route but /healthz behind the authorizer. The
// gateway forwards tools/call to the same tool functions.
func httpAPI(t *testing.T, d *deployment) *lambdatest.HTTPAPI {
	t.Helper()
	authorizer := d.Start(t, d.AuthorizerConfig())
	functions := map[string]string{}
	var routes []lambdatest.Route
	for _, tool := range toolset.Tools() {
		fn := d.Tool(t, tool)
		functions[tool] = fn.Name
		c, _ := d.Contracts.Get(tool)
		for _, name := range append([]string{tool}, c.Aliases...) {
			for _, prefix := range []string{"/v1/tools/", "/mcp/tool/"} {
				routes = append(routes, lambdatest.Route{Method: "POST", Path: prefix + name, Function: fn, Authorizer: authorizer})
			}
		}
	}
	cfg := d.GatewayConfig(t, functions)
	cfg.Name = "toolshed-gateway-smoke"
	gateway := d.Start(t, cfg)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		routes = append(routes, lambdatest.Route{Method: method, Path: "/mcp", Function: gateway, Authorizer: authorizer})
	}
	routes = append(routes, lambdatest.Route{Method: "GET", Path: "/healthz", Function: gateway})
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
			req, _ := http.NewRequest("POST", base+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+key)
			if tt.header != "" {
				req.Header.Set(tt.header, tt.value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			got := string(body)
			if resp.StatusCode != tt.status || !strings.Contains(got, tt.want) || strings.Contains(got, tt.absent) {
				t.Errorf("%d %.300s; want %d with %s and without %s", resp.StatusCode, got, tt.status, tt.want, tt.absent)
			}
		})
	}
}
