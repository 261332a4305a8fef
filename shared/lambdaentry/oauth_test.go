package lambdaentry_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

const (
	publicURL   = "https://tools.example"
	metadataURL = publicURL + "/.well-known/oauth-protected-resource/mcp"
)

// TestBootstrapsWithOAuth: deployed with an issuer, the gateway and the
// tool functions check every request's credential themselves (API
// Gateway's authorizers cannot answer with WWW-Authenticate, so no
// authorizer verdict is trusted): access tokens against the issuer's keys,
// API keys against the ApiKeys table. The gateway serves the metadata,
// answers 401 and 403 with their challenges, and hands a tool function the
// tenant, never the token.
func TestBootstrapsWithOAuth(t *testing.T) {
	iss := issuertest.Start(t)
	d := newDeployment(t)
	key, _, err := auth.Create(t.Context(), d.Stores.APIKeys, "keyed", "laptop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	oauthEnv := map[string]string{
		"TOOLSHED_OAUTH_ISSUER": iss.URL, "TOOLSHED_PUBLIC_URL": publicURL,
		config.Store.Name(): string(config.StoreDynamoDB), config.TableSettings[config.APIKeysTable].Name(): d.Tables.APIKeys,
	}
	withOAuth := func(cfg lambdatest.Config) *lambdatest.Function {
		maps.Copy(cfg.Env, oauthEnv)
		cfg.Name += "-oauth"
		return d.Start(t, cfg)
	}
	hello, addTask := withOAuth(d.ToolConfig(t, "hello")), withOAuth(d.ToolConfig(t, "add_task"))
	gw := withOAuth(d.GatewayConfig(t, map[string]string{"hello": hello.Name, "add_task": addTask.Name}))

	full := "Bearer " + iss.Token(t, iss.Claims(publicURL+"/mcp", "alice", "toolshed:full"))
	read := "Bearer " + iss.Token(t, iss.Claims(publicURL+"/mcp", "alice", "toolshed:read"))
	expired := iss.Claims(publicURL+"/mcp", "alice", "toolshed:full")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	tests := []struct {
		name      string
		fn        *lambdatest.Function
		event     []byte
		status    int
		challenge string // the WWW-Authenticate it must carry ("" for none)
		fields    string // JSON the body must contain
	}{
		{"gateway, metadata", gw, withRoute(t, "mcp-get.json", "/.well-known/oauth-protected-resource/mcp", "", ""), 200, "",
			`{"resource":"https://tools.example/mcp","authorization_servers":["` + iss.URL + `"],"bearer_methods_supported":["header"]}`},
		{"gateway, no credentials", gw, bearer(t, "mcp-call-hello.json", "", "", call("hello", `{"name":"x"}`)), 401,
			`Bearer resource_metadata="` + metadataURL + `"`, `{"error":{"data":{"code":"UNAUTHORIZED"}}}`},
		{"gateway, an authorizer's tenant is not trusted", gw, withRoute(t, "mcp-call-hello.json", "", call("hello", `{"name":"x"}`), "acme"), 401,
			`Bearer resource_metadata="` + metadataURL + `", error="invalid_token"`, `{"error":{"message":` + jsonString(t, "unknown API key; "+auth.KeyHelp) + `}}`},
		{"gateway, token", gw, bearer(t, "mcp-call-hello.json", "", full, call("hello", `{"name":"x"}`)), 200, "",
			`{"result":{"structuredContent":{"greeting":"Hello, x!"}}}`},
		{"gateway, API key", gw, bearer(t, "mcp-call-hello.json", "", "Bearer "+key, call("hello", `{"name":"k"}`)), 200, "",
			`{"result":{"structuredContent":{"greeting":"Hello, k!"}}}`},
		{"gateway, read scope calls a tool that writes", gw, bearer(t, "mcp-call-hello.json", "", read, call("add_task", `{"title":"x"}`)), 403,
			`Bearer resource_metadata="` + metadataURL + `", error="insufficient_scope", scope="toolshed:full"`, `{"error":{"code":-32000,"data":{"code":"ACCESS_DENIED"}}}`},
		{"tool function, expired token", hello, bearer(t, "v1-hello.json", "", "Bearer "+iss.Token(t, expired), `{"args":{"name":"x"}}`), 401,
			`Bearer resource_metadata="` + metadataURL + `", error="invalid_token"`, `{"ok":false,"code":"UNAUTHORIZED","error":"invalid access token: the token has expired"}`},
		{"tool function, token", hello, bearer(t, "v1-hello.json", "", full, `{"args":{"name":"x"}}`), 200, "", `{"ok":true}`},
		{"tool function, API key", hello, bearer(t, "v1-hello.json", "", "Bearer "+key, `{"args":{"name":"x"}}`), 200, "", `{"ok":true}`},
		{"tool function, read scope", addTask, bearer(t, "v1-hello.json", "/v1/tools/add_task", read, `{"args":{"title":"x"}}`), 403,
			`Bearer resource_metadata="` + metadataURL + `", error="insufficient_scope", scope="toolshed:full"`, `{"ok":false,"code":"ACCESS_DENIED"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, headers, body := apiResponse(t, invoke(t, tt.fn, tt.event))
			if status != tt.status || header(headers, "WWW-Authenticate") != tt.challenge {
				t.Errorf("got %d %q %s\nwant %d %q", status, header(headers, "WWW-Authenticate"), body, tt.status, tt.challenge)
			}
			hasFields(t, body, tt.fields)
		})
	}
	forwarded := 0
	for _, c := range hello.Runtime.Invocations() {
		if !strings.Contains(string(c.Event), `"tool":"hello"`) { // not the gateway's
			continue
		}
		forwarded++
		if strings.Contains(string(c.Event), strings.TrimPrefix(full, "Bearer ")) || strings.Contains(string(c.Event), key) || !strings.Contains(string(c.Event), `"tenant":"alice"`) && !strings.Contains(string(c.Event), `"tenant":"keyed"`) {
			t.Errorf("the gateway passed a credential on, or no tenant: %s", c.Event)
		}
	}
	if forwarded != 2 {
		t.Errorf("the gateway forwarded %d calls to hello, want 2", forwarded)
	}
}

// bearer returns a fixture event for path (the fixture's own when "")
// with body, no authorizer context and Authorization set to authorization
// (none when "").
func bearer(t *testing.T, name, path, authorization, body string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(withRoute(t, name, path, body, ""), &ev); err != nil {
		t.Fatal(err)
	}
	delete(ev["requestContext"].(map[string]any), "authorizer")
	headers := ev["headers"].(map[string]any)
	delete(headers, "authorization")
	delete(headers, "content-length")
	if authorization != "" {
		headers["authorization"] = authorization
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func header(headers map[string]string, name string) string {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// jsonString is s as a JSON string.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
