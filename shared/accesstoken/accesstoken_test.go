package accesstoken_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/accesstoken"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
)

const audience = "https://tools.example/mcp"

// clock is a settable time for the verifier's refresh intervals.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// longLived returns a valid token expiring in three hours, beyond the
// hours the tests move the verifier's clock.
func longLived(t *testing.T, iss *issuertest.Issuer) string {
	claims := iss.Claims(audience, "alice")
	claims["exp"] = time.Now().Add(3 * time.Hour).Unix()
	return iss.Token(t, claims)
}

func newVerifier(iss *issuertest.Issuer, c *clock) *accesstoken.Verifier {
	return accesstoken.New(accesstoken.Options{Issuer: iss.URL, MinRefresh: 10 * time.Second, MaxAge: time.Hour, Now: c.now})
}

func TestVerifyReadsClaims(t *testing.T) {
	iss := issuertest.Start(t)
	v := newVerifier(iss, &clock{t: time.Now()})
	tests := []struct {
		name  string
		extra map[string]any
		want  []string
	}{
		{"scope string", map[string]any{"scope": "toolshed:read openid"}, []string{"toolshed:read", "openid"}},
		{"scp string (Entra ID)", map[string]any{"scp": "toolshed:full"}, []string{"toolshed:full"}},
		{"scp list (Okta)", map[string]any{"scp": []string{"a", "b"}}, []string{"a", "b"}},
		{"no scope", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := iss.Claims(audience, "alice")
			for k, val := range tt.extra {
				claims[k] = val
			}
			claims["org_id"] = "acme"
			got, err := v.Verify(context.Background(), iss.Token(t, claims), audience)
			if err != nil {
				t.Fatal(err)
			}
			org, _ := got.String("org_id")
			if got.Subject != "alice" || !slices.Equal(got.Scopes, tt.want) || org != "acme" || got.Expiry.IsZero() {
				t.Errorf("got %+v (org_id %q), want subject alice, scopes %v, org_id acme, an expiry", got, org, tt.want)
			}
		})
	}
}

// TestKeyRotation: the key set is fetched once and kept; a token signed
// with a key the issuer rotated in makes the verifier fetch it again, at
// once, but an unknown key id within MinRefresh of the last fetch is
// refused without fetching, and after MaxAge the set is fetched again.
func TestKeyRotation(t *testing.T) {
	iss := issuertest.Start(t)
	c := &clock{t: time.Now()}
	v := newVerifier(iss, c)
	ctx := context.Background()
	verify := func(when string, token string, wantFetches int) error {
		t.Helper()
		_, err := v.Verify(ctx, token, audience)
		if got := iss.KeySetFetches(); got != wantFetches {
			t.Errorf("%s: %d key set fetches, want %d", when, got, wantFetches)
		}
		return err
	}
	first := longLived(t, iss)
	for range 3 {
		if err := verify("first key", first, 1); err != nil {
			t.Fatal(err)
		}
	}
	c.add(11 * time.Second)
	iss.Rotate(t)
	if err := verify("rotated key", iss.Token(t, iss.Claims(audience, "alice")), 2); err != nil {
		t.Fatalf("a token signed with the new key: %v", err)
	}
	if err := verify("old key after rotation", first, 2); err != nil {
		t.Fatalf("a token signed with the old key, still published: %v", err)
	}
	iss.Rotate(t)
	if err := verify("a second rotation within MinRefresh", iss.Token(t, iss.Claims(audience, "alice")), 2); !errors.Is(err, accesstoken.ErrInvalid) {
		t.Errorf("got %v, want an unknown key refused without fetching", err)
	}
	c.add(time.Hour)
	if err := verify("after MaxAge", first, 3); err != nil {
		t.Fatal(err)
	}
}

