package reposcope_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name     string
		tenant   string
		allowed  []string
		arg, def string
		want     reposcope.Ref
		code     toolerr.Code // "" for success
	}{
		{"the default repository", "acme", nil, "", "default", reposcope.Ref{Tenant: "acme", Name: "default"}, ""},
		{"a local default has its folder's name", "local", nil, "", "toolshed", reposcope.Ref{Tenant: "local", Name: "toolshed"}, ""},
		{"named", "acme", nil, "web", "default", reposcope.Ref{Tenant: "acme", Name: "web"}, ""},
		// Whether it exists is the source's to say (repo.OpenFor).
		{"unknown names resolve", "acme", nil, "nope", "default", reposcope.Ref{Tenant: "acme", Name: "nope"}, ""},
		{"limited, allowed", "acme", []string{"api", "web"}, "web", "default", reposcope.Ref{Tenant: "acme", Name: "web"}, ""},
		{"limited, another", "acme", []string{"api"}, "web", "default", reposcope.Ref{}, toolerr.ResourceNotFound},
		// A limited caller's default is the source's when it may read it,
		// else the first repository it may read.
		{"limited, the default not among them", "acme", []string{"api", "zeta"}, "", "web", reposcope.Ref{Tenant: "acme", Name: "api"}, ""},
		{"limited, the default among them", "acme", []string{"api", "web"}, "", "web", reposcope.Ref{Tenant: "acme", Name: "web"}, ""},
		{"limited to the default", "acme", []string{"default"}, "", "default", reposcope.Ref{Tenant: "acme", Name: "default"}, ""},
		// "default" is the caller's default repository, whatever its name.
		{"default names the default", "local", nil, "default", "toolshed", reposcope.Ref{Tenant: "local", Name: "toolshed"}, ""},
		{"default names a limited caller's default", "acme", []string{"api"}, "default", "web", reposcope.Ref{Tenant: "acme", Name: "api"}, ""},
		{"limited to nothing", "acme", []string{}, "", "web", reposcope.Ref{}, toolerr.ResourceNotFound},
		// The argument names a repository of the caller's tenant, never of another.
		{"cross-tenant", "acme", nil, "other/web", "default", reposcope.Ref{}, toolerr.InvalidInput},
		{"cross-tenant, traversal", "acme", nil, "../other", "default", reposcope.Ref{}, toolerr.InvalidInput},
		{"an empty limit is none", "acme", nil, "web", "default", reposcope.Ref{Tenant: "acme", Name: "web"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reposcope.Resolve(tt.tenant, tt.allowed, tt.arg, tt.def)
			if tt.code == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if te := toolerr.From(err); err == nil || te.Code != tt.code {
				t.Fatalf("Resolve = %+v, %v; want %s", got, err, tt.code)
			}
		})
	}
}

// TestNotFoundRevealsNothing: a repository the caller may not read answers
// exactly as one that does not exist, and names only what the caller
// named: never the source's default repository.
func TestNotFoundRevealsNothing(t *testing.T) {
	_, hidden := reposcope.Resolve("acme", []string{"api"}, "web", "default")
	missing := reposcope.NotFound("web")
	if h := toolerr.From(hidden); h.Code != missing.Code || h.Message != missing.Message || len(h.Details) != len(missing.Details) {
		t.Errorf("hidden %+v, missing %+v", h, missing)
	}
	for _, arg := range []string{"", "default"} {
		_, err := reposcope.Resolve("acme", []string{}, arg, "secretweb")
		if te := toolerr.From(err); err == nil || strings.Contains(fmt.Sprint(te.Message, te.Details), "secretweb") {
			t.Errorf("Resolve(%q) of a caller limited to nothing: %v", arg, err)
		}
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		ref reposcope.Ref
		key string
	}{
		{reposcope.DefaultOf("acme"), "acme"},
		{reposcope.Ref{Tenant: "acme", Name: "web"}, "acme/web"},
		{reposcope.Ref{Tenant: "a.b_c-1", Name: "x.y"}, "a.b_c-1/x.y"},
	}
	for _, tt := range tests {
		if got := tt.ref.Key(); got != tt.key {
			t.Errorf("%+v.Key() = %q, want %q", tt.ref, got, tt.key)
		}
		if got, ok := reposcope.ParseKey(tt.key); !ok || got != tt.ref {
			t.Errorf("ParseKey(%q) = %+v, %v", tt.key, got, ok)
		}
	}
	for _, bad := range []string{"", "acme/", "/web", "acme/web/x", "acme/default", "../acme", "acme/..", "a b", "acme/.hidden"} {
		if r, ok := reposcope.ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) = %+v, want refused", bad, r)
		}
	}
	if err := reposcope.CheckKey("a#b/web"); !errors.Is(err, tenant.ErrInvalid) {
		t.Errorf("CheckKey of a bad tenant: %v", err)
	}
}

func TestFallback(t *testing.T) {
	tests := []struct {
		ref        reposcope.Ref
		deployment string
		want       reposcope.Ref
		ok         bool
	}{
		{reposcope.DefaultOf("acme"), "shared", reposcope.DefaultOf("shared"), true},
		{reposcope.DefaultOf("acme"), "", reposcope.Ref{}, false},
		{reposcope.DefaultOf("shared"), "shared", reposcope.Ref{}, false},
		// Only a tenant's default repository falls back: named ones are its own.
		{reposcope.Ref{Tenant: "acme", Name: "web"}, "shared", reposcope.Ref{}, false},
	}
	for _, tt := range tests {
		if got, ok := reposcope.Fallback(tt.ref, tt.deployment); got != tt.want || ok != tt.ok {
			t.Errorf("Fallback(%+v, %q) = %+v, %v", tt.ref, tt.deployment, got, ok)
		}
	}
}

func TestParseList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"  ", nil, false},
		{"web", []string{"web"}, false},
		{"web, api,web", []string{"api", "web"}, false},
		{"web,", nil, true},
		{"a/b", nil, true},
		{"acme/web", nil, true},
	}
	for _, tt := range tests {
		got, err := reposcope.ParseList(tt.in)
		if (err != nil) != tt.bad || !slices.Equal(got, tt.want) {
			t.Errorf("ParseList(%q) = %q, %v", tt.in, got, err)
		}
	}
}
