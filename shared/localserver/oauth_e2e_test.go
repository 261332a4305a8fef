package localserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/oidctest"
)

// TestOAuthEndToEnd runs the local server as an OAuth resource server of a
// real authorization server (oidc-provider, shared/testenv/oidctest) and
// drives it with the official TypeScript SDK client (scripts/sdkclient/
// oauth.mjs): discovery from the 401, registration, authorization code
// with PKCE, the token for the resource, tools/list and tools/call, expiry
// and refresh, a key rotated at the issuer; and with the Go SDK's
// authorization code handler. Then tokens of the issuer's machine client:
// the read-only scope, and a token for another resource.
// Every request and status is logged (go test -v shows them).
func TestOAuthEndToEnd(t *testing.T) {
	const ttl = 4 // seconds: the test waits for one expiry
	as := oidctest.Start(t, oidctest.Options{Account: "alice", AccessTokenTTL: ttl * time.Second})
	base := startServer(t, map[string]string{"TOOLSHED_OAUTH_ISSUER": as.Issuer})
	resource := base + "/mcp"

	t.Run("TypeScript SDK client", func(t *testing.T) {
		out := runSDKScript(t, "oauth.mjs", resource, as.Issuer, strconv.Itoa(ttl))
		for _, want := range []string{
			`POST RS /mcp initialize 401 WWW-Authenticate: Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`,
			"GET RS /.well-known/oauth-protected-resource/mcp 200",
			"POST AS /reg 201",
			"POST AS /token 200",
			"ok tools/list",
			"ok tools/call add_task, list_tasks",
			`401 WWW-Authenticate: Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
			"ok refreshed after expiry",
			"ok new key as-key-2 accepted",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the flow lacks %q", want)
			}
		}
	})

	t.Run("Go SDK client", func(t *testing.T) {
		const redirect = "http://127.0.0.1:9/callback" // never listened on: the browser stops there
		h, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "Toolshed Go SDK end-to-end test", RedirectURIs: []string{redirect},
				GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none",
			}},
			RedirectURL:              redirect,
			AuthorizationCodeFetcher: browser(redirect),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		client := mcp.NewClient(&mcp.Implementation{Name: "toolshed-oauth-e2e-go", Version: "1"}, nil)
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatalf("connect with the Go SDK's authorization code handler: %v", err)
		}
		defer session.Close()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "Go SDK"}})
		if err != nil || res.IsError {
			t.Fatalf("tools/call: %+v, %v", res, err)
		}
		t.Logf("Go SDK client: authorized, tools/call hello answered %v", res.StructuredContent)
	})

	t.Run("loopback needs a credential on every route", func(t *testing.T) {
		challenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
		for path, body := range map[string]string{
			"/mcp":            `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			"/v1/tools/hello": `{"args":{"name":"x"}}`,
			"/mcp/tool/hello": `{"name":"x"}`,
		} {
			if a := postAuth(t, base+path, "", body); a.status != 401 || a.challenge != challenge {
				t.Errorf("%s without a credential: %d %q %s", path, a.status, a.challenge, a.body)
			}
		}
	})

	t.Run("read-only scope", func(t *testing.T) {
		read := "Bearer " + as.ClientCredentials(t, resource, "toolshed:read")
		list := postAuth(t, base+"/mcp", read, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if list.status != 200 || strings.Contains(list.body, `"add_task"`) || !strings.Contains(list.body, `"list_tasks"`) {
			t.Errorf("tools/list with the read scope: %d %s", list.status, list.body)
		}
		challenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="toolshed:full"`
		for path, body := range map[string]string{
			"/mcp":               `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"x"}}}`,
			"/v1/tools/add_task": `{"args":{"title":"x"}}`,
			"/mcp/tool/add_task": `{"title":"x"}`,
		} {
			a := postAuth(t, base+path, read, body)
			t.Logf("POST %s add_task with toolshed:read: %d WWW-Authenticate: %s", path, a.status, a.challenge)
			if a.status != 403 || a.challenge != challenge || !strings.Contains(a.body, "ACCESS_DENIED") {
				t.Errorf("%s: %d %q %s", path, a.status, a.challenge, a.body)
			}
		}
		if a := postAuth(t, base+"/v1/tools/list_tasks", read, `{"args":{}}`); a.status != 200 {
			t.Errorf("list_tasks with the read scope: %d %s", a.status, a.body)
		}
	})

	t.Run("token for another resource", func(t *testing.T) {
		other := "Bearer " + as.ClientCredentials(t, base+"/other", "toolshed:full")
		a := postAuth(t, base+"/mcp", other, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		t.Logf("POST /mcp with a token for %s/other: %d WWW-Authenticate: %s", base, a.status, a.challenge)
		if a.status != 401 || !strings.Contains(a.challenge, `error="invalid_token"`) || !strings.Contains(a.body, "not this resource") {
			t.Errorf("%d %q %s", a.status, a.challenge, a.body)
		}
	})
	requests := strings.Join(as.Requests(), "\n")
	t.Logf("the authorization server answered:\n%s", requests)
	if _, afterRotation, _ := strings.Cut(requests, "AS POST /rotate 200"); !strings.Contains(afterRotation, "AS GET /jwks 200") {
		t.Error("the server did not fetch the issuer's keys again after the rotation")
	}
}

type authAnswer struct {
	status    int
	challenge string
	body      string
}

// postAuth POSTs a JSON body with an Authorization header (none when
// authorization is "").
func postAuth(t *testing.T, url, authorization, body string) authAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
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
	return authAnswer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)}
}

// browser is a headless browser for the Go SDK's authorization code
// handler: it follows the authorization URL's redirects with cookies (the
// test authorization server logs in and consents at once) up to redirect,
// and returns what that redirect carries.
func browser(redirect string) sdkauth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, err
		}
		c := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), redirect) {
				return http.ErrUseLastResponse
			}
			return nil
		}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		back, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("authorization ended with %s, not a redirect: %w", resp.Status, err)
		}
		q := back.Query()
		return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// TestScopeChallengeReadsTheToolNameAsTheSDK: over real HTTP with a
// read-scope access token, the scope check before the SDK reads a
// tools/call's tool name exactly as the SDK's dispatcher does. A call of
// add_task gets the 403 insufficient_scope challenge; params naming tools
// under keys that differ only in case ({"name":"add_task","NAME":"hello"},
// which a case-insensitive peek read as hello and answered 200 with an
// isError ACCESS_DENIED) are refused as invalid params; a key that only
// looks like "name" names no tool.
func TestScopeChallengeReadsTheToolNameAsTheSDK(t *testing.T) {
	iss := issuertest.Start(t)
	base := startServer(t, map[string]string{"TOOLSHED_OAUTH_ISSUER": iss.URL})
	read := "Bearer " + iss.Token(t, iss.Claims(base+"/mcp", "alice", "toolshed:read"))
	challenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="toolshed:full"`
	tests := []struct {
		name, params string
		status       int
		challenged   bool
		want         string
	}{
		{"add_task", `{"name":"add_task","arguments":{"title":"x"}}`, 403, true, `"code":"ACCESS_DENIED"`},
		{"add_task, hello in capitals", `{"name":"add_task","NAME":"hello","arguments":{"title":"x"}}`, 200, false,
			`"code":-32602,"message":"\"params\" has keys \"NAME\" and \"name\", which differ only in case`},
		{"hello, add_task in capitals", `{"NAME":"add_task","name":"hello","arguments":{"name":"x"}}`, 200, false, `"code":-32602`},
		{"add_task in capitals only", `{"NAME":"add_task","arguments":{"title":"x"}}`, 200, false,
			`"code":-32602,"message":"params.name: the name of the tool to call is required"`},
		{"hello", `{"name":"hello","arguments":{"name":"x"}}`, 200, false, `"structuredContent":{"greeting":"Hello, x!"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := postAuth(t, base+"/mcp", read, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":`+tt.params+`}`)
			if a.status != tt.status || (a.challenge == challenge) != tt.challenged || !strings.Contains(a.body, tt.want) ||
				strings.Contains(a.body, `"isError":true`) {
				t.Errorf("%d %q %s; want %d (challenge %v) with %s", a.status, a.challenge, a.body, tt.status, tt.challenged, tt.want)
			}
		})
	}
}
