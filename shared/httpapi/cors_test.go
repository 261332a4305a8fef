package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// The CORS headers as a browser reads them, spelled out here so that the
// test pins what goes on the wire.
const (
	inspector     = "http://localhost:6274" // the MCP Inspector's page
	extraOrigin   = "https://inspector.example"
	allowMethods  = "GET, POST, DELETE, OPTIONS"
	allowHeaders  = "Authorization, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Accept"
	exposeHeaders = "WWW-Authenticate, Mcp-Session-Id, X-Request-Id, Retry-After"
)

// TestCORS: behind the guard, preflights from allowed origins answer 204 on
// any path without a key, every answer to an allowed origin (401, 404 and
// 405 included) carries Access-Control-Allow-Origin and the exposed
// headers, foreign origins get 403 in the route's envelope and no CORS,
// and requests without an Origin are untouched.
func TestCORS(t *testing.T) {
	set, _ := schema.Load(contracts.FS)
	p, _ := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: keyAuth{}, MCP: mcpOK,
		Guard: &httpapi.OriginGuard{Origins: []string{extraOrigin}}})

	bodies := map[string]string{"/v1/tools/hello": `{"args":{"name":"x"}}`, "/mcp/tool/hello": `{"name":"x"}`,
		"/mcp": `{"jsonrpc":"2.0","id":1,"method":"ping"}`}
	tests := []struct {
		name, method, path, origin string
		preflight                  bool // send Access-Control-Request-Method (and -Headers)
		key                        bool // send the good key
		status                     int
		cors                       bool   // CORS headers for origin expected
		code                       string // vocabulary code of a failure
	}{
		{"preflight /mcp", "OPTIONS", "/mcp", inspector, true, false, 204, true, ""},
		{"preflight /v1", "OPTIONS", "/v1/tools/hello", inspector, true, false, 204, true, ""},
		{"preflight /mcp/tool", "OPTIONS", "/mcp/tool/hello", inspector, true, false, 204, true, ""},
		{"preflight /healthz", "OPTIONS", "/healthz", inspector, true, false, 204, true, ""},
		{"preflight unknown path", "OPTIONS", "/nowhere", inspector, true, false, 204, true, ""},
		{"preflight configured origin", "OPTIONS", "/mcp", extraOrigin, true, false, 204, true, ""},
		{"preflight loopback IP origin", "OPTIONS", "/mcp", "http://127.0.0.1:6274", true, false, 204, true, ""},

		{"POST /mcp", "POST", "/mcp", inspector, false, true, 200, true, ""},
		{"POST /v1", "POST", "/v1/tools/hello", inspector, false, true, 200, true, ""},
		{"POST /mcp/tool", "POST", "/mcp/tool/hello", inspector, false, true, 200, true, ""},
		{"POST configured origin", "POST", "/v1/tools/hello", extraOrigin, false, true, 200, true, ""},
		{"GET /healthz", "GET", "/healthz", inspector, false, false, 200, true, ""},
		{"401 on /mcp", "POST", "/mcp", inspector, false, false, 401, true, "UNAUTHORIZED"},
		{"401 on /v1", "POST", "/v1/tools/hello", inspector, false, false, 401, true, "UNAUTHORIZED"},
		{"404", "POST", "/nowhere", inspector, false, true, 404, true, "RESOURCE_NOT_FOUND"},
		{"405 GET /mcp", "GET", "/mcp", inspector, false, true, 405, true, "INVALID_INPUT"},
		{"405 DELETE /mcp", "DELETE", "/mcp", inspector, false, true, 405, true, "INVALID_INPUT"},
		{"OPTIONS without request method", "OPTIONS", "/mcp", inspector, false, false, 405, true, "INVALID_INPUT"},

		{"foreign preflight /mcp", "OPTIONS", "/mcp", "https://evil.example", true, false, 403, false, "ACCESS_DENIED"},
		{"foreign preflight /v1", "OPTIONS", "/v1/tools/hello", "https://evil.example", true, false, 403, false, "ACCESS_DENIED"},
		{"foreign preflight /mcp/tool", "OPTIONS", "/mcp/tool/hello", "https://evil.example", true, false, 403, false, "ACCESS_DENIED"},
		{"foreign preflight elsewhere", "OPTIONS", "/nowhere", "https://evil.example", true, false, 403, false, "ACCESS_DENIED"},
		{"foreign POST", "POST", "/v1/tools/hello", "https://evil.example", false, true, 403, false, "ACCESS_DENIED"},
		{"null origin", "OPTIONS", "/mcp", "null", true, false, 403, false, "ACCESS_DENIED"},

		{"no Origin POST", "POST", "/v1/tools/hello", "", false, true, 200, false, ""},
		{"no Origin 401", "POST", "/mcp", "", false, false, 401, false, "UNAUTHORIZED"},
		{"no Origin OPTIONS", "OPTIONS", "/mcp", "", false, false, 405, false, "INVALID_INPUT"},
		{"no Origin, request method", "OPTIONS", "/v1/tools/hello", "", true, false, 405, false, "INVALID_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body string
			if tt.method == "POST" {
				body = bodies[tt.path]
			}
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(body))
			req.Host = "127.0.0.1:8000"
			if tt.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.preflight {
				req.Header.Set("Access-Control-Request-Method", "POST")
				// One header beyond the list: it must not be echoed.
				req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,mcp-protocol-version,x-evil")
			}
			if tt.key {
				req.Header.Set("Authorization", "Bearer good")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header()
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if got.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}

			want := map[string]string{}
			if tt.cors {
				want["Access-Control-Allow-Origin"] = tt.origin
				want["Access-Control-Expose-Headers"] = exposeHeaders
			}
			if tt.status == 204 {
				want["Access-Control-Allow-Methods"] = allowMethods
				want["Access-Control-Allow-Headers"] = allowHeaders
				want["Access-Control-Max-Age"] = "7200"
			}
			for _, name := range []string{"Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
				"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age", "Access-Control-Allow-Credentials"} {
				if g := strings.Join(got.Values(name), "|"); g != want[name] {
					t.Errorf("%s: %q, want %q", name, g, want[name])
				}
			}
			if hasOrigin := slices.Contains(got.Values("Vary"), "Origin"); hasOrigin != tt.cors {
				t.Errorf("Vary %q, want Origin: %v", got.Values("Vary"), tt.cors)
			}
			if tt.status == 401 && got.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tt.status == 405 && got.Get("Allow") == "" {
				t.Error("405 without Allow")
			}

			switch {
			case tt.status == 204:
				if rec.Body.Len() != 0 {
					t.Errorf("preflight answered a body: %q", rec.Body)
				}
			case tt.code != "":
				if c := failureCode(t, rec.Body.Bytes()); c != tt.code {
					t.Errorf("failure code %q, want %q: %s", c, tt.code, rec.Body)
				}
			}
		})
	}
}

