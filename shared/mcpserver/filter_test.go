package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// TestToolFilter: a request whose context filters the tools (a client's
// selection, a token's scopes) lists only what it may see; calling a tool
// it may not see is "not found", calling one it may see but not use is
// the filter's error.
func TestToolFilter(t *testing.T) {
	h := helloHandler(t, mcpserver.Config{Name: "t", Version: "1"}, toolkit.Options{}, as("t1", "r1"))
	hidden := filtered(h, func(string) error { return toolerr.New(toolerr.ToolNotFound, "not selected") })
	refused := filtered(h, func(string) error { return toolerr.New(toolerr.AccessDenied, "needs the full scope") })
	tests := []struct {
		name string
		h    http.Handler
		body string
		want string
	}{
		{"list, all visible", h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `"name":"hello"`},
		{"list, hidden", hidden, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `"tools":[]`},
		{"call, hidden", hidden, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`, `"code":"TOOL_NOT_FOUND"`},
		{"call, refused", refused, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`, `needs the full scope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := answer(tt.h, tt.body)
			if !strings.Contains(got, tt.want) {
				t.Errorf("answer %s, want it to contain %s", got, tt.want)
			}
		})
	}
}

func filtered(h http.Handler, f caller.ToolFilter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(caller.WithToolFilter(r.Context(), f)))
	})
}

func answer(h http.Handler, body string) string {
	return serveMCP(h, body).Body.String()
}

// TestScopeRefusal: a tools/call that the request's credential may not
// make (the filter's ACCESS_DENIED carries a WWW-Authenticate challenge) is
// answered before the SDK with HTTP 403, the challenge and a JSON-RPC error
// echoing the id, so that an MCP client can ask for the scope; tools/list
// and calls the filter lets through are untouched.
func TestScopeRefusal(t *testing.T) {
	h := helloHandler(t, mcpserver.Config{Name: "t", Version: "1"}, toolkit.Options{}, as("t1", "r1"))
	const challenge = `Bearer error="insufficient_scope", scope="toolshed:full"`
	scoped := filtered(h, func(string) error {
		e := toolerr.New(toolerr.AccessDenied, "hello needs scope toolshed:full").With("requiredScope", "toolshed:full")
		e.Challenge = challenge
		return e
	})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`
	rec := serveMCP(scoped, call)
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"hello needs scope toolshed:full","data":{"code":"ACCESS_DENIED","requiredScope":"toolshed:full"}}}`
	if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != challenge || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("got %d %q %s\nwant 403 %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body, challenge, want)
	}
	if rec := serveMCP(scoped, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); rec.Code != http.StatusOK || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("tools/list: %d %v", rec.Code, rec.Header())
	}
	if rec := serveMCP(scoped, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "TOOL_NOT_FOUND") {
		t.Errorf("unknown tool: %d %s", rec.Code, rec.Body)
	}
}

// TestScopeRefusalReadsWhatTheSDKReads: the scope check before the SDK
// reads the tool's name exactly as the SDK does, so it never challenges a
// call the SDK would not make, nor lets pass one it would; params that the
// two readings could tell apart are refused as invalid.
func TestScopeRefusalReadsWhatTheSDKReads(t *testing.T) {
	h := helloHandler(t, mcpserver.Config{Name: "t", Version: "1"}, toolkit.Options{}, as("t1", "r1"))
	scoped := filtered(h, func(tool string) error {
		e := toolerr.New(toolerr.AccessDenied, "%s needs scope toolshed:full", tool)
		e.Challenge = `Bearer error="insufficient_scope", scope="toolshed:full"`
		return e
	})
	tests := []struct {
		name, params string
		status       int
		want         string
	}{
		{"the name", `{"name":"hello","arguments":{"name":"x"}}`, 403, `"code":"ACCESS_DENIED"`},
		{"the name escaped", `{"n\u0061me":"hello","arguments":{"name":"x"}}`, 403, `"code":"ACCESS_DENIED"`},
		{"another case only", `{"NAME":"hello","arguments":{"name":"x"}}`, 200, `params.name: the name of the tool to call is required`},
		{"both cases", `{"name":"nope","NAME":"hello","arguments":{"name":"x"}}`, 200,
			`"code":-32602,"message":"\"params\" has keys \"NAME\" and \"name\", which differ only in case`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveMCP(scoped, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":`+tt.params+`}`)
			challenged := rec.Header().Get("WWW-Authenticate") != ""
			if rec.Code != tt.status || challenged != (tt.status == 403) || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("got %d (challenge %v) %s; want %d with %s", rec.Code, challenged, rec.Body, tt.status, tt.want)
			}
		})
	}
}

func serveMCP(h http.Handler, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
