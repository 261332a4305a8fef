package oauth_test

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// TestReposClaim: an access token's toolshed_repos claim limits it to
// those repositories of its tenant; without the claim, it reads every one;
// a claim that names no valid repository leaves nothing to read.
func TestReposClaim(t *testing.T) {
	iss := issuertest.Start(t)
	rs, err := oauth.New(oauth.Config{PublicURL: publicURL, Keys: auth.Keys{Store: tooltest.BoltStores(t).APIKeys},
		OAuth: config.OAuth{Issuer: iss.URL, TenantClaim: "sub", ReadScope: "toolshed:read", FullScope: "toolshed:full"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		claim any // nil: none
		want  []string
		code  toolerr.Code
	}{
		{"no claim", nil, nil, ""},
		{"a list", []string{"web", "api"}, []string{"api", "web"}, ""},
		{"a space-separated string", "web api web", []string{"api", "web"}, ""},
		{"an empty list", []string{}, nil, toolerr.AccessDenied},
		{"another tenant's repository", []string{"other/web"}, nil, toolerr.AccessDenied},
		{"not names", 42, nil, toolerr.AccessDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := iss.Claims(resource, "alice", "toolshed:full")
			if tt.claim != nil {
				claims[oauth.ReposClaim] = tt.claim
			}
			req := httptest.NewRequest("POST", "/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+iss.Token(t, claims))
			g, err := rs.Authenticate(req)
			if tt.code != "" {
				if te := toolerr.From(err); err == nil || te.Code != tt.code {
					t.Fatalf("grant %+v, %v; want %s", g, err, tt.code)
				}
				return
			}
			if err != nil || g.Tenant != "alice" || !slices.Equal(g.Repos, tt.want) || (g.Repos == nil) != (tt.want == nil) {
				t.Fatalf("grant %+v, %v; want repositories %q", g, err, tt.want)
			}
		})
	}
}
