package accesstoken

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDocument bounds the issuer's metadata and JWK set documents.
const maxDocument = 1 << 20

// keySource is the issuer's signing keys: its JWK set, found through its
// metadata, fetched when first needed and kept. One fetch runs at a time;
// checks that need the keys meanwhile wait for it (within their context)
// and use what it fetched.
type keySource struct {
	issuer             string
	client             *http.Client
	minRefresh, maxAge time.Duration
	now                func() time.Time

	turn    chan struct{}     // held by the fetch in flight
	jwksURL string            // found by the first fetch (only the turn's holder touches it)
	mu      sync.Mutex        // guards what follows
	set     []jose.JSONWebKey // the signing keys last fetched
	fetched time.Time         // when set was fetched
	tried   time.Time         // when the last fetch ended, whatever came of it
	lastErr error             // why the last fetch failed, or nil
}

func newKeySource(opts Options) *keySource {
	return &keySource{issuer: opts.Issuer, client: opts.Client, minRefresh: opts.MinRefresh,
		maxAge: opts.MaxAge, now: opts.Now, turn: make(chan struct{}, 1)}
}

// key returns the signing key named kid for alg. A key set older than
// maxAge, or one lacking kid, is fetched again unless the last fetch
// ended less than minRefresh ago; while the issuer cannot be reached, a
// key already known is still used. A check that comes while a fetch is
// under way waits for it (refresh).
func (s *keySource) key(ctx context.Context, kid string, alg string) (jose.JSONWebKey, error) {
	s.mu.Lock()
	set, fetched, tried, lastErr := s.set, s.fetched, s.tried, s.lastErr
	s.mu.Unlock()
	known, findErr := find(set, kid, alg)
	switch {
	case findErr == nil && s.now().Sub(fetched) < s.maxAge:
		return known, nil
	case s.now().Sub(tried) < s.minRefresh && findErr == nil:
		return known, nil
	case s.now().Sub(tried) < s.minRefresh && set == nil:
		return jose.JSONWebKey{}, fmt.Errorf("%w: %v", ErrUnavailable, lastErr)
	case s.now().Sub(tried) < s.minRefresh:
		return jose.JSONWebKey{}, findErr
	}
	fresh, err := s.refresh(ctx, tried)
	if err != nil && findErr == nil {
		return known, nil
	}
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	return find(fresh, kid, alg)
}

// refresh fetches the key set, unless a fetch ended after seen (while
// this one waited for its turn): then it answers what that one got.
func (s *keySource) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, error) {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the key set: %v", ErrUnavailable, ctx.Err())
	}
	defer func() { <-s.turn }()
	s.mu.Lock()
	if s.tried.After(seen) {
		set, err := s.set, s.lastErr
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return set, nil
	}
	s.mu.Unlock()

	set, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tried, s.lastErr = s.now(), err
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	s.set, s.fetched = set, s.now()
	return set, nil
}

// fetch finds the JWK set through the issuer's metadata (once) and
// fetches its signing keys.
func (s *keySource) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	if s.jwksURL == "" {
		u, err := s.discover(ctx)
		if err != nil {
			return nil, err
		}
		s.jwksURL = u
	}
	var set jose.JSONWebKeySet
	if _, err := getJSON(ctx, s.client, s.jwksURL, &set); err != nil {
		return nil, fmt.Errorf("JWK set: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, k := range set.Keys {
		// Only public keys meant for signatures: a symmetric ("oct") key in
		// a published set could never be a secret.
		if k.Valid() && k.IsPublic() && (k.Use == "" || k.Use == "sig") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWK set %s has no public signing keys", s.jwksURL)
	}
	return keys, nil
}

// discover reads the issuer's metadata from the first of its well-known
// URLs that has it and returns its jwks_uri. The metadata must name the
// issuer exactly (RFC 8414 §3.3).
func (s *keySource) discover(ctx context.Context) (string, error) {
	var tried []string
	for _, u := range metadataURLs(s.issuer) {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		status, err := getJSON(ctx, s.client, u, &meta)
		if status >= 400 && status < 500 {
			tried = append(tried, fmt.Sprintf("%s (%d)", u, status))
			continue
		}
		switch {
		case err != nil:
			return "", fmt.Errorf("issuer metadata: %w", err)
		case meta.Issuer != s.issuer:
			return "", fmt.Errorf("issuer metadata %s names issuer %q, not %q", u, meta.Issuer, s.issuer)
		case meta.JWKSURI == "":
			return "", fmt.Errorf("issuer metadata %s has no jwks_uri", u)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("no issuer metadata at %s", strings.Join(tried, ", "))
}

// metadataURLs are where an issuer's metadata may be: RFC 8414's
// well-known URL (the path inserted after the host), then OpenID Connect
// discovery's, inserted and appended (Cognito's, Auth0's, Entra's).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.Path, "/")
	urls := []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
	}
	if path != "" {
		urls = append(urls, origin+path+"/.well-known/openid-configuration")
	}
	return urls
}

// getJSON GETs a JSON document of at most maxDocument bytes into v. It
// returns the status, and an error for anything but 200 with JSON.
func getJSON(ctx context.Context, client *http.Client, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocument {
		return resp.StatusCode, fmt.Errorf("GET %s: larger than %d bytes", u, maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %w", u, err)
	}
	return resp.StatusCode, nil
}

// find returns the key of set named kid that may verify alg. A token
// without a kid may use the one key of a set that has only one.
func find(set []jose.JSONWebKey, kid, alg string) (jose.JSONWebKey, error) {
	var found []jose.JSONWebKey
	for _, k := range set {
		if (kid == "" || k.KeyID == kid) && (k.Algorithm == "" || k.Algorithm == alg) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1 || (len(found) > 1 && kid != ""):
		return found[0], nil
	case kid == "" && len(found) > 1:
		return jose.JSONWebKey{}, invalid(`the token names no key ("kid") and the issuer publishes several`)
	}
	return jose.JSONWebKey{}, invalid("the token is signed with key %q (%s), which the issuer does not publish", kid, alg)
}