// failureCode reads the vocabulary code from any route's failure envelope
// (data.code of a JSON-RPC error, code otherwise; ACCESS_DENIED,
// UNAUTHORIZED and NOT_FOUND read the same in the task API's names, and
// INVALID_INPUT is VALIDATION_ERROR there).
func failureCode(t *testing.T, body []byte) string {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("failure is not a JSON object: %q", body)
	}
	if rpc, ok := b["error"].(map[string]any); ok {
		code, _ := rpc["data"].(map[string]any)["code"].(string)
		return code
	}
	code, _ := b["code"].(string)
	if b["success"] == false && code == "VALIDATION_ERROR" {
		return "INVALID_INPUT"
	}
	return code
}

// TestNoCORSWithoutGuard: a deployed function (no guard) adds no CORS
// headers; API Gateway answers preflights and adds them itself.
func TestNoCORSWithoutGuard(t *testing.T) {
	h := newHandler(t, nil)
	for _, method := range []string{"OPTIONS", "POST"} {
		req := httptest.NewRequest(method, "/v1/tools/hello", strings.NewReader(`{"args":{"name":"x"}}`))
		req.Header.Set("Origin", inspector)
		req.Header.Set("Access-Control-Request-Method", "POST")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == 204 || rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: %d %v, want the route's answer without CORS", method, rec.Code, rec.Header())
		}
	}
}
