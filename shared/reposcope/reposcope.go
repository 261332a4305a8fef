// Package reposcope decides which repository a call reads. A tenant has
// any number of named repositories; every repository tool takes an
// optional "repo" argument, and a credential (an API key, an OAuth access
// token) may be limited to some repositories. Resolve turns the caller
// and the argument into a Ref, the one answer to "which repository", and
// Ref.Key into the folder that repository's snapshots and indexes live in,
// so no tool builds a key itself.
//
// Names follow the tenant rule (shared/tenant: 1-64 letters, digits, '.',
// '_' and '-', starting with a letter or digit). Deployed, a tenant's
// repository named Default keeps the layout from before repositories had
// names (snapshots/<tenant>/current.json, indexes/<tenant>/…); any other
// lives one folder down (snapshots/<tenant>/<name>/…).
//
// The name Default ("default") always means the caller's default
// repository (DefaultFor), in a tool's "repo" argument as in a resource
// URI (repo://default/…); only a source's default repository may carry
// it as its name (the deployed layout's; repo.LocalRepos refuses it for
// any other), so the name and the alias never disagree.
//
// A repository the credential may not read answers exactly as one that
// does not exist (RESOURCE_NOT_FOUND, NotFound), so a limited caller
// cannot learn which other repositories there are; its default is one it
// may read, so it never meets another's name.
package reposcope

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Default names the caller's default repository wherever a repository is
// named (DefaultFor), and is the name of a tenant's default repository
// where names come from the deployment's layout (S3 snapshots); the local
// server names its repositories itself (the first one is the default).
const Default = "default"

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid repository name")

// Check returns nil for a valid repository name, and otherwise an error
// wrapping ErrInvalid that says what a name may be.
func Check(name string) error {
	if tenant.Valid(name) {
		return nil
	}
	return fmt.Errorf("%w %q: use 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalid, name, tenant.MaxLen)
}

// Ref names one repository of one tenant.
type Ref struct {
	Tenant string
	Name   string
}

// DefaultOf is the default repository of tenant.
func DefaultOf(tenant string) Ref { return Ref{Tenant: tenant, Name: Default} }

// Fallback is the repository read in place of r when r has no snapshot
// (or index): for a tenant's default repository, the default repository of
// the deployment's default tenant (TOOLSHED_DEFAULT_REPO, "" for none);
// false for any other repository.
func Fallback(r Ref, deploymentDefault string) (Ref, bool) {
	if r.Name != Default || deploymentDefault == "" || deploymentDefault == r.Tenant {
		return Ref{}, false
	}
	return DefaultOf(deploymentDefault), true
}

// Key is the folder of the repository's snapshots and indexes: the tenant
// for its Default repository, <tenant>/<name> for any other.
func (r Ref) Key() string {
	if r.Name == Default {
		return r.Tenant
	}
	return r.Tenant + "/" + r.Name
}

// Check returns nil when both the tenant and the name are valid.
func (r Ref) Check() error {
	if err := tenant.Check(r.Tenant); err != nil {
		return err
	}
	return Check(r.Name)
}

// String names the repository in messages and logs: <tenant>/<name>.
func (r Ref) String() string { return r.Tenant + "/" + r.Name }

// ParseKey is the inverse of Ref.Key: the repository of a folder, or false
// when key is not one.
func ParseKey(key string) (Ref, bool) {
	if CheckKey(key) != nil {
		return Ref{}, false
	}
	owner, name, named := strings.Cut(key, "/")
	if !named {
		name = Default
	}
	return Ref{Tenant: owner, Name: name}, true
}

// CheckKey returns nil when key is a repository's folder (Ref.Key): a
// tenant (an error wrapping tenant.ErrInvalid otherwise), then, for a
// named repository, "/" and a name other than Default.
func CheckKey(key string) error {
	owner, name, named := strings.Cut(key, "/")
	if err := tenant.Check(owner); err != nil {
		return fmt.Errorf("repository key %q: %w", key, err)
	}
	if !named {
		return nil
	}
	if err := Check(name); err != nil {
		return fmt.Errorf("repository key %q: %w", key, err)
	}
	if name == Default {
		return fmt.Errorf("repository key %q: %w: the tenant's default repository is %q", key, ErrInvalid, owner)
	}
	return nil
}

// Resolve returns the repository a call of tenant reads: the one named by
// arg, or the caller's default one (DefaultFor, def being the source's)
// when arg is "" or Default. allowed (a call's Repos) limits it to some
// repositories (nil: every one); any other answers as a repository that
// does not exist, under the name the caller gave (Default when it gave
// none), so the answer names no repository the caller did not.
func Resolve(tenant string, allowed []string, arg, def string) (Ref, error) {
	if arg != "" {
		if err := Check(arg); err != nil {
			return Ref{}, toolerr.Field("repo", "%v", err)
		}
	}
	name := arg
	if arg == "" || arg == Default {
		name = DefaultFor(allowed, def)
	}
	if !Allows(allowed, name) {
		return Ref{}, NotFound(cmp.Or(arg, Default))
	}
	return Ref{Tenant: tenant, Name: name}, nil
}

// DefaultFor is the default repository of a caller limited to allowed
// (nil: every repository; a Limit, so sorted) when the source's default
// is def: def when the caller may read it, else the first repository it
// may read.
func DefaultFor(allowed []string, def string) string {
	if Allows(allowed, def) || len(allowed) == 0 {
		return def
	}
	return allowed[0]
}

// Allows reports whether a caller limited to allowed (nil: every
// repository) may read the repository name.
func Allows(allowed []string, name string) bool {
	return allowed == nil || slices.Contains(allowed, name)
}

// NotFound is the answer for a repository that does not exist or that the
// caller may not read: the same in both cases.
func NotFound(name string) *toolerr.Error {
	return toolerr.New(toolerr.ResourceNotFound, "No repository %q: list_repos lists the repositories you can read", name).
		With("repo", name)
}

// Limit returns the limit of a credential to the repositories names: the
// valid names, sorted, without repeats; nil (no limit) for none.
func Limit(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	for _, n := range names {
		if err := Check(n); err != nil {
			return nil, err
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(names))), nil
}

// ParseList reads a comma-separated list of repository names ("a, b"), as
// apikeys -repos takes them and the authorizer passes them on, into a
// Limit; "" is no limit.
func ParseList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	names := strings.Split(s, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	return Limit(names)
}
