package oauth

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
)

// Stores opens the stores, where the API keys are (wiring.Env is one).
type Stores interface {
	Stores(ctx context.Context) (store.Stores, error)
}

// Protect makes hc's handler a resource server when cfg names an issuer,
// and reports whether it did: every route then takes the issuer's access
// tokens and the API keys of stores, and the protected resource metadata
// is served. The issuer's keys are fetched now (logged; a failure is
// retried by the first token). tools are the served tools' contracts.
//
// Every process that serves HTTP calls it: the local server, and deployed
// the gateway and tool functions, which then check credentials
// themselves, because API Gateway's authorizers cannot answer a 401 with
// WWW-Authenticate; they read API keys from the ApiKeys table.
func Protect(ctx context.Context, hc *httpapi.Config, cfg config.Config, stores Stores, tools []*schema.Contract) (bool, error) {
	if !cfg.OAuth.On() {
		return false, nil
	}
	st, err := stores.Stores(ctx)
	if err != nil {
		return false, fmt.Errorf("OAuth: API keys: %w", err)
	}
	rs, err := New(Config{PublicURL: cfg.PublicURL, OAuth: cfg.OAuth, Keys: auth.Keys{Store: st.APIKeys}, Tools: tools, Log: hc.Log})
	if err != nil {
		return false, err
	}
	rs.Warm(ctx)
	hc.Auth, hc.ProtectedResource = rs, rs.Metadata()
	return true, nil
}
