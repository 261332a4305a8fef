package localserver_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/localserver"
)

// mcpCall is a tools/call of hello.
const mcpCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}`

// BenchmarkHandlerMCPCall measures one tools/call hello through the whole
// local handler (guard, auth, rate limit, validation, logging, MCP) without
// the network, so allocations per call are exact.
func BenchmarkHandlerMCPCall(b *testing.B) {
	benchHandler(b, "/mcp", mcpCall)
}

// maxCallGarbage bounds the bytes one tools/call allocates (about 32 KB).
const maxCallGarbage = 100 << 10

// TestMCPCallGarbage: a tools/call leaves little garbage, the MCP SDK's
// decoding of it included (320 KB with the released segmentio/encoding,
// see shared/third_party), because the memory a load adds to the server is in
// proportion to it (shared/gcsettings).
func TestMCPCallGarbage(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) { benchHandler(b, "/mcp", mcpCall) })
	if got := res.AllocedBytesPerOp(); got > maxCallGarbage {
		t.Errorf("a tools/call allocates %d bytes, want at most %d", got, maxCallGarbage)
	}
}

// BenchmarkHandlerV1Call is the same call on POST /v1/tools/hello.
func BenchmarkHandlerV1Call(b *testing.B) {
	benchHandler(b, "/v1/tools/hello", `{"args":{"name":"World"}}`)
}

func benchHandler(b *testing.B, path, body string) {
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_DATA_DIR": b.TempDir(), "TOOLSHED_REPO_DIR": b.TempDir(), // nothing to index
			"TOOLSHED_RATE_LIMITS": "hello=1000000000"}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	s, err := localserver.Build(context.Background(), cfg, slog.New(slog.DiscardHandler), "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Host = "127.0.0.1:8000"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		s.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
