package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/toolshed/toolshed/shared/settings"
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
	Audience Audience
}

// On reports whether access tokens are accepted.
func (o OAuth) On() bool { return o.Issuer != "" }

// readOAuth reads the OAuth settings.
func readOAuth(r *settings.Reader) OAuth {
	return OAuth{
		Issuer:      settings.Read(r, OAuthIssuer),
		TenantClaim: settings.Read(r, OAuthTenantClaim),
		ReadScope:   settings.Read(r, OAuthReadScope),
		FullScope:   settings.Read(r, OAuthFullScope),
		Audience:    settings.Read(r, OAuthAudience),
	}
}

// checkOAuth refuses OAuth settings that contradict one another or the
// others. Deployed, the public URL cannot be guessed (the server sees API
// Gateway's request, not the URL a client used), so an issuer needs it;
// the local server derives it from its listen address.
func (c *Config) checkOAuth(inLambda bool) error {
	if !c.OAuth.On() {
		return nil
	}
	switch {
	case c.PublicURL == "" && inLambda:
		return fmt.Errorf("%s is required with %s: tokens are issued for <public URL>/mcp", PublicURL.Name(), OAuthIssuer.Name())
	case c.Auth == AuthOff:
		return fmt.Errorf("%s=%s contradicts %s: with an issuer every request needs a token or an API key", Auth.Name(), AuthOff, OAuthIssuer.Name())
	case c.OAuth.ReadScope == c.OAuth.FullScope:
		return fmt.Errorf("%s and %s are both %q: name two scopes", OAuthReadScope.Name(), OAuthFullScope.Name(), c.OAuth.FullScope)
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
