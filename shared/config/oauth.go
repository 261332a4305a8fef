package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// OAuth configures Toolshed as an OAuth 2.1 resource server (shared/oauth):
// with an Issuer, every route takes that issuer's access tokens beside API
// keys, and requires one or the other, on loopback too.
type OAuth struct {
	Issuer      string // TOOLSHED_OAUTH_ISSUER, the authorization server's issuer URL ("": no OAuth)
	TenantClaim string // TOOLSHED_OAUTH_TENANT_CLAIM, the access token claim naming the tenant (sub)
	ReadScope   string // TOOLSHED_OAUTH_READ_SCOPE, the scope serving only the read-only tools (toolshed:read)
	FullScope   string // TOOLSHED_OAUTH_FULL_SCOPE, the scope serving every tool (toolshed:full)
	// Audience is TOOLSHED_OAUTH_AUDIENCE, how a token names this resource:
	// AudienceClaim (the default), or AudienceScope for issuers that bind
	// it through scopes instead (Cognito: no "aud", scopes
	// "<resource>/<name>"; see shared/accesstoken).
	Audience string
}

// The values of TOOLSHED_OAUTH_AUDIENCE.
const (
	AudienceClaim = "aud"   // the token's "aud" names the resource
	AudienceScope = "scope" // or, without "aud", its scopes are the resource's
)

// On reports whether access tokens are accepted.
func (o OAuth) On() bool { return o.Issuer != "" }

// readOAuth reads the public URL and the OAuth settings. Deployed, the
// public URL cannot be guessed (the server sees API Gateway's request, not
// the URL a client used), so an issuer needs it; the local server derives
// it from its listen address.
func (c *Config) readOAuth(get func(k, def string) string, inLambda bool) error {
	c.PublicURL = strings.TrimSuffix(get("TOOLSHED_PUBLIC_URL", ""), "/")
	c.OAuth = OAuth{
		Issuer:      get("TOOLSHED_OAUTH_ISSUER", ""),
		TenantClaim: get("TOOLSHED_OAUTH_TENANT_CLAIM", "sub"),
		ReadScope:   get("TOOLSHED_OAUTH_READ_SCOPE", "toolshed:read"),
		FullScope:   get("TOOLSHED_OAUTH_FULL_SCOPE", "toolshed:full"),
		Audience:    get("TOOLSHED_OAUTH_AUDIENCE", AudienceClaim),
	}
	if c.PublicURL != "" {
		if err := checkURL(c.PublicURL, false); err != nil {
			return fmt.Errorf("TOOLSHED_PUBLIC_URL=%q: %w (e.g. https://tools.example.com)", c.PublicURL, err)
		}
	}
	if !c.OAuth.On() {
		return nil
	}
	if err := checkURL(c.OAuth.Issuer, true); err != nil {
		return fmt.Errorf("TOOLSHED_OAUTH_ISSUER=%q: %w", c.OAuth.Issuer, err)
	}
	switch {
	case c.PublicURL == "" && inLambda:
		return errors.New("TOOLSHED_PUBLIC_URL is required with TOOLSHED_OAUTH_ISSUER: tokens are issued for <public URL>/mcp")
	case c.Auth == "off":
		return errors.New("TOOLSHED_AUTH=off contradicts TOOLSHED_OAUTH_ISSUER: with an issuer every request needs a token or an API key")
	case c.OAuth.Audience != AudienceClaim && c.OAuth.Audience != AudienceScope:
		return fmt.Errorf("TOOLSHED_OAUTH_AUDIENCE=%q: use %s (the default) or %s", c.OAuth.Audience, AudienceClaim, AudienceScope)
	case c.OAuth.ReadScope == c.OAuth.FullScope:
		return fmt.Errorf("TOOLSHED_OAUTH_READ_SCOPE and TOOLSHED_OAUTH_FULL_SCOPE are both %q: name two scopes", c.OAuth.FullScope)
	}
	for name, scope := range map[string]string{"TOOLSHED_OAUTH_READ_SCOPE": c.OAuth.ReadScope, "TOOLSHED_OAUTH_FULL_SCOPE": c.OAuth.FullScope} {
		if strings.ContainsAny(scope, " \"\\") {
			return fmt.Errorf("%s=%q: a scope has no spaces, quotes or backslashes (RFC 6749 §3.3)", name, scope)
		}
	}
	return nil
}

// checkURL checks an https URL (http only for a loopback host, for local
// use) without user, query or fragment; withPath allows a path (issuers
// such as Cognito's have one), else the URL is an origin.
func checkURL(raw string, withPath bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())):
		return errors.New("use https (http only on localhost or a loopback address)")
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "#"):
		return errors.New("use a URL with a host and without user, query or fragment")
	case !withPath && u.Path != "":
		return errors.New("use the origin only, without a path")
	}
	return nil
}

func loopbackHost(host string) bool {
	ip, err := netip.ParseAddr(host)
	return strings.EqualFold(host, "localhost") || (err == nil && ip.IsLoopback())
}