// TestIssuerUnavailable: without the keys a token can be neither accepted
// nor refused (ErrUnavailable); keys fetched before keep being used while
// the issuer is down.
func TestIssuerUnavailable(t *testing.T) {
	down := accesstoken.New(accesstoken.Options{Issuer: "http://127.0.0.1:1"})
	iss := issuertest.Start(t)
	if _, err := down.Verify(context.Background(), iss.Token(t, iss.Claims(audience, "alice")), audience); !errors.Is(err, accesstoken.ErrUnavailable) {
		t.Errorf("issuer down: got %v, want ErrUnavailable", err)
	}

	wrong := accesstoken.New(accesstoken.Options{Issuer: iss.URL + "/other"})
	if _, err := wrong.Warm(context.Background()); err == nil || !strings.Contains(err.Error(), "no issuer metadata") {
		t.Errorf("no metadata for the issuer: got %v", err)
	}

	c := &clock{t: time.Now()}
	v := newVerifier(iss, c)
	if n, err := v.Warm(context.Background()); err != nil || n != 1 {
		t.Fatalf("Warm: %d keys, %v", n, err)
	}
	c.add(2 * time.Hour) // the set is stale
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a fetch now fails at once
	if _, err := v.Verify(ctx, longLived(t, iss), audience); err != nil {
		t.Errorf("a known key while its set cannot be refreshed: %v", err)
	}
}

func TestMetadataMustNameTheIssuer(t *testing.T) {
	iss := issuertest.Start(t)
	// The metadata says iss.URL; a verifier configured with a trailing
	// slash expects another issuer identifier.
	v := accesstoken.New(accesstoken.Options{Issuer: iss.URL + "/"})
	if _, err := v.Warm(context.Background()); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("got %v, want the metadata's issuer refused", err)
	}
}

// TestConcurrentChecksFetchOnce: checks that need the keys at the same
// time wait for one fetch and share it.
func TestConcurrentChecksFetchOnce(t *testing.T) {
	iss := issuertest.Start(t)
	v := newVerifier(iss, &clock{t: time.Now()})
	token := longLived(t, iss)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			_, err := v.Verify(context.Background(), token, audience)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := iss.KeySetFetches(); n != 1 {
		t.Errorf("%d key set fetches for 20 concurrent checks, want 1", n)
	}
}

// TestScopeAudience: with ScopeAudience, a token without "aud" is accepted
// only when one of its scopes is "<audience>/<name>"; a token with "aud"
// is checked as in the default mode, which still refuses every token
// without "aud".
func TestScopeAudience(t *testing.T) {
	iss := issuertest.Start(t)
	tests := []struct {
		name    string
		aud     any // nil: no "aud"
		scope   string
		byAud   bool // accepted in the default mode
		byScope bool // accepted with ScopeAudience
	}{
		{"aud, no scope", audience, "", true, true},
		{"other aud, a scope of this resource", "https://other.example/mcp", audience + "/toolshed:full", false, false},
		{"no aud, a scope of this resource", nil, audience + "/toolshed:full", false, true},
		{"no aud, one scope of this resource among others", nil, "openid https://other.example/api/x " + audience + "/toolshed:read", false, true},
		{"no aud, bare scopes", nil, "toolshed:full", false, false},
		{"no aud, no scope", nil, "", false, false},
		{"no aud, a scope of another resource", nil, "https://other.example/mcp/toolshed:full", false, false},
		{"no aud, a scope of a resource this one prefixes", nil, audience + "x/toolshed:full", false, false},
		{"no aud, the resource itself as a scope", nil, audience + "/", false, false},
	}
	byAud := accesstoken.New(accesstoken.Options{Issuer: iss.URL})
	byScope := accesstoken.New(accesstoken.Options{Issuer: iss.URL, ScopeAudience: true})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := iss.Claims(audience, "alice")
			delete(claims, "aud")
			if tt.aud != nil {
				claims["aud"] = tt.aud
			}
			claims["scope"] = tt.scope
			token := iss.Token(t, claims)
			for _, mode := range []struct {
				v    *accesstoken.Verifier
				name string
				want bool
			}{{byAud, "default", tt.byAud}, {byScope, "ScopeAudience", tt.byScope}} {
				_, err := mode.v.Verify(context.Background(), token, audience)
				if (err == nil) != mode.want || (err != nil && !errors.Is(err, accesstoken.ErrInvalid)) {
					t.Errorf("%s: got %v, want accepted %v", mode.name, err, mode.want)
				}
			}
		})
	}
}
