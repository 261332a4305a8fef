package lambdaentry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// edge stands in for the deployed HTTP API in front of the functions: each
// route has a Lambda authorizer (REQUEST type on the Authorization header,
// simple responses, as infra deploys it) and a function. It does what API
// Gateway does there and nothing more: a request without the header is
// answered 401 and the authorizer is not called; an authorizer that fails
// is 500, one that answers isAuthorized false is 403, and only then is the
// route's function invoked, with the authorizer's context.
type edge struct {
	authorizer *lambdatest.Function
	routes     map[string]*lambdatest.Function // route key → function
}

// request sends POST path with the Authorization header (none when
// header is "") and body, and returns the status and body the client gets.
func (e edge) request(t *testing.T, path, header, body string) (int, string) {
	t.Helper()
	routeKey := "POST " + path
	fn, ok := e.routes[routeKey]
	if !ok {
		t.Fatalf("no route %s", routeKey)
	}
	if header == "" {
		return 401, `{"message":"Unauthorized"}`
	}
	resp := invoke(t, e.authorizer, routeEvent(t, "authorizer-request.json", routeKey, header, "", nil))
	var decision struct {
		IsAuthorized bool           `json:"isAuthorized"`
		Context      map[string]any `json:"context"`
	}
	if resp.FunctionError != "" || json.Unmarshal(resp.Payload, &decision) != nil {
		return 500, `{"message":"Internal Server Error"}`
	}
	if !decision.IsAuthorized {
		return 403, `{"message":"Forbidden"}`
	}
	status, _, out := apiResponse(t, invoke(t, fn, routeEvent(t, "v1-hello.json", routeKey, header, body, decision.Context)))
	return status, out
}

// routeEvent is a fixture event for routeKey with the Authorization header
// and, for a function's event, the body and the authorizer's context.
func routeEvent(t *testing.T, name, routeKey, header, body string, authorizer map[string]any) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(fixture(t, name), &ev); err != nil {
		t.Fatal(err)
	}
	_, path, _ := strings.Cut(routeKey, " ")
	rc := ev["requestContext"].(map[string]any)
	ev["routeKey"], ev["rawPath"], rc["routeKey"] = routeKey, path, routeKey
	rc["http"].(map[string]any)["path"] = path
	ev["headers"].(map[string]any)["authorization"] = header
	if _, ok := ev["identitySource"]; ok {
		ev["identitySource"] = []string{header}
	} else {
		ev["body"], ev["isBase64Encoded"] = body, false
		rc["authorizer"] = map[string]any{"lambda": authorizer}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEdgeDeniesUnauthenticated: behind the deployed edge, a request to a
// tool's route with a missing, malformed, unknown or revoked key is
// refused before any tool function runs; a valid key reaches the tool;
// and the MCP endpoint's function answers a refused key itself, with 401
// and the reason.
func TestEdgeDeniesUnauthenticated(t *testing.T) {
	d := newDeployment(t)
	good, revoked := keys(t, d)
	hello := d.Tool(t, "hello")
	gw := d.Start(t, d.GatewayConfig(t, map[string]string{"hello": hello.Name}))
	e := edge{authorizer: d.Start(t, d.AuthorizerConfig()), routes: map[string]*lambdatest.Function{
		"POST /v1/tools/hello": hello, "POST /mcp/tool/hello": hello, "POST /mcp": gw,
	}}

	tests := []struct {
		path, credential, header string
		status                   int
		body                     string // what the answer contains
	}{
		{"/v1/tools/hello", "none", "", 401, `"Unauthorized"`},
		{"/v1/tools/hello", "unknown key", "Bearer tsk_unknown", 403, `"Forbidden"`},
		{"/v1/tools/hello", "revoked key", "Bearer " + revoked, 403, `"Forbidden"`},
		{"/v1/tools/hello", "not a bearer", "Basic dXNlcjpwYXNz", 403, `"Forbidden"`},
		{"/v1/tools/hello", "empty bearer", "Bearer ", 403, `"Forbidden"`},
		{"/mcp/tool/hello", "unknown key", "Bearer tsk_unknown", 403, `"Forbidden"`},
		{"/mcp/tool/hello", "revoked key", "Bearer " + revoked, 403, `"Forbidden"`},
		{"/mcp", "unknown key", "Bearer tsk_unknown", 401, `unknown API key`},
		{"/mcp", "revoked key", "Bearer " + revoked, 401, `API key \"old\" was revoked`},
		{"/v1/tools/hello", "valid key", "Bearer " + good, 200, `"greeting":"Hello, World!"`},
	}
	for _, tt := range tests {
		before := len(hello.Runtime.Invocations())
		body := `{"args":{"name":"World"}}`
		if tt.path == "/mcp" {
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}`
		}
		status, out := e.request(t, tt.path, tt.header, body)
		ran := len(hello.Runtime.Invocations()) - before
		t.Logf("POST %-16s %-13s → %d %s; hello ran %d time(s)", tt.path, tt.credential, status, strings.TrimSpace(out), ran)
		if status != tt.status || !strings.Contains(out, tt.body) {
			t.Errorf("POST %s with %s: %d %s, want %d containing %s", tt.path, tt.credential, status, out, tt.status, tt.body)
		}
		if want := map[bool]int{true: 1, false: 0}[tt.status == 200]; ran != want {
			t.Errorf("POST %s with %s: the hello function ran %d times, want %d", tt.path, tt.credential, ran, want)
		}
	}
	if got := len(hello.Runtime.Invocations()); got != 1 {
		t.Errorf("the hello function ran %d times in all, want 1 (the valid key's call)", got)
	}
}
