package tenant_test

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/testenv/tenanttest"
)

func TestValid(t *testing.T) {
	for _, c := range tenanttest.Cases {
		if got := tenant.Valid(c.Tenant); got != c.Valid {
			t.Errorf("%s: Valid(%q) = %v, want %v", c.Name, c.Tenant, got, c.Valid)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range tenanttest.Cases {
		err := tenant.Check(c.Tenant)
		switch {
		case c.Valid && err != nil:
			t.Errorf("%s: Check(%q) = %v", c.Name, c.Tenant, err)
		case !c.Valid && !errors.Is(err, tenant.ErrInvalid):
			t.Errorf("%s: Check(%q) = %v, want an error wrapping ErrInvalid", c.Name, c.Tenant, err)
		}
	}
	err := tenant.Check("a+b")
	for _, part := range []string{`"a+b"`, "1-64 letters, digits, '.', '_' or '-'", "starting with a letter or digit"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("Check(a+b) = %q, want it to say %q", err, part)
		}
	}
}

// FuzzTenant: Valid and Check agree, and a valid tenant stays one segment
// of every key it is part of.
func FuzzTenant(f *testing.F) {
	for _, c := range tenanttest.Cases {
		f.Add(c.Tenant)
	}
	f.Fuzz(func(t *testing.T, s string) {
		valid, err := tenant.Valid(s), tenant.Check(s)
		if valid != (err == nil) {
			t.Fatalf("Valid(%q) = %v but Check = %v", s, valid, err)
		}
		if err != nil && !errors.Is(err, tenant.ErrInvalid) {
			t.Fatalf("Check(%q) = %v, which does not wrap ErrInvalid", s, err)
		}
		if valid && (len(s) > tenant.MaxLen || strings.ContainsAny(s, "#/+") || s == "." || s == "..") {
			t.Fatalf("Valid(%q): a tenant must stay one key segment", s)
		}
	})
}

// TestImportsNothingFromTheModule: the rule sits at the bottom layer, so
// every package can use it without an import cycle.
func TestImportsNothingFromTheModule(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/toolshed/toolshed/") {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}
