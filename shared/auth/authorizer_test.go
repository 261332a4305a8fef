package auth_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/store/boltstore"
)

// authorizerRequest is a real API Gateway authorizer event (the events
// the functions answer are kept in shared/lambdaevent/testdata), its
// header "Authorization: Bearer KEY_PLACEHOLDER".
func authorizerRequest(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "lambdaevent", "testdata", "authorizer-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAuthorizer(t *testing.T) {
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "keys.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := db.Stores().APIKeys
	ctx := context.Background()
	good, _, err := auth.Create(ctx, keys, "acme", "ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	revoked, rec, _ := auth.Create(ctx, keys, "acme", "old", time.Now())
	if _, err := keys.Revoke(ctx, rec.Hash, time.Now()); err != nil {
		t.Fatal(err)
	}
	a := auth.Authorizer{Keys: keys}
	tests := []struct {
		header     string
		wantTenant string
		wantErr    string // the reason a refusal carries on /mcp
	}{
		{"Bearer " + good, "acme", ""},
		{"bearer " + good, "acme", ""},
		{"Bearer " + revoked, "", `API key "old" was revoked`},
		{"Bearer tsk_nope", "", "unknown API key"},
		{"Basic dXNlcjpwYXNz", "", "malformed Authorization header"},
		{"Bearer ", "", "malformed Authorization header"},
		{"", "", "missing API key"},
	}
	for _, tt := range tests {
		// A refusal is final on a tool's routes and passes, with its
		// reason, to the MCP endpoint's function.
		for _, route := range []string{"POST /v1/tools/hello", "POST /mcp/tool/hello", "POST /mcp"} {
			raw := strings.ReplaceAll(string(authorizerRequest(t)), "Bearer KEY_PLACEHOLDER", tt.header)
			var req events.APIGatewayV2CustomAuthorizerV2Request
			if err := json.Unmarshal([]byte(raw), &req); err != nil {
				t.Fatal(err)
			}
			req.RouteKey = route
			if tt.header == "" {
				req.IdentitySource = nil
				delete(req.Headers, "authorization")
			}
			resp, err := a.Handle(ctx, req)
			if err != nil {
				t.Fatalf("%q on %s: %v", tt.header, route, err)
			}
			tenant, _ := resp.Context[auth.ContextTenant].(string)
			msg, _ := resp.Context[auth.ContextError].(string)
			var ok bool
			switch {
			case tt.wantTenant != "":
				ok = resp.IsAuthorized && tenant == tt.wantTenant && len(resp.Context) == 1
			case route == "POST /mcp":
				ok = resp.IsAuthorized && strings.HasPrefix(msg, tt.wantErr) && len(resp.Context) == 1
			default:
				ok = !resp.IsAuthorized && len(resp.Context) == 0
			}
			if !ok {
				t.Errorf("%q on %s: authorized %v, context %v; want tenant %q or refusal %q",
					tt.header, route, resp.IsAuthorized, resp.Context, tt.wantTenant, tt.wantErr)
			}
		}
	}
}

func TestPassesRefusals(t *testing.T) {
	for route, want := range map[string]bool{
		"POST /mcp": true, "GET /mcp": true, "DELETE /mcp": true,
		"POST /mcp/tool/hello": false, "POST /v1/tools/hello": false, "POST /v1/tools/mcp": false, "GET /healthz": false,
	} {
		if got := auth.PassesRefusals(route); got != want {
			t.Errorf("PassesRefusals(%q) = %v, want %v", route, got, want)
		}
	}
}
