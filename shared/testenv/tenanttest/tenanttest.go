// Package tenanttest is the table of tenant strings that every place
// taking a tenant is tested with: edge cases package tenant accepts and
// ones it refuses. Agree runs a place's check over the table and fails the
// test where it accepts a string package tenant refuses, or the reverse.
package tenanttest

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/tenant"
)

// Case is one tenant string and whether the rule accepts it.
type Case struct {
	Name   string
	Tenant string
	Valid  bool
}

// Cases are the edge cases of the tenant rule.
var Cases = []Case{
	{"one letter", "a", true},
	{"one digit", "7", true},
	{"upper case", "ACME", true},
	{"longest", "a" + strings.Repeat("0", tenant.MaxLen-1), true},
	{"dot", "acme.corp", true},
	{"underscore", "acme_corp", true},
	{"hyphen", "acme-corp", true},
	{"all punctuation", "a._-", true},
	{"two dots inside", "a..b", true},
	{"a local index key", "local-3f2a9c1b0d4e", true},
	{"empty", "", false},
	{"one too long", "a" + strings.Repeat("0", tenant.MaxLen), false},
	{"plus", "a+b", false},
	{"key separator", "a#b", false},
	{"slash", "a/b", false},
	{"backslash", `a\b`, false},
	{"leading hyphen", "-a", false},
	{"leading dot", ".a", false},
	{"leading underscore", "_a", false},
	{"dot dot", "..", false},
	{"unicode letter", "acmé", false},
	{"space inside", "a b", false},
	{"leading space", " a", false},
	{"trailing newline", "a\n", false},
	{"percent", "a%23b", false},
	{"colon", "a:b", false},
	{"NUL", "a\x00", false},
}

// Agree fails t for every case where accepts disagrees with tenant.Valid.
// place names the check in failure messages.
func Agree(t *testing.T, place string, accepts func(t *testing.T, s string) bool) {
	t.Helper()
	for _, c := range Cases {
		if got, want := accepts(t, c.Tenant), tenant.Valid(c.Tenant); got != want {
			t.Errorf("%s: %s %q accepted = %v, but tenant.Valid = %v", place, c.Name, c.Tenant, got, want)
		}
	}
}
