package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// TestSDKLogsAtDebug: the SDK's records reach the configured logger at
// DEBUG only, so at INFO a request logs nothing through it.
func TestSDKLogsAtDebug(t *testing.T) {
	tests := []struct {
		level     slog.Level
		wantLines bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
			h := helloHandler(t, mcpserver.Config{Name: "toolshed", Version: "test", Log: log}, toolkit.Options{}, as("t", "r"))
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}`,
			} {
				if got := post(t, h, body); got != http.StatusOK {
					t.Fatalf("status %d for %s", got, body)
				}
			}
			lines := 0
			sc := bufio.NewScanner(&buf)
			for sc.Scan() {
				lines++
				var rec struct{ Level string }
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatal(err)
				}
				if rec.Level != "DEBUG" {
					t.Errorf("SDK record at %s: %s", rec.Level, sc.Text())
				}
			}
			if got := lines > 0; got != tt.wantLines {
				t.Errorf("at %s: %d SDK lines, want lines: %v", tt.level, lines, tt.wantLines)
			}
		})
	}
}

// helloHandler serves hello from the real contracts behind httpapi, as the
// gateway does: cfg names the server (and sets its logger where a test
// needs it), opts are the pipeline's options, and hc says who calls (and
// the body limit where a test needs one).
func helloHandler(t *testing.T, cfg mcpserver.Config, opts toolkit.Options, hc httpapi.Config) http.Handler {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tools = p
	hc.Invoker, hc.MCP = p, mcpserver.New(cfg)
	return httpapi.New(hc)
}

// as makes every request come from tenant with requestID.
func as(tenant, requestID string) httpapi.Config {
	return httpapi.Config{Auth: auth.Fixed{Tenant: tenant}, RequestID: func(*http.Request) string { return requestID }}
}

func post(t *testing.T, h http.Handler, body string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// observed records the pipeline's calls.
type observed []telemetry.Record

func (o *observed) Observe(_ context.Context, r telemetry.Record) { *o = append(*o, r) }

// TestOversizedArguments: a tools/call whose arguments are larger than the
// tool accepts (but within the body limit) goes through the SDK's handler
// to the pipeline, which refuses it (an isError result with
// SIZE_LIMIT_EXCEEDED, counted and observed), under the caller's id.
func TestOversizedArguments(t *testing.T) {
	var seen observed
	h := helloHandler(t, mcpserver.Config{Name: "t", Version: "1"}, toolkit.Options{Observer: &seen}, as("t1", "r1"))
	body := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"hello","arguments":{"name":"` + strings.Repeat("a", 3<<20) + `"}}}`
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp struct {
		ID     string
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s: %v", rec.Code, clipText(rec.Body.String()), err)
	}
	if resp.ID != "big" || !resp.Result.IsError || len(resp.Result.Content) != 1 ||
		!strings.Contains(resp.Result.Content[0].Text, `"code":"SIZE_LIMIT_EXCEEDED"`) {
		t.Errorf("response %s", clipText(rec.Body.String()))
	}
	if len(seen) != 1 || seen[0].Code != "SIZE_LIMIT_EXCEEDED" || seen[0].Tenant != "t1" || seen[0].RequestID != "r1" {
		t.Errorf("the pipeline observed %+v", seen)
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
