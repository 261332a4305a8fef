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
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Body.String()
}
