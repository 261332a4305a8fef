package localserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
)

// mcpPost sends one JSON-RPC message to path with extra headers and
// returns the status and the body.
func mcpPost(t *testing.T, url string, headers map[string]string, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// readOnlyTools are the served tools whose contracts say readOnlyHint.
func readOnlyTools(t *testing.T) []string {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range served {
		if c, _ := set.Get(name); c.Annotations.ReadOnlyHint {
			out = append(out, name)
		}
	}
	return out
}

// TestToolSelection: a client narrows the tools with X-MCP-Tools or
// ?tools= (names or aliases), and to the read-only ones with
// X-MCP-Readonly: true or /mcp/readonly; tools/list shows only those, and
// any other tool is not found on every route. A selection naming no
// known tool is refused, naming the tools there are.
func TestToolSelection(t *testing.T) {
	base := startServer(t, nil)
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	readOnly := readOnlyTools(t)
	tests := []struct {
		name    string
		path    string
		headers map[string]string
		want    []string
	}{
		{"full", "/mcp", nil, served},
		{"header", "/mcp", map[string]string{"X-MCP-Tools": "grep_codebase, read_file"}, []string{"grep_codebase", "read_file"}},
		{"query", "/mcp?tools=grep_codebase,read_file", nil, []string{"grep_codebase", "read_file"}},
		{"alias", "/mcp", map[string]string{"X-MCP-Tools": "adam-sys-audit"}, []string{"sys-audit"}},
		{"read-only header", "/mcp", map[string]string{"X-MCP-Readonly": "true"}, readOnly},
		{"read-only path", "/mcp/readonly", nil, readOnly},
		{"read-only header false", "/mcp", map[string]string{"X-MCP-Readonly": "false"}, served},
		{"read-only and a subset", "/mcp/readonly", map[string]string{"X-MCP-Tools": "grep_codebase,add_task"}, []string{"grep_codebase"}},
		{"header and query", "/mcp?tools=hello,read_file", map[string]string{"X-MCP-Tools": "read_file,grep_codebase"}, []string{"read_file"}},
	}
	sizes := map[string]int{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := mcpPost(t, base+tt.path, tt.headers, list)
			var resp struct {
				Result struct{ Tools []struct{ Name string } }
			}
			if err := json.Unmarshal(body, &resp); err != nil || status != 200 {
				t.Fatalf("%d %s", status, clip(body))
			}
			var names []string
			for _, tool := range resp.Result.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools/list %v, want %v", names, tt.want)
			}
			sizes[tt.name] = len(body)
		})
	}
	t.Logf("tools/list bytes: full %d, grep_codebase+read_file %d, read-only %d (%d tools)",
		sizes["full"], sizes["header"], sizes["read-only path"], len(readOnly))

	calls := []struct {
		name, path string
		headers    map[string]string
		body       string
		status     int
		want       string
	}{
		{"call outside the selection", "/mcp", map[string]string{"X-MCP-Tools": "read_file"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`, 200, `"code":-32602`},
		{"call a writer, read-only", "/mcp/readonly", nil,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"x"}}}`, 200, `"code":"TOOL_NOT_FOUND"`},
		{"call within the selection", "/mcp", map[string]string{"X-MCP-Tools": "hello"},
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`, 200, `"greeting":"Hello, x!"`},
		{"v1, outside the selection", "/v1/tools/add_task", map[string]string{"X-MCP-Readonly": "true"},
			`{"args":{"title":"x"}}`, 404, `"code":"TOOL_NOT_FOUND"`},
		{"task API, within the selection", "/mcp/tool/hello", map[string]string{"X-MCP-Tools": "hello"},
			`{"name":"x"}`, 200, `"success":true`},
		{"unknown name", "/mcp", map[string]string{"X-MCP-Tools": "grep_codebase,rm_rf"}, list, 400, `no tool is named \"rm_rf\"; the tools are`},
		{"unknown name, v1", "/v1/tools/hello?tools=nope", nil, `{"args":{"name":"x"}}`, 400, `?tools: no tool is named \"nope\"`},
		{"empty selection", "/mcp?tools=", nil, list, 400, `?tools: names no tool`},
		{"read-only neither true nor false", "/mcp", map[string]string{"X-MCP-Readonly": "maybe"}, list, 400, `X-MCP-Readonly: must be true or false`},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			status, body := mcpPost(t, base+tt.path, tt.headers, tt.body)
			if status != tt.status || !strings.Contains(string(body), tt.want) {
				t.Errorf("%d %s, want %d with %s", status, clip(body), tt.status, tt.want)
			}
		})
	}
}

// TestAliasesOnEveryRoute: a tool's alias calls it on every route, MCP's
// tools/call included.
func TestAliasesOnEveryRoute(t *testing.T) {
	base := startServer(t, nil)
	tests := []struct{ path, body, want string }{
		{"/v1/tools/adam-sys-audit", `{"args":{"command":"list_hardware"}}`, `"ok":true`},
		{"/mcp/tool/adam-sys-audit", `{"command":"list_hardware"}`, `"success":true`},
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"adam-sys-audit","arguments":{"command":"list_hardware"}}}`,
			`"structuredContent":{"cpu"`},
	}
	for _, tt := range tests {
		status, body := mcpPost(t, base+tt.path, nil, tt.body)
		if status != 200 || !strings.Contains(string(body), tt.want) || strings.Contains(string(body), `"isError":true`) {
			t.Errorf("%s: %d %s, want %s", tt.path, status, clip(body), tt.want)
		}
	}
}
