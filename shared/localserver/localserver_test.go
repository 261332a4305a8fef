package localserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/localserver"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/smoke"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolset"
)

// startServer runs the real local server on a free loopback port and
// returns its base URL. It stops when the test ends.
func startServer(t testing.TB, env map[string]string) string {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["TOOLSHED_DATA_DIR"]; !ok {
		env["TOOLSHED_DATA_DIR"] = t.TempDir()
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return serveConfig(t, cfg)
}

// serveConfig starts the local server with cfg for the test and returns
// its base URL.
func serveConfig(t testing.TB, cfg config.Config) string {
	t.Helper()
	base, _ := serveStoppable(t, cfg)
	return base
}

// serveStoppable is serveConfig that also returns a function that stops
// the server (the test's end does, if it has not).
func serveStoppable(t testing.TB, cfg config.Config) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- localserver.Serve(ctx, ln, cfg, slog.New(slog.DiscardHandler), "test") }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server stopped with error: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	base := "http://" + ln.Addr().String()
	waitHealthy(t, base)
	return base, stop
}

func waitHealthy(t testing.TB, base string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server did not become healthy")
}

func connect(t *testing.T, base, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect with %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// served are the registered tools, in tools/list order (sorted by name).
var served = func() []string {
	names := toolset.Tools()
	slices.Sort(names)
	return names
}()

func TestMCPClient(t *testing.T) {
	base := startServer(t, nil)
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, base, version)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			ctx := context.Background()

			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				c, _ := set.Get(tool.Name)
				if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != c.Annotations.ReadOnlyHint {
					t.Errorf("%s: annotations %+v do not match the contract", tool.Name, tool.Annotations)
				}
				if tool.OutputSchema == nil || tool.InputSchema == nil {
					t.Errorf("%s: missing schemas", tool.Name)
				}
				in, _ := json.Marshal(tool.InputSchema)
				if !smoke.SameJSON(in, c.InputSchema) {
					t.Errorf("%s: listed inputSchema differs from the contract", tool.Name)
				}
			}
			if strings.Join(names, ",") != strings.Join(served, ",") {
				t.Errorf("tools/list = %v, want %v", names, served)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "World"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("hello failed: %+v", res.Content)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != `{"greeting":"Hello, World!"}` {
				t.Errorf("hello text = %s", got)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if string(sc) != `{"greeting":"Hello, World!"}` {
				t.Errorf("structuredContent = %s", sc)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "sys-audit", Arguments: map[string]any{"command": "list_software"}})
			if err != nil || res.IsError {
				t.Fatalf("sys-audit: %v %+v", err, res)
			}
			sys, _ := set.Get("sys-audit")
			if err := sys.ValidateOutput([]byte(res.Content[0].(*mcp.TextContent).Text)); err != nil {
				t.Error(err)
			}

			// Invalid arguments are tool errors, not protocol errors.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": strings.Repeat("x", 101)}})
			if err != nil {
				t.Fatal(err)
			}
			var te struct{ Error, Code string }
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &te)
			if !res.IsError || te.Code != "INVALID_INPUT" || !strings.HasPrefix(te.Error, "name:") {
				t.Errorf("101-char name: isError=%v %+v", res.IsError, te)
			}

			// web-fetch refuses the cloud metadata address as a tool error.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "web-fetch", Arguments: map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}})
			if err != nil {
				t.Fatal(err)
			}
			json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &te)
			if !res.IsError || te.Code != "ACCESS_DENIED" || !strings.HasPrefix(te.Error, "Disallowed address: 169.254.169.254") {
				t.Errorf("web-fetch of the metadata address: isError=%v %+v", res.IsError, te)
			}

			// A tool that is not built yet (or, once all are, one that
			// does not exist) is not listed and is not found.
			unbuilt := "no_such_tool"
			for _, name := range set.Names() {
				if !slices.Contains(served, name) {
					unbuilt = name
					break
				}
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: unbuilt, Arguments: map[string]any{}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(string(werr.Data), "TOOL_NOT_FOUND") {
				t.Errorf("unbuilt tool: got %v", err)
			}
		})
	}
}

