// Package auth resolves the tenant of a request from an API key, with the
// repositories the key is limited to. Keys are
// presented as "Authorization: Bearer <key>" and stored only as SHA-256
// hashes (store.APIKeys). Three authenticators cover the three places a
// request can arrive: the local server with keys (Keys), the local server on
// loopback without keys (Fixed), and a Lambda behind API Gateway whose
// authorizer has already checked the key (Gateway).
package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// KeyPrefix starts every key so that leaked keys are easy to recognise.
const KeyPrefix = "tsk_"

// NewKey returns a fresh random API key (32 random bytes).
func NewKey() string {
	var b [32]byte
	rand.Read(b[:])
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// BearerToken extracts the key from an Authorization header value.
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", unauthorized("missing API key: send Authorization: Bearer <key>")
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", unauthorized("malformed Authorization header: expected Bearer <key>")
	}
	return strings.TrimSpace(token), nil
}

// Resolve checks a key against the store and returns what it grants: its
// tenant and the repositories it is limited to.
func Resolve(ctx context.Context, keys store.APIKeys, key string) (caller.Grant, error) {
	k, err := keys.Lookup(ctx, store.HashKey(key))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return caller.Grant{}, unauthorized("unknown API key")
	case errors.Is(err, store.ErrStorage) || errors.Is(err, context.DeadlineExceeded):
		e := toolerr.New(toolerr.StorageError, "the API key could not be checked: its storage is unavailable; try again")
		e.Cause = fmt.Errorf("look up API key: %w", err)
		return caller.Grant{}, e
	case err != nil:
		return caller.Grant{}, fmt.Errorf("look up API key: %w", err)
	case k.Revoked:
		return caller.Grant{}, unauthorized(fmt.Sprintf("API key %q was revoked", k.Name))
	}
	if err := tenant.Check(k.Tenant); err != nil {
		return caller.Grant{}, fmt.Errorf("API key %q: %w", k.Name, err)
	}
	return caller.Grant{Tenant: k.Tenant, Repos: k.Repos}, nil
}

// Keys authenticates bearer keys against the key store.
type Keys struct{ Store store.APIKeys }

// Authenticate implements httpapi.Authenticator.
func (a Keys) Authenticate(r *http.Request) (caller.Grant, error) {
	key, err := BearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return caller.Grant{}, err
	}
	return Resolve(r.Context(), a.Store, key)
}

// Fixed gives every request one tenant. It is only used by the local server
// on a loopback address when no keys are configured.
type Fixed struct{ Tenant string }

// Authenticate implements httpapi.Authenticator.
func (a Fixed) Authenticate(*http.Request) (caller.Grant, error) {
	return caller.Grant{Tenant: a.Tenant}, nil
}

// Create stores a new key for the tenant owner, limited to the
// repositories repos when there are any, and returns the key itself,
// which is shown once and never stored.
func Create(ctx context.Context, keys store.APIKeys, owner, name string, now time.Time, repos ...string) (string, store.APIKey, error) {
	if err := tenant.Check(owner); err != nil {
		return "", store.APIKey{}, err
	}
	if strings.TrimSpace(name) == "" {
		return "", store.APIKey{}, fmt.Errorf("a key needs a name")
	}
	limit, err := reposcope.Limit(repos)
	if err != nil {
		return "", store.APIKey{}, err
	}
	key := NewKey()
	rec := store.APIKey{Hash: store.HashKey(key), Tenant: owner, Name: name, CreatedAt: now.UTC(), Repos: limit}
	if err := keys.Create(ctx, rec); err != nil {
		return "", store.APIKey{}, fmt.Errorf("store API key: %w", err)
	}
	return key, rec, nil
}
