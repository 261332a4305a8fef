package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
	"github.com/toolshed/toolshed/shared/tools/tasks"
)

const (
	publicURL = "https://tools.example"
	resource  = publicURL + "/mcp"
	metadata  = publicURL + "/.well-known/oauth-protected-resource/mcp"
)

// fixture is the HTTP surface of a server taking the test issuer's tokens
// and API keys, serving hello and the task tools.
type fixture struct {
	h   http.Handler
	iss *issuertest.Issuer
	key string // a valid API key, of tenant "keyed"
}

func newFixture(t *testing.T, settings func(*config.OAuth)) fixture {
	t.Helper()
	iss := issuertest.Start(t)
	stores := tooltest.BoltStores(t)
	key, _, err := auth.Create(t.Context(), stores.APIKeys, "keyed", "laptop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, append(tasks.Tools(stores.Tasks, nil, cursor.RandomKey()), hello.New()), toolkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := config.OAuth{Issuer: iss.URL, TenantClaim: "sub", ReadScope: "toolshed:read", FullScope: "toolshed:full"}
	if settings != nil {
		settings(&o)
	}
	rs, err := oauth.New(oauth.Config{PublicURL: publicURL, OAuth: o, Keys: auth.Keys{Store: stores.APIKeys}, Tools: p.Served()})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: rs, ProtectedResource: rs.Metadata(),
		MCP: mcpserver.New(mcpserver.Config{Name: "t", Version: "1", Tools: p})})
	return fixture{h: h, iss: iss, key: key}
}

// token returns a valid access token of the test issuer for subject with scopes.
func (f fixture) token(t *testing.T, subject string, scopes ...string) string {
	return f.iss.Token(t, f.iss.Claims(resource, subject, scopes...))
}

type answer struct {
	status    int
	challenge string
	body      string
}

func (f fixture) do(method, path, authorization, body string) answer {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body.String()}
}

