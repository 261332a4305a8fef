// Package oauth makes Toolshed an OAuth 2.1 resource server, as the MCP
// authorization specification asks of a remote server, beside API keys:
//
//   - The protected resource metadata (RFC 9728) names the resource,
//     <public URL>/mcp, the issuer that grants access to it, the scopes and
//     the bearer method (Metadata; httpapi serves it at
//     /.well-known/oauth-protected-resource/mcp and at the root form).
//   - Every request needs a bearer credential: an API key (tsk_…, checked
//     by the key authenticator it is given) or an access token of the
//     issuer, a JWT checked by shared/accesstoken with this resource as its
//     audience. The token goes no further than that check: the tools get
//     the tenant, never the credential.
//   - A refusal says how to authenticate: 401 with WWW-Authenticate: Bearer
//     resource_metadata="…" (and error="invalid_token" when a credential
//     was sent), and for a tool beyond the token's scopes, 403 with
//     error="insufficient_scope" and the scope it needs.
//   - An issuer that binds tokens to the resource through scopes rather
//     than "aud" (Cognito) is taken with TOOLSHED_OAUTH_AUDIENCE=scope: a
//     token without "aud" must then carry a scope "<resource>/<name>", and
//     the read and full scopes must both be such scopes.
//   - The tenant is a claim of the token (sub unless configured), held to
//     the one tenant rule (shared/tenant).
//   - Scopes: the full scope serves every tool; the read scope only the
//     tools annotated readOnlyHint (the others are left out of tools/list
//     and refused, through the request's caller.ToolFilter).
//   - Repositories: a token with the claim ReposClaim (a list of names,
//     or one space-separated string) reads only those of its tenant's
//     repositories (shared/reposcope); without it, every one.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolshed/toolshed/shared/accesstoken"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Config builds a ResourceServer.
type Config struct {
	PublicURL string       // the server's public origin; the resource is PublicURL + "/mcp"
	OAuth     config.OAuth // the issuer, tenant claim and scope names
	// Keys checks API keys, which keep working beside tokens (auth.Keys).
	Keys httpapi.Authenticator
	// Tools are the served tools' contracts: their readOnlyHint decides
	// what the read scope serves.
	Tools  []*schema.Contract
	Client *http.Client // fetches the issuer's metadata and keys (nil: 5 s timeout)
	Log    *slog.Logger
}

// ResourceServer authenticates requests with access tokens or API keys.
// It is an httpapi.Authenticator.
type ResourceServer struct {
	resource    string // the audience tokens must name
	metadataURL string // where the resource's metadata is
	settings    config.OAuth
	tokens      *accesstoken.Verifier
	keys        httpapi.Authenticator
	readOnly    map[string]bool // canonical tool name → readOnlyHint
	log         *slog.Logger
}

var _ httpapi.Authenticator = (*ResourceServer)(nil)

// New returns the resource server of cfg. It fetches nothing yet (see Warm).
func New(cfg Config) (*ResourceServer, error) {
	if !cfg.OAuth.On() || cfg.PublicURL == "" || cfg.Keys == nil {
		return nil, errors.New("oauth: an issuer, the public URL and the API key authenticator are required")
	}
	resource := cfg.PublicURL + "/mcp"
	scopeAudience := cfg.OAuth.Audience == config.AudienceScope
	if scopeAudience && !(resourceScope(cfg.OAuth.ReadScope, resource) && resourceScope(cfg.OAuth.FullScope, resource)) {
		return nil, fmt.Errorf("oauth: with %s=%s the read and full scopes must be %s/<name>, not %q and %q",
			config.OAuthAudience.Name(), config.AudienceScope, resource, cfg.OAuth.ReadScope, cfg.OAuth.FullScope)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	readOnly := map[string]bool{}
	for _, c := range cfg.Tools {
		readOnly[c.Name] = c.Annotations.ReadOnlyHint
	}
	return &ResourceServer{
		resource:    resource,
		metadataURL: cfg.PublicURL + httpapi.MetadataPath,
		settings:    cfg.OAuth,
		tokens: accesstoken.New(accesstoken.Options{Issuer: cfg.OAuth.Issuer, Client: cfg.Client,
			ScopeAudience: scopeAudience}),
		keys:     cfg.Keys,
		readOnly: readOnly,
		log:      cfg.Log,
	}, nil
}

// resourceScope reports whether scope is one of resource's,
// "<resource>/<name>": with the audience bound through scopes, every scope
// that serves tools must be, so that no token of another resource can
// carry one.
func resourceScope(scope, resource string) bool {
	name, ok := strings.CutPrefix(scope, resource+"/")
	return ok && name != ""
}

// Metadata is the protected resource metadata (RFC 9728 §2).
func (s *ResourceServer) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               s.resource,
		AuthorizationServers:   []string{s.settings.Issuer},
		ScopesSupported:        []string{s.settings.ReadScope, s.settings.FullScope},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Toolshed",
	}
}

// Warm fetches the issuer's keys ahead of the first token and logs how
// that went; a failure is only logged: the first token tries again.
func (s *ResourceServer) Warm(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := s.tokens.Warm(ctx)
	if err != nil {
		s.log.Warn("OAuth issuer's keys not fetched yet", "issuer", s.settings.Issuer, "error", err)
		return
	}
	s.log.Info("OAuth issuer's keys fetched", "issuer", s.settings.Issuer, "keys", n, "resource", s.resource)
}

