package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/servercard"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// TestServerCard: the card is answered to anyone (no credential, any
// origin, even past the local origin guard) at servercard.Path, as
// application/mcp-server-card+json, naming the endpoint at the public
// URL, or at the request's own origin without one.
func TestServerCard(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	card := func(mcpURL string) any { return map[string]string{"endpoint": mcpURL} }
	newHandler := func(publicURL string) http.Handler {
		return httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Fixed{Tenant: "t1"}, ServerCard: card, PublicURL: publicURL,
			Guard: &httpapi.OriginGuard{}})
	}
	tests := []struct {
		name, publicURL, method string
		header                  map[string]string
		status                  int
		endpoint                string
	}{
		{"public URL", "http://127.0.0.1:8000", http.MethodGet, nil, 200, "http://127.0.0.1:8000/mcp"},
		{"from the request", "", http.MethodGet, map[string]string{"X-Forwarded-Proto": "https"}, 200, "https://example.com/mcp"},
		{"any origin", "http://127.0.0.1:8000", http.MethodGet, map[string]string{"Origin": "https://elsewhere.example"}, 200, "http://127.0.0.1:8000/mcp"},
		{"preflight", "http://127.0.0.1:8000", http.MethodOptions, map[string]string{"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}, 204, ""},
		{"POST", "http://127.0.0.1:8000", http.MethodPost, nil, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://example.com"+servercard.Path, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			newHandler(tt.publicURL).ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Header().Get("Access-Control-Allow-Origin") != "*" && tt.status != 405 {
				t.Fatalf("got %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
			if tt.endpoint == "" {
				return
			}
			var got map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got["endpoint"] != tt.endpoint ||
				rec.Header().Get("Content-Type") != servercard.MediaType {
				t.Errorf("got %s %q (%v), want the endpoint %s as %s", rec.Body, rec.Header().Get("Content-Type"), err, tt.endpoint, servercard.MediaType)
			}
		})
	}
}
