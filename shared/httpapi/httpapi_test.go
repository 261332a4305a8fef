package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// The authenticators the functions and the local server serve with (auth
// does not import httpapi, so that the authorizer does not link it: they
// are checked here).
var (
	_ httpapi.Authenticator = auth.Keys{}
	_ httpapi.Authenticator = auth.Fixed{}
	_ httpapi.Authenticator = auth.Gateway{}
	_ httpapi.Authenticator = (*oauth.ResourceServer)(nil)
)

type denyAll struct{}

func (denyAll) Allow(context.Context, string, string, int) (toolkit.Decision, error) {
	return toolkit.Decision{RetryAfter: 1500 * time.Millisecond}, nil
}

func newHandler(t testing.TB, limiter toolkit.Limiter) http.Handler {
	t.Helper()
	return httpapi.New(httpapi.Config{Invoker: newPipeline(t, limiter), Auth: auth.Fixed{Tenant: "t1"}, MaxBody: 64 << 10})
}

// newPipeline serves hello.
func newPipeline(t testing.TB, limiter toolkit.Limiter) *toolkit.Pipeline {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{Limiter: limiter})
	if err != nil {
		t.Fatal(err)
	}
	return p
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

func TestTaskAPIEnvelope(t *testing.T) {
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
		{"malformed task-API body", "POST", "/mcp/tool/hello", "application/json", `{"name":`, 400, "VALIDATION_ERROR", "request body: malformed JSON"},
		{"body is an array", "POST", "/v1/tools/hello", "application/json", `[]`, 400, "INVALID_INPUT", "request body: must be a JSON object"},
		{"huge body", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "` + strings.Repeat("a", 70<<10) + `"}}`, 413, "SIZE_LIMIT_EXCEEDED", "request body: larger than"},
		{"wrong content type", "POST", "/v1/tools/hello", "text/plain", `{"args": {"name": "x"}}`, 415, "INVALID_INPUT", "Content-Type: must be application/json"},
		{"form content type (curl -d)", "POST", "/v1/tools/hello", "application/x-www-form-urlencoded", `{"args": {"name": "x"}}`, 415, "INVALID_INPUT", `Content-Type: must be application/json, got "application/x-www-form-urlencoded" (curl -d sends it: add -H 'Content-Type: application/json')`},
		{"json with charset", "POST", "/v1/tools/hello", "application/json; charset=utf-8", `{"args": {}}`, 400, "INVALID_INPUT", "name: is required"},
		{"no content type", "POST", "/v1/tools/hello", "", `{"args": {}}`, 400, "INVALID_INPUT", "name: is required"},
		{"duplicate args", "POST", "/v1/tools/hello", "application/json", `{"args": {"name": "a"}, "args": {"name": "b"}}`, 400, "INVALID_INPUT", `request body: malformed JSON: duplicate key "args"`},
		{"duplicate argument", "POST", "/mcp/tool/hello", "application/json", `{"name": "a", "name": "b"}`, 400, "VALIDATION_ERROR", `arguments are not valid JSON: duplicate key "name"`},
		{"unknown tool", "POST", "/v1/tools/nope", "application/json", `{"args": {}}`, 404, "TOOL_NOT_FOUND", `no tool named "nope"`},
		{"unknown tool, task API", "POST", "/mcp/tool/nope", "application/json", `{}`, 404, "NOT_FOUND", `no tool named "nope"`},
		{"GET a tool", "GET", "/v1/tools/hello", "", ``, 405, "INVALID_INPUT", "method GET is not allowed on /v1/tools/hello; use POST"},
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
		t.Errorf("task API: got %d %v", r.status, r.body)
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

// keyAuth lets requests with "Authorization: Bearer good" through as t1.
type keyAuth struct{}

func (keyAuth) Authenticate(r *http.Request) (caller.Grant, error) {
	if r.Header.Get("Authorization") != "Bearer good" {
		return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "missing API key: send Authorization: Bearer <key>")
	}
	return caller.Grant{Tenant: "t1"}, nil
}

// mcpStub stands in for the MCP server: it answers every request it gets.
type mcpStub struct{}

func (mcpStub) Serve(w http.ResponseWriter, _ *http.Request, _ []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
}

var mcpOK = mcpStub{}

// TestEveryFailureUsesTheRouteEnvelope: whatever goes wrong and wherever,
// the answer is JSON in the envelope of the route aimed at, with the
// request id in the header (and in the body where the envelope has one).
func TestEveryFailureUsesTheRouteEnvelope(t *testing.T) {
	set, _ := schema.Load(contracts.FS)
	p, _ := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: keyAuth{}, MCP: mcpOK, MaxBody: 1 << 10,
		Guard: &httpapi.OriginGuard{}})
	big := `{"x":"` + strings.Repeat("a", 2<<10) + `"}`
	type failure struct {
		name, method, ctype, body, origin, auth string
		status                                  int
		code                                    string // vocabulary code
	}
	failures := []failure{
		{"no key", "POST", "application/json", `{}`, "", "", 401, "UNAUTHORIZED"},
		{"foreign origin", "POST", "application/json", `{}`, "https://evil.example", "Bearer good", 403, "ACCESS_DENIED"},
		{"wrong method", "PUT", "application/json", `{}`, "", "Bearer good", 405, "INVALID_INPUT"},
		{"too large", "POST", "application/json", big, "", "Bearer good", 413, "SIZE_LIMIT_EXCEEDED"},
		{"wrong media type", "POST", "text/plain", `{}`, "", "Bearer good", 415, "INVALID_INPUT"},
	}
	routes := []struct {
		path  string
		check func(t *testing.T, body map[string]any, f failure, requestID string)
	}{
		{"/v1/tools/hello", func(t *testing.T, b map[string]any, f failure, id string) {
			if b["tool"] != "hello" || b["ok"] != false || b["code"] != f.code || b["requestId"] != id || b["error"] == "" {
				t.Errorf("not a /v1 failure envelope: %v", b)
			}
		}},
		{"/mcp/tool/hello", func(t *testing.T, b map[string]any, f failure, id string) {
			taskCode := map[string]string{"UNAUTHORIZED": "UNAUTHORIZED", "ACCESS_DENIED": "ACCESS_DENIED",
				"INVALID_INPUT": "VALIDATION_ERROR", "SIZE_LIMIT_EXCEEDED": "VALIDATION_ERROR", "RESOURCE_NOT_FOUND": "NOT_FOUND"}[f.code]
			if b["success"] != false || b["code"] != taskCode || b["requestId"] != id || b["error"] == "" {
				t.Errorf("not a task-API failure envelope (want code %s): %v", taskCode, b)
			}
		}},
		{"/mcp", func(t *testing.T, b map[string]any, f failure, id string) {
			e, _ := b["error"].(map[string]any)
			data, _ := e["data"].(map[string]any)
			if b["jsonrpc"] != "2.0" || b["id"] != nil || e == nil || e["code"] == nil || e["message"] == "" ||
				data["code"] != f.code || data["requestId"] != id {
				t.Errorf("not a JSON-RPC error: %v", b)
			}
		}},
		{"/elsewhere", func(t *testing.T, b map[string]any, f failure, id string) {
			if b["code"] != f.code || b["requestId"] != id || b["error"] == "" {
				t.Errorf("not an error object: %v", b)
			}
		}},
	}
	for _, rt := range routes {
		cases := failures
		if rt.path == "/elsewhere" { // only the guard and the router answer here
			cases = []failure{failures[1], {"unknown route", "POST", "application/json", `{}`, "", "Bearer good", 404, "RESOURCE_NOT_FOUND"}}
		} else {
			cases = append(cases, failure{"unknown sub-route", "POST", "application/json", `{}`, "", "Bearer good", 404, "RESOURCE_NOT_FOUND"})
		}
		for _, f := range cases {
			path := rt.path
			if f.name == "unknown sub-route" {
				path += "/extra/part"
			}
			t.Run(rt.path+"/"+f.name, func(t *testing.T) {
				req := httptest.NewRequest(f.method, path, strings.NewReader(f.body))
				req.Host = "127.0.0.1:8000"
				req.Header.Set("Content-Type", f.ctype)
				if f.origin != "" {
					req.Header.Set("Origin", f.origin)
				}
				if f.auth != "" {
					req.Header.Set("Authorization", f.auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				id := rec.Header().Get("X-Request-Id")
				if rec.Code != f.status || id == "" || rec.Header().Get("Content-Type") != "application/json" {
					t.Fatalf("got %d, X-Request-Id %q, Content-Type %q: %s", rec.Code, id, rec.Header().Get("Content-Type"), rec.Body)
				}
				var body map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatalf("body is not a JSON object: %q", rec.Body)
				}
				rt.check(t, body, f, id)
			})
		}
	}
	// /healthz has a request id too, and only GET.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/healthz", nil)
	req.Host = "127.0.0.1"
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("GET /healthz: %d %v", rec.Code, rec.Header())
	}
}

// TestToolFunctionNotFoundNamesItsRoutes: a tool function (no /mcp) says
// which routes it serves.
func TestToolFunctionNotFoundNamesItsRoutes(t *testing.T) {
	h := newHandler(t, nil)
	r := do(t, h, "POST", "/v1/whatever", "application/json", `{}`)
	want := "no route for POST /v1/whatever; this function serves POST /v1/tools/hello, POST /mcp/tool/hello"
	if r.status != 404 || r.body["error"] != want {
		t.Errorf("got %d %v, want %q", r.status, r.body, want)
	}
}

// TestRefusalsAreLogged: 401 and 404 leave a log line with the request id.
func TestRefusalsAreLogged(t *testing.T) {
	var logs strings.Builder
	set, _ := schema.Load(contracts.FS)
	p, _ := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: keyAuth{}, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	for _, path := range []string{"/v1/tools/hello", "/nowhere"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(`{}`)))
		id := rec.Header().Get("X-Request-Id")
		if !strings.Contains(logs.String(), `"request_id":"`+id+`"`) || !strings.Contains(logs.String(), fmt.Sprintf(`"status":%d`, rec.Code)) {
			t.Errorf("%s (%d): no log line with request id %s in %s", path, rec.Code, id, logs.String())
		}
	}
}

// TestEncodedLen: EncodedLen is exactly what encoding/json makes of a
// string, for every kind of byte the escaping treats differently.
func TestEncodedLen(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<a href='x'>&amp;</a>", "\n\r\t\b\f\x00\x1f\x7f",
		"é日本😀", "\u2028\u2029", "\xff\xfe bad utf-8 \xe2\x82", strings.Repeat("<>&\"", 1000)} {
		want, _ := json.Marshal(s)
		if got := httpapi.EncodedLen([]byte(s)); got != len(want) {
			t.Errorf("%q: EncodedLen %d, encoding/json %d", s, got, len(want))
		}
	}
}

func FuzzEncodedLen(f *testing.F) {
	f.Add("<&>\"\\\n\x00\xff\u2028é")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := httpapi.EncodedLen([]byte(s)); got != len(want) {
			t.Fatalf("%q: EncodedLen %d, encoding/json %d", s, got, len(want))
		}
	})
}

// TestResponseLimit: with MaxResponse set (Lambda), a response that would
// not fit is SIZE_LIMIT_EXCEEDED in the route's envelope; smaller ones pass
// untouched.
func TestResponseLimit(t *testing.T) {
	set, _ := schema.Load(contracts.FS)
	p, _ := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Fixed{Tenant: "t1"}, MaxResponse: 300})
	r := do(t, h, "POST", "/v1/tools/hello", "application/json", `{"args":{"name":"a"}}`)
	if r.status != 200 || r.body["ok"] != true {
		t.Fatalf("small response: %d %v", r.status, r.body)
	}
	// 90 '<' become 540 bytes once escaped by the Lambda runtime.
	r = do(t, h, "POST", "/v1/tools/hello", "application/json", `{"args":{"name":"`+strings.Repeat("<", 90)+`"}}`)
	if r.status != 413 || r.body["code"] != "SIZE_LIMIT_EXCEEDED" || r.body["tool"] != "hello" || r.header.Get("X-Request-Id") == "" {
		t.Errorf("large response: %d %v", r.status, r.body)
	}
}

// grants accepts the bearer keys it holds, each with its grant.
type grants map[string]caller.Grant

func (k grants) Authenticate(r *http.Request) (caller.Grant, error) {
	if g, ok := k[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; ok {
		return g, nil
	}
	return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "missing or unknown API key")
}

// TestHealthDetailsNeedACredential: GET /healthz says "ok" to anyone; the
// details only to an accepted credential, and only those of the
// repositories it may read. A refused credential is refused; without
// details to give (a deployed function) no credential is looked at.
func TestHealthDetailsNeedACredential(t *testing.T) {
	status := func(repos []string) map[string]any {
		return map[string]any{"repos": fmt.Sprint(repos)}
	}
	keys := grants{"all": {Tenant: "t1"}, "api-only": {Tenant: "t1", Repos: []string{"api"}}}
	p := newPipeline(t, nil)
	withDetails := httpapi.New(httpapi.Config{Invoker: p, Auth: keys, Status: status})
	withoutDetails := httpapi.New(httpapi.Config{Invoker: p, Auth: keys})
	tests := []struct {
		name   string
		h      http.Handler
		key    string
		status int
		want   string
	}{
		{"anyone", withDetails, "", 200, `{"status":"ok"}`},
		{"every repository", withDetails, "all", 200, `{"repos":"[]","status":"ok"}`},
		{"limited to api", withDetails, "api-only", 200, `{"repos":"[api]","status":"ok"}`},
		{"refused", withDetails, "wrong", 401, `"code":"UNAUTHORIZED"`},
		{"no details: anyone", withoutDetails, "", 200, `{"status":"ok"}`},
		{"no details: any key", withoutDetails, "wrong", 200, `{"status":"ok"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/healthz", nil)
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			rec := httptest.NewRecorder()
			tt.h.ServeHTTP(rec, req)
			if got := strings.TrimSpace(rec.Body.String()); rec.Code != tt.status || !strings.Contains(got, tt.want) {
				t.Errorf("got %d %s, want %d %s", rec.Code, got, tt.status, tt.want)
			}
		})
	}
}