// Authenticate implements httpapi.Authenticator: an API key goes to the
// key authenticator, anything else must be a valid access token.
func (s *ResourceServer) Authenticate(r *http.Request) (caller.Grant, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return caller.Grant{}, s.unauthorized("", toolerr.New(toolerr.Unauthorized,
			"missing credentials: send Authorization: Bearer <access token or API key>"))
	}
	credential, err := auth.BearerToken(header)
	if err != nil {
		return caller.Grant{}, s.unauthorized("", err)
	}
	if strings.HasPrefix(credential, auth.KeyPrefix) {
		g, err := s.keys.Authenticate(r)
		return g, s.unauthorized("invalid_token", err)
	}
	claims, err := s.tokens.Verify(r.Context(), credential, s.resource)
	switch {
	case errors.Is(err, accesstoken.ErrInvalid):
		return caller.Grant{}, s.unauthorized("invalid_token", toolerr.New(toolerr.Unauthorized, "%v", err))
	case errors.Is(err, accesstoken.ErrUnavailable):
		s.log.Warn("access token not checked", "issuer", s.settings.Issuer, "error", err)
		e := toolerr.New(toolerr.UpstreamError, "the access token could not be checked: the authorization server's signing keys are unavailable; try again")
		e.Cause = err
		return caller.Grant{}, e
	case err != nil:
		return caller.Grant{}, fmt.Errorf("check access token: %w", err)
	}
	owner, err := s.tenant(claims)
	if err != nil {
		return caller.Grant{}, err
	}
	repos, err := reposOf(claims)
	if err != nil {
		return caller.Grant{}, err
	}
	return caller.Grant{Tenant: owner, Tools: s.scopeFilter(claims), Repos: repos}, nil
}

// ReposClaim is the access token claim that limits a token to some
// repositories of its tenant: an issuer sets it for the clients it limits.
const ReposClaim = "toolshed_repos"

// reposOf returns the repositories a token is limited to (nil: every
// one). A claim that names no valid repository leaves the token nothing
// to read: ACCESS_DENIED, rather than every repository.
func reposOf(c accesstoken.Claims) ([]string, error) {
	names, ok := c.Words(ReposClaim)
	if !ok {
		return nil, nil
	}
	repos, err := reposcope.Limit(names)
	if err == nil && repos == nil {
		err = errors.New("it names none")
	}
	if err != nil {
		return nil, toolerr.New(toolerr.AccessDenied, "the access token's %q claim does not name repositories: %v", ReposClaim, err)
	}
	return repos, nil
}

// unauthorized gives an UNAUTHORIZED refusal its challenge, with the
// error code ("" when no credential was sent, RFC 6750 §3.1); other
// errors pass unchanged.
func (s *ResourceServer) unauthorized(code string, err error) error {
	te := toolerr.From(err)
	if te == nil || te.Code != toolerr.Unauthorized {
		return err
	}
	c := *te
	c.Challenge = s.challenge(code, "")
	return &c
}

// challenge is a Bearer WWW-Authenticate value (RFC 6750 §3) pointing at
// the resource's metadata (RFC 9728 §5.1), with the error code and the
// scope needed when given. No value can hold a quote or a backslash: the
// URL is an origin and a path, the scopes are checked by config.
func (s *ResourceServer) challenge(code, scope string) string {
	c := `Bearer resource_metadata="` + s.metadataURL + `"`
	if code != "" {
		c += `, error="` + code + `"`
	}
	if scope != "" {
		c += `, scope="` + scope + `"`
	}
	return c
}

// tenant is the tenant the token names in the configured claim. A token
// that names none, or one the tenant rule refuses, is valid but cannot be
// served: ACCESS_DENIED, without a challenge (another token of the same
// user would name the same).
func (s *ResourceServer) tenant(c accesstoken.Claims) (string, error) {
	claim := s.settings.TenantClaim
	v, ok := c.String(claim)
	if !ok {
		return "", toolerr.New(toolerr.AccessDenied,
			"the access token has no %q claim to name its tenant (the server's TOOLSHED_OAUTH_TENANT_CLAIM)", claim)
	}
	if err := tenant.Check(v); err != nil {
		return "", toolerr.New(toolerr.AccessDenied,
			"the access token's %q claim cannot be a tenant: %v (the server's TOOLSHED_OAUTH_TENANT_CLAIM may name another claim)", claim, err)
	}
	return v, nil
}

// scopeFilter returns the tools a token's scopes serve: every tool with
// the full scope (nil: no filter), the read-only ones with the read scope,
// none without either.
func (s *ResourceServer) scopeFilter(c accesstoken.Claims) caller.ToolFilter {
	if c.HasScope(s.settings.FullScope) {
		return nil
	}
	read := c.HasScope(s.settings.ReadScope)
	return func(tool string) error {
		if read && s.readOnly[tool] {
			return nil
		}
		need := s.settings.FullScope
		if s.readOnly[tool] {
			need = s.settings.ReadScope
		}
		e := toolerr.New(toolerr.AccessDenied, "tool %q needs scope %q, which this access token does not grant", tool, need).
			With("requiredScope", need)
		e.Challenge = s.challenge("insufficient_scope", need)
		return e
	}
}
