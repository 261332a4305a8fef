package oauth_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// TestIssuerUnreachable: a token that cannot be checked because the
// issuer's keys cannot be fetched is neither accepted nor called invalid:
// 502 UPSTREAM_ERROR, and API keys keep working.
func TestIssuerUnreachable(t *testing.T) {
	stores := tooltest.BoltStores(t)
	key, _, err := auth.Create(t.Context(), stores.APIKeys, "keyed", "laptop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := oauth.New(oauth.Config{PublicURL: publicURL, Keys: auth.Keys{Store: stores.APIKeys},
		OAuth: config.OAuth{Issuer: "http://127.0.0.1:1", TenantClaim: "sub", ReadScope: "r", FullScope: "f"}})
	if err != nil {
		t.Fatal(err)
	}
	iss := issuertest.Start(t)
	tokenReq := httptest.NewRequest("POST", "/mcp", nil)
	tokenReq.Header.Set("Authorization", "Bearer "+iss.Token(t, iss.Claims(resource, "alice", "f")))
	if _, err := rs.Authenticate(tokenReq); toolerr.From(err).Code != toolerr.UpstreamError {
		t.Errorf("token while the issuer is down: %v, want UPSTREAM_ERROR", err)
	}
	keyReq := httptest.NewRequest("POST", "/mcp", nil)
	keyReq.Header.Set("Authorization", "Bearer "+key)
	if g, err := rs.Authenticate(keyReq); err != nil || g.Tenant != "keyed" {
		t.Errorf("API key while the issuer is down: %+v, %v", g, err)
	}
}

// FuzzAuthorization feeds Authorization headers to the resource server,
// the network edge of token parsing: whatever comes in, nothing panics, no
// made-up credential is accepted, and every refusal is a 401 with a
// challenge pointing at the metadata. The seeds (run by go test) are a
// valid token cut and bent, hostile tokens and malformed headers.
func FuzzAuthorization(f *testing.F) {
	iss := issuertest.Start(f)
	stores := tooltest.BoltStores(f)
	rs, err := oauth.New(oauth.Config{PublicURL: publicURL, Keys: auth.Keys{Store: stores.APIKeys},
		OAuth: config.OAuth{Issuer: iss.URL, TenantClaim: "sub", ReadScope: "toolshed:read", FullScope: "toolshed:full"}})
	if err != nil {
		f.Fatal(err)
	}
	valid := iss.Token(f, iss.Claims("https://other.example/mcp", "alice", "toolshed:full"))
	parts := strings.Split(valid, ".")
	for _, seed := range []string{
		"Bearer " + valid, "Bearer " + parts[0] + "." + parts[1] + ".", "Bearer " + parts[0] + "..", "Bearer " + parts[1],
		"Bearer " + valid[:len(valid)/2], "bearer  " + valid + " ", "Bearer " + strings.ToUpper(valid),
		"Bearer " + issuertest.Unsigned(f, "key-1", iss.Claims(resource, "alice")),
		"Bearer " + iss.HMACWithPublicKey(f, iss.Claims(resource, "alice")),
		"Bearer tsk_", "Bearer tsk_" + valid, "Bearer", "Bearer ", "Basic x", "", "Bearer a.b.c.d.e",
		"Bearer eyJhbGciOiJSUzI1NiJ9.e30.", "Bearer \x00\xff", "Bearer " + strings.Repeat("e", 20000),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, authorization string) {
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Header["Authorization"] = []string{authorization}
		g, err := rs.Authenticate(req)
		te := toolerr.From(err)
		if err == nil || te.Code != toolerr.Unauthorized || !strings.HasPrefix(te.Challenge, `Bearer resource_metadata="`+metadata+`"`) {
			t.Fatalf("Authorization %q: %+v, %v (challenge %q), want a 401 with a challenge", authorization, g, err, te.Challenge)
		}
	})
}
