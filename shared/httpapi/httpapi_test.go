package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

type denyAll struct{}

func (denyAll) Allow(context.Context, string, string, int) (toolkit.Decision, error) {
	return toolkit.Decision{RetryAfter: 1500 * time.Millisecond}, nil
}

func newHandler(t testing.TB, limiter toolkit.Limiter) http.Handler {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{Limiter: limiter})
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Fixed{Tenant: "t1"}, MaxBody: 64 << 10})
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

func do(t *testing.T, h http.Handler, method, path, contentType, body string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var b map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("%s %s: response is not a JSON object: %q", method, path, rec.Body.String())
	}
	return response{rec.Code, rec.Header(), b}
}

func TestV1Envelope(t *testing.T) {
	h := newHandler(t, nil)
	r := do(t, h, "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "World"}}`)
	if r.status != 200 || r.body["ok"] != true || r.body["tool"] != "hello" ||
		r.body["result"].(map[string]any)["greeting"] != "Hello, World!" {
		t.Errorf("got %d %v", r.status, r.body)
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
}

func TestLegacyEnvelope(t *testing.T) {
	h := newHandler(t, nil)
	r := do(t, h, "POST", "/mcp/tool/hello", "application/json", `{"name": "World"}`)
	if r.status != 200 || r.body["success"] != true || r.body["message"] != "Greeting created" {
		t.Errorf("got %d %v", r.status, r.body)
	}
	r = do(t, h, "POST", "/mcp/tool/hello", "application/json", `{"name": ""}`)
	if r.status != 400 || r.body["success"] != false || r.body["code"] != "VALIDATION_ERROR" {
		t.Errorf("got %d %v", r.status, r.body)
	}
}

// TestBadInput: every bad request is INVALID_INPUT (or the right code) with
// a message that names the field, and never a 500.
func TestBadInput(t *testing.T) {
	h := newHandler(t, nil)
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
		code, msgPrefix                 string
	}{
		{"missing name", "POST", "/v1/tools/hello", "application/json", `{"args": {}}`, 400, "INVALID_INPUT", "name: is required"},
		{"no args at all", "POST", "/v1/tools/hello", "application/json", ``, 400, "INVALID_INPUT", "name: is required"},
		{"null args", "POST", "/v1/tools/hello", "application/json", `{"args": null}`, 400, "INVALID_INPUT", "name: is required"},
		{"101 chars", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "` + strings.Repeat("a", 101) + `"}}`, 400, "INVALID_INPUT", "name: must be at most 100"},
		{"wrong type", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": 5}}`, 400, "INVALID_INPUT", "name: must be of type string"},
		{"args not object", "POST", "/v1/tools/hello", "application/json", `{"args": [1,2]}`, 400, "INVALID_INPUT", "arguments must be a JSON object"},
		{"unknown field", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "a", "nam": "b"}}`, 400, "INVALID_INPUT", "nam: is not an accepted field"},
		{"args outside envelope", "POST", "/v1/tools/hello", "application/json", `{"name": "World"}`, 400, "INVALID_INPUT", "name: is not an accepted field; send tool arguments"},
		{"malformed JSON", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "x"`, 400, "INVALID_INPUT", "request body: malformed JSON"},
		{"malformed legacy", "POST", "/mcp/tool/hello", "application/json", `{"name":`, 400, "VALIDATION_ERROR", "request body: malformed JSON"},
		{"body is an array", "POST", "/v1/tools/hello", "application/json", `[]`, 400, "INVALID_INPUT", "request body: must be a JSON object"},
		{"huge body", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "` + strings.Repeat("a", 70<<10) + `"}}`, 400, "INVALID_INPUT", "request body: larger than"},
		{"wrong content type", "POST", "/v1/tools/hello", "text/plain", `{"args": {"name": "x"}}`, 400, "INVALID_INPUT", "Content-Type: must be application/json"},
		{"form content type", "POST", "/v1/tools/hello", "application/x-www-form-urlencoded", `name=x`, 400, "INVALID_INPUT", "Content-Type"},
		{"unknown tool", "POST", "/v1/tools/nope", "application/json", `{"args": {}}`, 404, "TOOL_NOT_FOUND", `no tool named "nope"`},
		{"unknown tool legacy", "POST", "/mcp/tool/nope", "application/json", `{}`, 404, "NOT_FOUND", `no tool named "nope"`},
		{"GET a tool", "GET", "/v1/tools/hello", "", ``, 405, "INVALID_INPUT", "method GET is not allowed"},
		{"unknown route", "POST", "/v2/tools/hello", "application/json", `{}`, 404, "RESOURCE_NOT_FOUND", "no route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, tt.method, tt.path, tt.ctype, tt.body)
			if r.status != tt.status || r.body["code"] != tt.code {
				t.Fatalf("got %d %v, want %d %s", r.status, r.body, tt.status, tt.code)
			}
			if msg, _ := r.body["error"].(string); !strings.HasPrefix(msg, tt.msgPrefix) {
				t.Errorf("error %q, want prefix %q", msg, tt.msgPrefix)
			}
		})
	}
}

func TestRateLimitedHasRetryAfter(t *testing.T) {
	h := newHandler(t, denyAll{})
	r := do(t, h, "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "x"}}`)
	if r.status != 429 || r.body["code"] != "RATE_LIMITED" || r.body["retryAfter"] != float64(2) {
		t.Errorf("got %d %v", r.status, r.body)
	}
	if r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	r = do(t, h, "POST", "/mcp/tool/hello", "application/json", `{"name": "x"}`)
	if r.status != 429 || r.body["code"] != "RATE_LIMITED" || r.body["retryAfter"] != float64(2) {
		t.Errorf("legacy: got %d %v", r.status, r.body)
	}
}

func TestOriginGuard(t *testing.T) {
	set, _ := schema.Load(contracts.FS)
	p, _ := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Fixed{Tenant: "t1"},
		Guard: &httpapi.OriginGuard{Origins: []string{"https://inspector.example"}}})
	tests := []struct {
		host, origin string
		status       int
	}{
		{"127.0.0.1:8000", "", 200},
		{"localhost:8000", "http://localhost:6274", 200},
		{"[::1]:8000", "http://127.0.0.1:3000", 200},
		{"127.0.0.1:8000", "https://inspector.example", 200},
		{"attacker.example:8000", "", 403}, // DNS rebinding
		{"127.0.0.1:8000", "https://evil.example", 403},
		{"127.0.0.1:8000", "null", 403},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("POST", "/v1/tools/hello", strings.NewReader(`{"args":{"name":"x"}}`))
		req.Host = tt.host
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("Host %s Origin %q: %d, want %d", tt.host, tt.origin, rec.Code, tt.status)
		}
	}
}

// FuzzV1Body: no request body may crash the handler or produce a 5xx.
func FuzzV1Body(f *testing.F) {
	for _, s := range []string{`{"args":{"name":"x"}}`, `{"args":null}`, `{`, `[]`, `"x"`, `{"args":{"name":1e999}}`, "\x00", `{"args":{"name":"\ud800"}}`} {
		f.Add(s)
	}
	h := newHandler(f, nil)
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/tools/hello", "/mcp/tool/hello"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %q: status %d %s", path, body, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s %q: invalid JSON response %q", path, body, rec.Body)
			}
		}
	})
}
