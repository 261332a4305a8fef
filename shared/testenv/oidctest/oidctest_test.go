package oidctest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/accesstoken"
	"github.com/toolshed/toolshed/shared/testenv/oidctest"
)

// TestServer: the server publishes its metadata and keys where a resource
// server finds them, issues JWT access tokens for the resource asked for,
// and keeps tokens of a rotated key verifiable.
func TestServer(t *testing.T) {
	as := oidctest.Start(t, oidctest.Options{})
	const resource = "http://127.0.0.1:1/mcp"
	v := accesstoken.New(accesstoken.Options{Issuer: as.Issuer})
	ctx := context.Background()
	before := as.ClientCredentials(t, resource, "toolshed:read")
	claims, err := v.Verify(ctx, before, resource)
	if err != nil {
		t.Fatalf("a client credentials token: %v", err)
	}
	if claims.Subject != oidctest.MachineID || !slices.Equal(claims.Scopes, []string{"toolshed:read"}) {
		t.Errorf("claims %+v", claims)
	}
	if kid := as.Rotate(t); kid != "as-key-2" {
		t.Errorf("rotated to %q", kid)
	}
	if _, err := v.Verify(ctx, before, resource); err != nil {
		t.Errorf("a token of the old key after rotation: %v", err)
	}
	if !slices.ContainsFunc(as.Requests(), func(l string) bool { return strings.HasPrefix(l, "AS POST /token 200") }) {
		t.Errorf("requests logged: %v", as.Requests())
	}
}