// TestSeedCurlExamples sends the seeds' curl requests verbatim.
func TestSeedCurlExamples(t *testing.T) {
	base := startServer(t, nil)
	tests := []struct {
		path, body string
		status     int
		check      func(t *testing.T, body map[string]any)
	}{
		{"/v1/tools/adam-sys-audit", `{"args": {"command": "list_hardware"}}`, 200, func(t *testing.T, b map[string]any) {
			r, _ := b["result"].(map[string]any)
			if b["ok"] != true || b["tool"] != "sys-audit" || r["cpu"] == nil || r["os"] != "linux" {
				t.Errorf("got %v", b)
			}
		}},
		{"/v1/tools/sys-audit", `{"args": {"command": "list_software"}}`, 200, func(t *testing.T, b map[string]any) {
			if r, _ := b["result"].(map[string]any); b["ok"] != true || r["kernel"] == nil {
				t.Errorf("got %v", b)
			}
		}},
		{"/v1/tools/hello", `{"args": {"name": "World"}}`, 200, func(t *testing.T, b map[string]any) {
			want := map[string]any{"tool": "hello", "ok": true, "result": map[string]any{"greeting": "Hello, World!"}}
			if !mapsEqual(b, want) {
				t.Errorf("got %v, want %v", b, want)
			}
		}},
		{"/mcp/tool/hello", `{"name": "World"}`, 200, func(t *testing.T, b map[string]any) {
			if b["success"] != true || b["message"] == "" || b["data"].(map[string]any)["greeting"] != "Hello, World!" {
				t.Errorf("got %v", b)
			}
		}},
		{"/mcp/tool/add_task", `{"title": "Test task", "description": "Test description"}`, 200, func(t *testing.T, b map[string]any) {
			d, _ := b["data"].(map[string]any)
			if b["success"] != true || b["message"] != "Task created successfully" || d["id"] != float64(1) ||
				d["title"] != "Test task" || d["status"] != "pending" || d["completed_at"] != nil {
				t.Errorf("got %v", b)
			}
		}},
		{"/mcp/tool/update_task", `{"task_id": 99, "title": "x"}`, 404, func(t *testing.T, b map[string]any) {
			if b["success"] != false || b["code"] != "NOT_FOUND" {
				t.Errorf("got %v", b)
			}
		}},
		// Online the page; offline (no DNS) a network error, never anything else.
		{"/v1/tools/web-fetch", `{"args": {"url": "https://example.com"}}`, 0, func(t *testing.T, b map[string]any) {
			r, _ := b["result"].(map[string]any)
			online := b["ok"] == true && r["status"] == float64(200) && r["final_url"] == "https://example.com"
			offline := b["ok"] == false && b["code"] == "UPSTREAM_ERROR" && strings.HasPrefix(b["error"].(string), "Network error: ")
			if !online && !offline {
				t.Errorf("got %v", b)
			}
		}},
		{"/v1/tools/file-io", `{"args": {"command": "read_file", "path": "my-notes.txt"}}`, 404, func(t *testing.T, b map[string]any) {
			if b["ok"] != false || b["code"] != "RESOURCE_NOT_FOUND" || b["error"] != "File not found" {
				t.Errorf("got %v", b)
			}
		}},
		{"/v1/tools/file-io", `{"args": {"command": "write_file", "path": "new-file.txt", "content": "Hello from Adam!"}}`, 200, func(t *testing.T, b map[string]any) {
			want := map[string]any{"tool": "file-io", "ok": true, "result": map[string]any{"ok": true, "bytes_written": 16, "path": "new-file.txt"}}
			if !mapsEqual(b, want) {
				t.Errorf("got %v, want %v", b, want)
			}
		}},
		{"/v1/tools/file-io", `{"args": {"command": "read_file", "path": "new-file.txt"}}`, 200, func(t *testing.T, b map[string]any) {
			r, _ := b["result"].(map[string]any)
			if b["ok"] != true || r["contents"] != "Hello from Adam!" {
				t.Errorf("got %v", b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := http.Post(base+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if tt.status != 0 && resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %v", resp.StatusCode, tt.status, body)
			}
			tt.check(t, body)
		})
	}
}

func mapsEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestMCPTransportEdges(t *testing.T) {
	base := startServer(t, nil)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, base+"/mcp", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s /mcp: %d Allow=%q", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	// A browser page from another origin must not reach the server.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: status %d, want 403", resp.StatusCode)
	}
	// Malformed JSON-RPC gets a JSON-RPC parse error, not a 500.
	req, _ = http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Errorf("malformed JSON-RPC: %d %s", resp.StatusCode, b)
	}
}

