package localserver_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/oidctest"
)

// TestOAuthEndToEnd runs the local server as an OAuth resource server of a
// real authorization server (oidc-provider, shared/testenv/oidctest) and
// drives it with the official TypeScript SDK client (scripts/sdkclient/
// oauth.mjs): discovery from the 401, registration, authorization code
// with PKCE, the token for the resource, tools/list and tools/call, expiry
// and refresh, a key rotated at the issuer. Then tokens of the issuer's
// machine client: the read-only scope, and a token for another resource.
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
