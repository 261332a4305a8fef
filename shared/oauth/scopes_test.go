package oauth_test

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
)

// TestScopes: the full scope serves every tool; the read scope lists and
// serves only the read-only tools and answers the others, on every route,
// with 403 insufficient_scope naming the full scope; a token with neither
// scope sees no tool.
func TestScopes(t *testing.T) {
	f := newFixture(t, nil)
	full := "Bearer " + f.token(t, "alice", "toolshed:full")
	read := "Bearer " + f.token(t, "alice", "toolshed:read", "openid")
	none := "Bearer " + f.token(t, "alice", "openid")
	list := func(authorization string) string {
		return f.do("POST", "/mcp", authorization, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).body
	}
	if l := list(full); !strings.Contains(l, `"add_task"`) || !strings.Contains(l, `"hello"`) {
		t.Errorf("full scope lists %s", l)
	}
	if l := list(read); strings.Contains(l, `"add_task"`) || !strings.Contains(l, `"list_tasks"`) || !strings.Contains(l, `"hello"`) {
		t.Errorf("read scope lists %s, want the read-only tools only", l)
	}
	if l := list(none); !strings.Contains(l, `"tools":[]`) {
		t.Errorf("no scope lists %s, want nothing", l)
	}
	refusals := []struct {
		name, authorization, tool, args, scope string
	}{
		{"read scope, a tool that writes", read, "add_task", `{"title":"t"}`, "toolshed:full"},
		{"no scope, a read-only tool", none, "hello", `{"name":"x"}`, "toolshed:read"},
		{"no scope, a tool that writes", none, "add_task", `{"title":"t"}`, "toolshed:full"},
	}
	for _, tt := range refusals {
		want := `Bearer resource_metadata="` + metadata + `", error="insufficient_scope", scope="` + tt.scope + `"`
		for _, route := range routes {
			a := f.call(route, tt.authorization, tt.tool, tt.args)
			if a.status != 403 || a.challenge != want || !strings.Contains(a.body, "ACCESS_DENIED") || !strings.Contains(a.body, envelope[route]) {
				t.Errorf("%s on %s: %d %q %s\nwant 403, %q, ACCESS_DENIED", tt.name, route, a.status, a.challenge, a.body, want)
			}
		}
	}
	for _, route := range routes {
		if a := f.call(route, read, "list_tasks", `{}`); a.status != 200 || strings.Contains(a.body, "isError") {
			t.Errorf("read scope, list_tasks on %s: %d %s", route, a.status, a.body)
		}
		if a := f.call(route, full, "add_task", `{"title":"t"}`); a.status != 200 || strings.Contains(a.body, "isError") {
			t.Errorf("full scope, add_task on %s: %d %s", route, a.status, a.body)
		}
	}
}

// TestTenantFromClaim: the tenant is the configured claim's value, so
// tokens of two subjects see two tenants' data; a token whose claim is
// missing or breaks the tenant rule is refused with 403.
func TestTenantFromClaim(t *testing.T) {
	f := newFixture(t, nil)
	alice := "Bearer " + f.token(t, "alice", "toolshed:full")
	bob := "Bearer " + f.token(t, "bob", "toolshed:full")
	if a := f.call("v1", alice, "add_task", `{"title":"alice's"}`); a.status != 200 {
		t.Fatalf("add_task: %d %s", a.status, a.body)
	}
	if a := f.call("v1", alice, "list_tasks", `{}`); !strings.Contains(a.body, "alice's") {
		t.Errorf("alice lists %s", a.body)
	}
	if a := f.call("v1", bob, "list_tasks", `{}`); strings.Contains(a.body, "alice's") {
		t.Errorf("bob sees alice's task: %s", a.body)
	}
	if a := f.call("v1", "Bearer "+f.token(t, "auth0|123", "toolshed:full"), "hello", `{"name":"x"}`); a.status != 403 ||
		!strings.Contains(a.body, "cannot be a tenant") || a.challenge != "" {
		t.Errorf("a sub that is no tenant: %d %q %s", a.status, a.challenge, a.body)
	}

	org := newFixture(t, func(o *config.OAuth) { o.TenantClaim = "org_id" })
	claims := org.iss.Claims(resource, "alice", "toolshed:full")
	claims["org_id"] = "acme"
	if a := org.call("v1", "Bearer "+org.iss.Token(t, claims), "add_task", `{"title":"acme's"}`); a.status != 200 {
		t.Fatalf("org_id tenant: %d %s", a.status, a.body)
	}
	claims["sub"] = "bob"
	if a := org.call("v1", "Bearer "+org.iss.Token(t, claims), "list_tasks", `{}`); !strings.Contains(a.body, "acme's") {
		t.Errorf("another subject of org acme does not see its task: %s", a.body)
	}
	if a := org.call("v1", "Bearer "+org.token(t, "alice", "toolshed:full"), "hello", `{"name":"x"}`); a.status != 403 || !strings.Contains(a.body, `no \"org_id\" claim`) {
		t.Errorf("a token without org_id: %d %s", a.status, a.body)
	}
}
