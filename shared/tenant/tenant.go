// Package tenant holds the one rule for tenant names. A tenant names the
// owner of every stored item and becomes part of keys and paths (store
// keys joined with '#', snapshots/<tenant>/, indexes/<tenant>/,
// workspace/<tenant>/), so every place that takes a tenant (API keys, the
// tool pipeline, repository snapshots, context_search's indexes, file-io
// workspaces, the configuration) checks it with this package, and a tenant
// accepted by one is accepted by all.
//
// A tenant is 1 to MaxLen ASCII letters, digits, '.', '_' and '-',
// starting with a letter or digit.
//
// The package sits at the bottom layer: it imports nothing from the module.
package tenant

import (
	"errors"
	"fmt"
)

// MaxLen is the most bytes (and characters) a tenant may have.
const MaxLen = 64

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid tenant")

// Valid reports whether s can be used as a tenant.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Check returns nil for a valid tenant, and otherwise an error wrapping
// ErrInvalid that names s and says what a tenant may be.
func Check(s string) error {
	if Valid(s) {
		return nil
	}
	return fmt.Errorf("%w %q: use 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalid, s, MaxLen)
}