func TestGracefulShutdown(t *testing.T) {
	cfg, _ := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_DATA_DIR": t.TempDir()}[k]
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- localserver.Serve(ctx, ln, cfg, slog.New(slog.DiscardHandler), "test") }()
	waitHealthy(t, "http://"+ln.Addr().String())
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v after shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not shut down")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

// TestAuthMode: which keys exist, TOOLSHED_AUTH and the listener decide
// whether keys are required; revoking or deleting the last key never locks
// the owner out on loopback, and nothing serves off loopback without keys.
func TestAuthMode(t *testing.T) {
	tests := []struct {
		name     string
		keys     string // "", "active", "revoked"
		auth     string
		loopback bool
		wantOn   bool
		wantErr  string
	}{
		{"no keys, loopback", "", "auto", true, false, ""},
		{"active key", "active", "auto", true, true, ""},
		{"only a revoked key", "revoked", "auto", true, false, ""},
		{"keys forced", "", "keys", true, true, ""},
		{"off with an active key", "active", "off", true, false, ""},
		{"no keys, off loopback", "", "auto", false, false, "API keys"},
		{"revoked only, off loopback", "revoked", "auto", false, false, "API keys"},
		{"off, off loopback", "active", "off", false, false, "only allowed on a loopback address"},
		{"active key, off loopback", "active", "auto", false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.keys != "" {
				db, err := boltstore.OpenIn(dir)
				if err != nil {
					t.Fatal(err)
				}
				_, rec, err := auth.Create(context.Background(), db.Stores().APIKeys, "acme", "k", time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if tt.keys == "revoked" {
					db.Stores().APIKeys.Revoke(context.Background(), rec.Hash, time.Now())
				}
				db.Close()
			}
			cfg, err := config.FromEnv(func(k string) string {
				return map[string]string{"TOOLSHED_DATA_DIR": dir, "TOOLSHED_AUTH": tt.auth}[k]
			})
			if err != nil {
				t.Fatal(err)
			}
			s, err := localserver.Build(context.Background(), cfg, slog.New(slog.DiscardHandler), "test", tt.loopback)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error about %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.AuthOn != tt.wantOn {
				t.Errorf("auth on = %v, want %v", s.AuthOn, tt.wantOn)
			}
		})
	}
}

