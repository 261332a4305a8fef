package auth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Context keys the authorizer passes to the functions behind API Gateway.
const (
	ContextTenant = "tenant"
	ContextError  = "authError"
	// ContextRepos is the repositories the credential is limited to,
	// comma-separated (an authorizer's context holds strings); absent
	// for every repository.
	ContextRepos = "repos"
)

// AuthorizerCacheTTL is how long API Gateway keeps the deployed
// authorizers' answer for a credential (their ResultsCacheTtl, keyed by
// the Authorization header): a revoked key still passes, and a new one is
// still refused, for up to this long.
const AuthorizerCacheTTL = 30 * time.Second

// Gateway reads the tenant that the API Gateway Lambda authorizer put in the
// request context. On the routes where the authorizer lets a refused
// credential through (PassesRefusals: the MCP endpoint), it carries an
// error instead of a tenant, so that the function answers 401 with the
// reason (HTTP APIs cannot customise the authorizer's own answers).
type Gateway struct{}

// Authenticate implements httpapi.Authenticator.
func (Gateway) Authenticate(r *http.Request) (caller.Grant, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.Lambda == nil {
		return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "no authorizer context: the route is not protected by the Toolshed authorizer")
	}
	if msg, _ := rc.Authorizer.Lambda[ContextError].(string); msg != "" {
		return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "%s", msg)
	}
	owner, _ := rc.Authorizer.Lambda[ContextTenant].(string)
	if !tenant.Valid(owner) {
		return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "the authorizer gave no valid tenant")
	}
	limit, _ := rc.Authorizer.Lambda[ContextRepos].(string)
	repos, err := reposcope.ParseList(limit)
	if err != nil {
		return caller.Grant{}, toolerr.New(toolerr.Unauthorized, "the authorizer gave invalid repositories: %v", err)
	}
	return caller.Grant{Tenant: owner, Repos: repos}, nil
}

// PassesRefusals reports whether the authorizer lets a refused credential
// through to the route (its "METHOD /path" key), for the function to answer
// 401 itself: only the MCP endpoint, whose protocol wants the reason and,
// with OAuth, a WWW-Authenticate header that API Gateway cannot send. On
// every other route (a tool's) a refusal is final at the edge, so no tool
// function runs for an unauthenticated request. The two kinds of route
// need authorizers of their own, since API Gateway caches an answer per
// authorizer and credential, whatever the route.
func PassesRefusals(routeKey string) bool {
	_, path, _ := strings.Cut(routeKey, " ")
	return slices.Contains(MCPPaths, path)
}

// MCPPaths are the MCP endpoint's paths: /mcp and its read-only view.
var MCPPaths = []string{"/mcp", "/mcp/readonly"}

// Authorizer is the API Gateway HTTP API Lambda authorizer (simple
// responses). A valid credential yields its tenant in the context. A
// missing, malformed, unknown or revoked one is denied (API Gateway
// answers 403 and invokes nothing), except on the routes that pass
// refusals, where it goes through with ContextError. A credential that
// cannot be checked (storage trouble) fails the invocation: API Gateway
// answers 500 and never guesses a tenant.
type Authorizer struct{ Keys store.APIKeys }

// Decide is the authorizer's decision on an Authorization header: what a
// valid credential grants, or an Unauthorized error saying why it is
// refused, or another error when it cannot be checked. Credentials are API
// keys; an OAuth access token would be decided here too.
func (a Authorizer) Decide(ctx context.Context, header string) (caller.Grant, error) {
	key, err := BearerToken(header)
	if err != nil {
		return caller.Grant{}, err
	}
	return Resolve(ctx, a.Keys, key)
}

// Handle is the Lambda handler.
func (a Authorizer) Handle(ctx context.Context, req events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	header := req.Headers["authorization"]
	if header == "" && len(req.IdentitySource) > 0 {
		header = req.IdentitySource[0]
	}
	grant, err := a.Decide(ctx, header)
	if err == nil {
		granted := map[string]any{ContextTenant: grant.Tenant}
		if grant.Repos != nil {
			granted[ContextRepos] = strings.Join(grant.Repos, ",")
		}
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: true, Context: granted}, nil
	}
	te := toolerr.From(err)
	if te.Code != toolerr.Unauthorized {
		// Storage trouble: deny rather than guess, and let Lambda log it.
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, err
	}
	if !PassesRefusals(req.RouteKey) {
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, nil
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: true, Context: map[string]any{ContextError: te.Message},
	}, nil
}
