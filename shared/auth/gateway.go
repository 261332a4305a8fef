package auth

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Context keys the authorizer passes to the functions behind API Gateway.
const (
	ContextTenant = "tenant"
	ContextError  = "authError"
)

// Gateway reads the tenant that the API Gateway Lambda authorizer put in the
// request context. The authorizer lets requests with a bad key through with
// an error instead of a tenant, so that callers get a 401 with a clear
// message (HTTP APIs cannot customise the authorizer's own 403).
type Gateway struct{}

// Authenticate implements httpapi.Authenticator.
func (Gateway) Authenticate(r *http.Request) (httpapi.Grant, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.Lambda == nil {
		return httpapi.Grant{}, toolerr.New(toolerr.Unauthorized, "no authorizer context: the route is not protected by the Toolshed authorizer")
	}
	if msg, _ := rc.Authorizer.Lambda[ContextError].(string); msg != "" {
		return httpapi.Grant{}, toolerr.New(toolerr.Unauthorized, "%s", msg)
	}
	owner, _ := rc.Authorizer.Lambda[ContextTenant].(string)
	if !tenant.Valid(owner) {
		return httpapi.Grant{}, toolerr.New(toolerr.Unauthorized, "the authorizer gave no valid tenant")
	}
	return httpapi.Grant{Tenant: owner}, nil
}

// Authorizer is the API Gateway HTTP API Lambda authorizer (simple
// responses). A valid key yields its tenant in the context. A missing,
// unknown or revoked key is let through with ContextError so that the
// function answers 401 with the reason; only a storage failure denies.
type Authorizer struct{ Keys store.APIKeys }

// Handle is the Lambda handler.
func (a Authorizer) Handle(ctx context.Context, req events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	header := req.Headers["authorization"]
	if header == "" && len(req.IdentitySource) > 0 {
		header = req.IdentitySource[0]
	}
	key, err := BearerToken(header)
	if err == nil {
		var tenant string
		tenant, err = Resolve(ctx, a.Keys, key)
		if err == nil {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{
				IsAuthorized: true, Context: map[string]any{ContextTenant: tenant},
			}, nil
		}
	}
	te := toolerr.From(err)
	if te.Code != toolerr.Unauthorized {
		// Storage trouble: deny rather than guess, and let Lambda log it.
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{IsAuthorized: false}, err
	}
	return events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: true, Context: map[string]any{ContextError: te.Message},
	}, nil
}