// TestAuthWithKeys: once a key exists, every route needs it; missing,
// unknown and revoked keys get 401 with a clear message.
func TestAuthWithKeys(t *testing.T) {
	dir := t.TempDir()
	db, err := boltstore.OpenIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := db.Stores().APIKeys
	good, _, err := auth.Create(ctx, keys, "acme", "ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	revoked, rec, _ := auth.Create(ctx, keys, "acme", "old", time.Now())
	keys.Revoke(ctx, rec.Hash, time.Now())
	db.Close()

	base := startServer(t, map[string]string{"TOOLSHED_DATA_DIR": dir})
	tests := []struct {
		name, path, body, authz string
		status                  int
		msg                     string
	}{
		{"no key", "/v1/tools/hello", `{"args":{"name":"a"}}`, "", 401, "missing API key"},
		{"unknown key", "/v1/tools/hello", `{"args":{"name":"a"}}`, "Bearer tsk_unknown", 401, "unknown API key"},
		{"revoked key", "/mcp/tool/hello", `{"name":"a"}`, "Bearer " + revoked, 401, `API key "old" was revoked`},
		{"not bearer", "/v1/tools/hello", `{"args":{"name":"a"}}`, "Basic eDp5", 401, "malformed Authorization header"},
		{"mcp without key", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", 401, "missing API key"},
		{"good key", "/v1/tools/hello", `{"args":{"name":"a"}}`, "Bearer " + good, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", base+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.authz != "" {
				req.Header.Set("Authorization", tt.authz)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var raw map[string]any
			json.NewDecoder(resp.Body).Decode(&raw)
			var body struct{ Error, Code string }
			if rpc, ok := raw["error"].(map[string]any); ok { // /mcp answers JSON-RPC errors
				body.Error, _ = rpc["message"].(string)
				body.Code, _ = rpc["data"].(map[string]any)["code"].(string)
			} else {
				body.Error, _ = raw["error"].(string)
				body.Code, _ = raw["code"].(string)
			}
			if resp.StatusCode != tt.status || !strings.HasPrefix(body.Error, tt.msg) {
				t.Errorf("got %d %+v, want %d %q", resp.StatusCode, body, tt.status, tt.msg)
			}
			if tt.status == 401 && (body.Code != "UNAUTHORIZED" || resp.Header.Get("WWW-Authenticate") == "") {
				t.Errorf("401 without code or WWW-Authenticate: %+v", body)
			}
			if tt.status == 401 && !strings.HasSuffix(body.Error, auth.KeyHelp) {
				t.Errorf("401 that does not say how to get a key: %q", body.Error)
			}
		})
	}
}

// TestTenantIsolation: two keys of two tenants over real HTTP; neither can
// see or change the other's tasks or memory.
func TestTenantIsolation(t *testing.T) {
	dir := t.TempDir()
	db, err := boltstore.OpenIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keyA, _, _ := auth.Create(ctx, db.Stores().APIKeys, "tenant-a", "a", time.Now())
	keyB, _, _ := auth.Create(ctx, db.Stores().APIKeys, "tenant-b", "b", time.Now())
	db.Close()
	base := startServer(t, map[string]string{"TOOLSHED_DATA_DIR": dir})
	call := func(key, tool, args string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", base+"/v1/tools/"+tool, strings.NewReader(`{"args":`+args+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b map[string]any
		json.NewDecoder(resp.Body).Decode(&b)
		return resp.StatusCode, b
	}
	if st, b := call(keyA, "add_task", `{"title":"secret plan"}`); st != 200 {
		t.Fatalf("add_task: %d %v", st, b)
	}
	if st, b := call(keyA, "write_memory_entry", `{"file":"best_practices.md","content":"A only"}`); st != 200 {
		t.Fatalf("write_memory_entry: %d %v", st, b)
	}
	_, b := call(keyB, "list_tasks", `{}`)
	if tasks, _ := b["result"].(map[string]any)["tasks"].([]any); len(tasks) != 0 {
		t.Errorf("tenant B sees %v", tasks)
	}
	for _, tool := range []string{"update_task", "complete_task", "delete_task"} {
		args := `{"task_id":1}`
		if tool == "update_task" {
			args = `{"task_id":1,"title":"pwned"}`
		}
		if st, b := call(keyB, tool, args); st != 404 || b["code"] != "RESOURCE_NOT_FOUND" {
			t.Errorf("tenant B %s on A's task: %d %v", tool, st, b)
		}
	}
	_, b = call(keyB, "read_memory", `{"file":"best_practices.md"}`)
	if entries, _ := b["result"].(map[string]any)["entries"].([]any); len(entries) != 0 {
		t.Errorf("tenant B reads A's memory: %v", entries)
	}
	// B's own first task is id 1 too: counters are per tenant.
	if _, b := call(keyB, "add_task", `{"title":"b"}`); b["result"].(map[string]any)["id"] != float64(1) {
		t.Errorf("tenant B's first id: %v", b)
	}
	_, b = call(keyA, "list_tasks", `{}`)
	if tasks, _ := b["result"].(map[string]any)["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["title"] != "secret plan" {
		t.Errorf("tenant A's tasks changed: %v", tasks)
	}
}

// TestBrowserCORS: a browser page on the MCP Inspector's origin reaches
// the real server with keys configured: the preflight needs no key and
// answers 204 with the allowed methods and headers, a POST without a key
// is a 401 whose WWW-Authenticate the page may read, a POST with a key
// succeeds, and a foreign origin's preflight is refused without CORS.
func TestBrowserCORS(t *testing.T) {
	dir := t.TempDir()
	db, err := boltstore.OpenIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := auth.Create(context.Background(), db.Stores().APIKeys, "acme", "browser", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	base := startServer(t, map[string]string{"TOOLSHED_DATA_DIR": dir})

	const origin = "http://localhost:6274"
	send := func(method, origin, authz string, extra map[string]string) *http.Response {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		}
		req, _ := http.NewRequest(method, base+"/mcp", body)
		req.Header.Set("Origin", origin)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		for k, v := range extra {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		dump, _ := httputil.DumpResponse(resp, true)
		t.Logf("%s /mcp from %s:\n%s", method, origin, dump)
		return resp
	}
	expose := "WWW-Authenticate, Mcp-Session-Id, X-Request-Id, Retry-After"

	resp := send(http.MethodOptions, origin, "", map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version",
	})
	resp.Body.Close()
	for name, want := range map[string]string{
		"Access-Control-Allow-Origin":  origin,
		"Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
		"Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Accept",
		"Access-Control-Max-Age":       "7200",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("preflight %s: %q, want %q", name, got, want)
		}
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("preflight: status %d, want 204", resp.StatusCode)
	}

	resp = send(http.MethodPost, origin, "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" ||
		resp.Header.Get("Access-Control-Allow-Origin") != origin || resp.Header.Get("Access-Control-Expose-Headers") != expose {
		t.Errorf("POST without a key: %d %v, want 401 with WWW-Authenticate readable by %s", resp.StatusCode, resp.Header, origin)
	}

	resp = send(http.MethodPost, origin, "Bearer "+key, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != origin ||
		resp.Header.Get("Access-Control-Expose-Headers") != expose {
		t.Errorf("POST with a key: %d %v", resp.StatusCode, resp.Header)
	}

	resp = send(http.MethodOptions, "https://evil.example", "", map[string]string{"Access-Control-Request-Method": "POST"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign preflight: %d %v, want 403 without CORS", resp.StatusCode, resp.Header)
	}
}

// TestHealthReportsCodeIndexes: GET /healthz tells operators how far the
// code index of the served repository is, building then ready.
func TestHealthReportsCodeIndexes(t *testing.T) {
	dir := repotest.GoPackages(t, "container/list", "container/ring")
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": dir})
	type status struct {
		Status      string `json:"status"`
		CodeIndexes []struct {
			Repository, Key, State           string
			FilesIndexed, FilesTotal, Chunks int
		} `json:"codeIndexes"`
	}
	var st status
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || st.Status != "ok" || len(st.CodeIndexes) != 1 {
			t.Fatalf("healthz: %+v, %v", st, err)
		}
		if st.CodeIndexes[0].State == "ready" {
			break
		}
		if st.CodeIndexes[0].State != "building" || time.Now().After(deadline) {
			t.Fatalf("healthz: %+v", st)
		}
	}
	ix := st.CodeIndexes[0]
	if ix.Repository != filepath.Base(dir) || !strings.HasPrefix(ix.Key, "local-") || ix.FilesTotal == 0 ||
		ix.FilesIndexed != ix.FilesTotal || ix.Chunks == 0 {
		t.Errorf("ready index: %+v", ix)
	}
}

// TestStartUpLine: the line the server logs when it listens names its
// version, the repository and the data directory it serves, as absolute
// paths; and a server built without cgo (no gcc at `make run`) says at
// start that find_symbols reads Go only and what to install, where one
// built with cgo says nothing of it. (`CGO_ENABLED=0 go test -run
// TestStartUpLine` checks the first case.)
func TestStartUpLine(t *testing.T) {
	repoDir, dataDir := t.TempDir(), t.TempDir()
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_REPO_DIR": repoDir, "TOOLSHED_DATA_DIR": dataDir}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs strings.Builder
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- localserver.Serve(ctx, ln, cfg, log, "v1.2.3") }()
	defer func() { cancel(); <-done }()
	waitHealthy(t, "http://"+ln.Addr().String())

	lines := func() map[string]map[string]any {
		mu.Lock()
		defer mu.Unlock()
		byMsg := map[string]map[string]any{}
		for _, line := range strings.Split(logs.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil {
				byMsg[fmt.Sprint(l["msg"])] = l
			}
		}
		return byMsg
	}
	var byMsg map[string]map[string]any
	for deadline := time.Now().Add(5 * time.Second); byMsg["toolshed listening"] == nil; time.Sleep(10 * time.Millisecond) {
		if byMsg = lines(); time.Now().After(deadline) {
			t.Fatalf("no start-up line in %s", logs.String())
		}
	}
	want := map[string]any{"version": "v1.2.3", "repository": filepath.Base(repoDir) + "=" + repoDir, "data": dataDir}
	for k, v := range want {
		if l := byMsg["toolshed listening"]; l[k] != v {
			t.Errorf("%s: %v, want %v (line %v)", k, l[k], v, l)
		}
	}
	var goOnly map[string]any
	for msg, l := range byMsg {
		if strings.Contains(msg, "find_symbols") {
			goOnly = l
		}
	}
	switch missing := symbols.Missing(); {
	case len(missing) > 0 && goOnly == nil:
		t.Errorf("built without cgo, no line says find_symbols reads Go only: %s", logs.String())
	case len(missing) > 0 && (!strings.Contains(fmt.Sprint(goOnly["msg"]), "gcc") || goOnly["level"] != "WARN"):
		t.Errorf("the line about find_symbols does not warn to install gcc: %v", goOnly)
	case len(missing) == 0 && goOnly != nil:
		t.Errorf("built with cgo, a line says: %v", goOnly)
	}
}