// call calls tool with args on route: "mcp" (tools/call), "v1" or "task".
func (f fixture) call(route, authorization, tool, args string) answer {
	switch route {
	case "mcp":
		return f.do("POST", "/mcp", authorization,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`)
	case "v1":
		return f.do("POST", "/v1/tools/"+tool, authorization, `{"args":`+args+`}`)
	}
	return f.do("POST", "/mcp/tool/"+tool, authorization, args)
}

var routes = []string{"mcp", "v1", "task"}

// envelope is what a refusal on each route looks like.
var envelope = map[string]string{"mcp": `"jsonrpc":"2.0"`, "v1": `"ok":false`, "task": `"success":false`}

func TestMetadata(t *testing.T) {
	f := newFixture(t, nil)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Origin", "https://claude.ai")
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		want := map[string]any{"resource": resource, "authorization_servers": []any{f.iss.URL},
			"scopes_supported": []any{"toolshed:read", "toolshed:full"}, "bearer_methods_supported": []any{"header"}}
		for k, v := range want {
			if b1, _ := json.Marshal(got[k]); string(b1) != mustJSON(v) {
				t.Errorf("GET %s: %s = %s, want %s", path, k, b1, mustJSON(v))
			}
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: not readable by other origins: %v", path, rec.Header())
		}
	}
	pre := httptest.NewRequest("OPTIONS", "/.well-known/oauth-protected-resource/mcp", nil)
	pre.Header.Set("Origin", "https://claude.ai")
	pre.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, pre)
	if rec.Code != 204 || !strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "MCP-Protocol-Version") {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
	if a := f.do("POST", "/.well-known/oauth-protected-resource", "", ""); a.status != 405 || !strings.Contains(a.body, `"code":"INVALID_INPUT"`) {
		t.Errorf("POST: %d %s", a.status, a.body)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRefusedTokens: every route answers a request without a valid
// credential with 401 in its own envelope and a challenge pointing at the
// metadata, with error="invalid_token" when a credential was sent.
func TestRefusedTokens(t *testing.T) {
	f := newFixture(t, nil)
	iss := f.iss
	claims := func(change func(map[string]any)) map[string]any {
		c := iss.Claims(resource, "alice", "toolshed:full")
		change(c)
		return c
	}
	other := issuertest.NewKey(t)
	other.KeyID = iss.SigningKey().KeyID
	unknown := issuertest.NewKey(t)
	unknown.KeyID = "not-published"
	valid := iss.Claims(resource, "alice", "toolshed:full")
	tests := []struct {
		name, authorization, why string
	}{
		{"expired", "Bearer " + iss.Token(t, claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() })), "expired"},
		{"wrong audience", "Bearer " + iss.Token(t, claims(func(c map[string]any) { c["aud"] = "https://other.example/mcp" })), "not this resource"},
		{"no audience", "Bearer " + iss.Token(t, claims(func(c map[string]any) { delete(c, "aud") })), `no "aud"`},
		{"wrong issuer", "Bearer " + iss.Token(t, claims(func(c map[string]any) { c["iss"] = "https://evil.example" })), "issued by"},
		{"other key, same kid", "Bearer " + issuertest.Sign(t, other, "RS256", valid), "signature does not verify"},
		{"unknown kid", "Bearer " + issuertest.Sign(t, unknown, "RS256", valid), "does not publish"},
		{"alg none", "Bearer " + issuertest.Unsigned(t, iss.SigningKey().KeyID, valid), "accepted algorithm"},
		{"HS256 keyed with the public key", "Bearer " + iss.HMACWithPublicKey(t, valid), "accepted algorithm"},
		{"not yet valid", "Bearer " + iss.Token(t, claims(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Minute).Unix() })), "not valid yet"},
		{"no expiry", "Bearer " + iss.Token(t, claims(func(c map[string]any) { delete(c, "exp") })), `no "exp"`},
		{"garbage", "Bearer not.a.jwt", "accepted algorithm"},
		{"oversized", "Bearer " + strings.Repeat("a", 17<<10), "longer than"},
		{"unknown API key", "Bearer " + auth.NewKey(), "unknown API key"},
		{"no credentials", "", "missing credentials"},
		{"not a bearer credential", "Basic dXNlcjpwYXNz", "malformed Authorization header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := `Bearer resource_metadata="` + metadata + `"`
			if tt.authorization != "" && strings.HasPrefix(tt.authorization, "Bearer ") {
				want += `, error="invalid_token"`
			}
			for _, route := range routes {
				a := f.call(route, tt.authorization, "hello", `{"name":"x"}`)
				if a.status != 401 || a.challenge != want || !strings.Contains(a.body, "UNAUTHORIZED") ||
					!strings.Contains(a.body, envelope[route]) || !strings.Contains(a.body, strings.Trim(mustJSON(tt.why), `"`)) {
					t.Errorf("%s: %d %q %s\nwant 401, %q, UNAUTHORIZED saying %q", route, a.status, a.challenge, a.body, want, tt.why)
				}
			}
			t.Logf("401 %s", refusal(f.call("v1", tt.authorization, "hello", `{"name":"x"}`).body))
		})
	}
}

// refusal is the message of a /v1 refusal.
func refusal(body string) string {
	var v struct{ Error string }
	json.Unmarshal([]byte(body), &v)
	return v.Error
}

// TestCredentialsAccepted: a valid token and an API key both work on every
// route, with their tenants.
func TestCredentialsAccepted(t *testing.T) {
	f := newFixture(t, nil)
	for _, route := range routes {
		for name, authorization := range map[string]string{
			"token": "Bearer " + f.token(t, "alice", "toolshed:full"), "API key": "Bearer " + f.key,
		} {
			if a := f.call(route, authorization, "hello", `{"name":"x"}`); a.status != 200 || strings.Contains(a.body, "isError") {
				t.Errorf("%s with %s: %d %s", route, name, a.status, a.body)
			}
		}
	}
}
