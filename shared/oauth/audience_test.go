package oauth_test

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/oauth"
)

// cognitoScopes is the fixture's OAuth settings as a Cognito deployment
// makes them: the audience bound through scopes named after the resource.
func cognitoScopes(o *config.OAuth) {
	o.Audience = config.AudienceScope
	o.ReadScope = resource + "/toolshed:read"
	o.FullScope = resource + "/toolshed:full"
}

// cognitoToken is an access token as Cognito issues it: no "aud", a
// client_id, and the resource server's scopes.
func cognitoToken(t *testing.T, f fixture, scopes ...string) string {
	claims := f.iss.Claims(resource, "alice", scopes...)
	delete(claims, "aud")
	return "Bearer " + f.iss.Token(t, claims)
}

// TestScopeAudience: with TOOLSHED_OAUTH_AUDIENCE=scope a token without
// "aud" is served by its resource scopes on every route, and refused
// without one; the default mode refuses the same tokens (TestRefusedTokens
// covers it on every route: "no audience").
func TestScopeAudience(t *testing.T) {
	f := newFixture(t, cognitoScopes)
	want := `Bearer resource_metadata="` + metadata + `", error="invalid_token"`
	tests := []struct {
		name, authorization, tool string
		status                    int
	}{
		{"full scope", cognitoToken(t, f, "openid", resource+"/toolshed:full"), "add_task", 200},
		{"read scope, a read-only tool", cognitoToken(t, f, resource+"/toolshed:read"), "list_tasks", 200},
		{"read scope, a tool that writes", cognitoToken(t, f, resource+"/toolshed:read"), "add_task", 403},
		{"bare scope names", cognitoToken(t, f, "toolshed:full"), "hello", 401},
		{"another resource's scope", cognitoToken(t, f, "https://other.example/mcp/toolshed:full"), "hello", 401},
		{"no scope", cognitoToken(t, f), "hello", 401},
		{"another audience", "Bearer " + f.iss.Token(t, f.iss.Claims("https://other.example/mcp", "alice", resource+"/toolshed:full")), "hello", 401},
		{"an API key", "Bearer " + f.key, "add_task", 200},
	}
	args := map[string]string{"add_task": `{"title":"t"}`, "list_tasks": `{}`, "hello": `{"name":"x"}`}
	for _, tt := range tests {
		for _, route := range routes {
			a := f.call(route, tt.authorization, tt.tool, args[tt.tool])
			if a.status != tt.status || strings.Contains(a.body, "isError") || (tt.status == 401 && a.challenge != want) {
				t.Errorf("%s, %s on %s: %d %q %s; want %d", tt.name, tt.tool, route, a.status, a.challenge, a.body, tt.status)
			}
		}
	}
}

// TestScopeAudienceNeedsResourceScopes: the scope mode refuses scopes that
// are not the resource's, which a token of any resource could carry.
func TestScopeAudienceNeedsResourceScopes(t *testing.T) {
	o := config.OAuth{Issuer: "https://idp.example", TenantClaim: "sub", ReadScope: "toolshed:read",
		FullScope: resource + "/toolshed:full", Audience: config.AudienceScope}
	_, err := oauth.New(oauth.Config{PublicURL: publicURL, OAuth: o, Keys: auth.Keys{}})
	if err == nil || !strings.Contains(err.Error(), "must be "+resource+"/<name>") {
		t.Errorf("got %v, want the bare read scope refused", err)
	}
}
