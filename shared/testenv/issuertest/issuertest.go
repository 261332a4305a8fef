// Package issuertest is the token side of an OAuth authorization server,
// for tests of a resource server: on a loopback httptest server it
// publishes OpenID Connect discovery metadata and a JWK set, and it signs
// access tokens with its keys, good ones and hostile ones. Its keys rotate
// on demand, and it counts the fetches of its key set.
//
//	iss := issuertest.Start(t)
//	tok := iss.Token(t, iss.Claims("http://127.0.0.1:8000/mcp", "alice", "toolshed:full"))
package issuertest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is a running test issuer.
type Issuer struct {
	URL string // the issuer identifier and the server's base URL

	fetches atomic.Int64
	mu      sync.Mutex
	keys    []jose.JSONWebKey // private keys, the signing one first
	serial  int
}

// Start serves the issuer's metadata at /.well-known/openid-configuration
// and its JWK set at /jwks, with one RSA key, until the test ends.
func Start(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		writeJSON(w, iss.published())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	iss.Rotate(t)
	return iss
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Rotate makes a new RSA key the signing key; the old ones stay published.
func (i *Issuer) Rotate(t testing.TB) {
	t.Helper()
	k := NewKey(t)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.serial++
	k.KeyID = fmt.Sprintf("key-%d", i.serial)
	i.keys = append([]jose.JSONWebKey{k}, i.keys...)
}

// NewKey returns a fresh 2048-bit RSA private key for RS256 without a kid.
func NewKey(t testing.TB) jose.JSONWebKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: priv, Algorithm: string(jose.RS256), Use: "sig"}
}

// SigningKey returns the current signing key (private).
func (i *Issuer) SigningKey() jose.JSONWebKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[0]
}

func (i *Issuer) published() jose.JSONWebKeySet {
	i.mu.Lock()
	defer i.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, k := range i.keys {
		set.Keys = append(set.Keys, k.Public())
	}
	return set
}

// KeySetFetches counts the GETs of the JWK set so far.
func (i *Issuer) KeySetFetches() int { return int(i.fetches.Load()) }

// Claims returns the claims of a valid access token for audience: this
// issuer, the subject, the scopes, issued now and expiring in five minutes.
func (i *Issuer) Claims(audience, subject string, scopes ...string) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": i.URL, "sub": subject, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"client_id": "test-client",
	}
	if len(scopes) > 0 {
		scope := scopes[0]
		for _, s := range scopes[1:] {
			scope += " " + s
		}
		c["scope"] = scope
	}
	return c
}

// Token signs claims with the current signing key (RS256, its kid).
func (i *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, i.SigningKey(), jose.RS256, claims)
}

// Sign signs claims as a compact JWS with key and alg, naming key.KeyID
// in the header when it has one.
func Sign(t testing.TB, key jose.JSONWebKey, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if key.KeyID != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), key.KeyID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key.Key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Unsigned returns claims as a token with "alg": "none" and no signature,
// as an attacker would send it.
func Unsigned(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	header, err := json.Marshal(map[string]string{"alg": "none", "typ": "at+jwt", "kid": kid})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc(header) + "." + enc(payload) + "."
}

// HMACWithPublicKey signs claims with HS256 keyed with the PEM of the
// issuer's public signing key, naming its kid: the algorithm confusion
// attack on verifiers that let the token choose the algorithm.
func (i *Issuer) HMACWithPublicKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	k := i.SigningKey()
	der, err := x509.MarshalPKIXPublicKey(k.Public().Key)
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return Sign(t, jose.JSONWebKey{Key: secret, KeyID: k.KeyID}, jose.HS256, claims)
}
