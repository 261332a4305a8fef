// Package accesstoken checks JWT access tokens (RFC 9068) that one OAuth
// authorization server issues, against the signing keys it publishes. It is
// the one package that uses the JOSE library (go-jose); nothing here parses
// a token by hand.
//
// A token is valid when it is at most MaxTokenBytes, is a compact JWS
// signed with an asymmetric algorithm of Algorithms (never "none", never
// HMAC: a public key is not a secret) by a key of the issuer's JWK set
// named by its "kid", and its claims hold: "iss" is the issuer exactly,
// "aud" names the audience asked for, "exp" is present and not passed, and
// "nbf" and "iat" are not in the future, each with Leeway.
//
// One option, ScopeAudience, is for issuers that bind a token to its
// resource through its scopes instead of "aud" (Cognito's access tokens
// have no "aud", and their scopes are "<resource server>/<name>"): a token
// without "aud" is then taken as naming the audience when at least one of
// its scopes is "<audience>/<name>". A token with "aud" is checked as
// always.
//
// The JWK set is found through the issuer's metadata (RFC 8414, or OpenID
// Connect discovery), fetched on first use and kept (keys.go); a token
// naming a key the set lacks makes it fetch the set again, at most once
// every MinRefresh, so a key the issuer rotates in is picked up at once.
package accesstoken

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// MaxTokenBytes bounds a token: real access tokens are a few kilobytes,
// and a larger one is refused before it is decoded.
const MaxTokenBytes = 16 << 10

// Leeway is the clock skew allowed on exp, nbf and iat.
const Leeway = 5 * time.Second

// Algorithms are the signature algorithms accepted: RSA, RSA-PSS, ECDSA
// and EdDSA. HMAC (HS*) and "none" are never among them.
var Algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// ErrInvalid is wrapped by every refusal of a token itself: the reason
// follows it ("invalid access token: the token has expired").
var ErrInvalid = errors.New("invalid access token")

// ErrUnavailable is wrapped when the issuer's keys could not be fetched,
// so a token could not be checked either way.
var ErrUnavailable = errors.New("the authorization server's signing keys are unavailable")

// Claims are what a valid token says.
type Claims struct {
	Subject string
	Scopes  []string // "scope" (space-separated, RFC 9068), or "scp" (a string or a list, as Entra ID and Okta send it)
	Expiry  time.Time
	claims  map[string]any
}

// String returns a claim that is a non-empty string.
func (c Claims) String(name string) (string, bool) {
	s, ok := c.claims[name].(string)
	return s, ok && s != ""
}

// Options configure a Verifier.
type Options struct {
	Issuer string // the issuer identifier, exactly as tokens carry it in "iss"
	// Client fetches the issuer's metadata and keys (nil: a client with a
	// 5 s timeout; each fetch is also bounded by the context of the check
	// that needs it).
	Client *http.Client
	// MinRefresh is how long after a fetch an unknown key id is refused
	// without fetching again (0: 10 s); MaxAge is how long a fetched key set
	// is used before it is fetched again (0: one hour).
	MinRefresh, MaxAge time.Duration
	Now                func() time.Time // nil: time.Now
	// ScopeAudience accepts a token without "aud" whose scopes bind it to
	// the audience (see the package comment); false: "aud" is required.
	ScopeAudience bool
}

// Verifier checks the access tokens of one issuer. It is safe for
// concurrent use.
type Verifier struct {
	issuer        string
	now           func() time.Time
	keys          *keySource
	scopeAudience bool
}

// New returns a Verifier for opts.Issuer. It fetches nothing until a token
// needs the keys (or Warm is called).
func New(opts Options) *Verifier {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if opts.MinRefresh == 0 {
		opts.MinRefresh = 10 * time.Second
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{issuer: opts.Issuer, now: opts.Now, keys: newKeySource(opts), scopeAudience: opts.ScopeAudience}
}

// Warm fetches the issuer's metadata and keys ahead of the first token,
// and reports how many signing keys it published.
func (v *Verifier) Warm(ctx context.Context) (int, error) {
	set, err := v.keys.refresh(ctx, time.Time{})
	return len(set), err
}

// Verify checks token for audience and returns its claims. Its errors wrap
// ErrInvalid or ErrUnavailable.
func (v *Verifier) Verify(ctx context.Context, token, audience string) (Claims, error) {
	if len(token) > MaxTokenBytes {
		return Claims{}, invalid("the token is longer than %d bytes", MaxTokenBytes)
	}
	tok, err := jwt.ParseSigned(token, Algorithms)
	if err != nil {
		return Claims{}, invalid("not a JWT signed with an accepted algorithm: %v", err)
	}
	head := tok.Headers[0]
	key, err := v.keys.key(ctx, head.KeyID, head.Algorithm)
	if err != nil {
		return Claims{}, err
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key.Key, &std, &all); err != nil {
		return Claims{}, invalid("the signature does not verify with the issuer's key %q", head.KeyID)
	}
	granted := scopes(all)
	if err := v.check(std, granted, audience); err != nil {
		return Claims{}, err
	}
	return Claims{Subject: std.Subject, Scopes: granted, Expiry: std.Expiry.Time(), claims: all}, nil
}

// check applies the claim rules to a token whose signature verified and
// that grants scopes.
func (v *Verifier) check(std jwt.Claims, scopes []string, audience string) error {
	switch {
	case std.Expiry == nil:
		return invalid(`the token has no "exp"`)
	case len(std.Audience) == 0 && !v.scopeAudience:
		return invalid(`the token has no "aud": it must name this resource, %s`, audience)
	case len(std.Audience) == 0 && !scopeOf(scopes, audience):
		return invalid(`the token has no "aud" and no scope of this resource (%s/…)`, audience)
	case len(std.Audience) == 0:
		std.Audience = jwt.Audience{audience} // bound to it by its scopes
	}
	err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience{audience}, Time: v.now()}, Leeway)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return invalid("the token was issued by %q, not %q", std.Issuer, v.issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return invalid("the token is for %q, not this resource, %s", []string(std.Audience), audience)
	case errors.Is(err, jwt.ErrExpired):
		return invalid("the token has expired")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return invalid("the token is not valid yet")
	}
	return invalid("%v", err)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// scopes reads "scope" (RFC 9068: one space-separated string) or else
// "scp" (a string or a list of strings).
func scopes(claims map[string]any) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	return words(claims["scp"])
}

// words reads a claim that is a space-separated string or a list of
// strings (other elements are left out).
func words(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, s := range v {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Words returns a claim that is a space-separated string or a list of
// strings, as its words; false when the token does not have it.
func (c Claims) Words(name string) ([]string, bool) {
	v, ok := c.claims[name]
	return words(v), ok
}

// scopeOf reports whether one of scopes is "<audience>/<name>".
func scopeOf(scopes []string, audience string) bool {
	return slices.ContainsFunc(scopes, func(s string) bool {
		name, ok := strings.CutPrefix(s, audience+"/")
		return ok && name != ""
	})
}

// HasScope reports whether the token grants scope.
func (c Claims) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }
