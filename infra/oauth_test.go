package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/stackoutputs"
)

const testIssuer = "https://idp.example/tenant"

// The two OAuth modes' stacks.
var (
	withIssuer  = synthesizeOnce("issuer.out", map[string]string{"oauthIssuer": testIssuer, "TOOLSHED_OAUTH_TENANT_CLAIM": "org_id"})
	withCognito = synthesizeOnce("cognito.out", map[string]string{"oauth": "cognito"})
)

// publicURLJSON is the API's URL origin and suffix as the template
// writes them (CDK flattens joins).
func publicURLJSON(t *testing.T, suffix string) map[string]any {
	parts := []any{"https://", ref(logicalID(t, "HttpApi")), ".execute-api.", ref("AWS::Region"), ".", ref("AWS::URLSuffix")}
	if suffix != "" {
		parts = append(parts, suffix)
	}
	return map[string]any{"Fn::Join": []any{"", parts}}
}

// checkProtectedByFunctions: in tmpl the gateway and every tool function
// have env (and the OAuth environment every mode gives) and may read the
// API keys; no route has an authorizer, there is none, nor its function;
// the metadata routes go to the gateway.
func checkProtectedByFunctions(t *testing.T, tmpl cfnTemplate, env map[string]any) {
	t.Helper()
	keys := tableIDs(t)[config.APIKeysTable]
	want := map[string]any{"TOOLSHED_PUBLIC_URL": publicURLJSON(t, ""), "TOOLSHED_STORE": "dynamodb", "TOOLSHED_APIKEYS_TABLE": ref(keys)}
	for k, v := range env {
		want[k] = v
	}
	names := []string{gatewayName}
	for _, fn := range toolFunctions {
		names = append(names, fn.Name)
	}
	for _, name := range names {
		fnID := functionID(t, name)
		vars, _ := tmpl.Resources[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, v := range want {
			if !equalJSON(vars[k], v) {
				t.Errorf("%s: %s = %v, want %v", name, k, vars[k], v)
			}
		}
		if !slices.ContainsFunc(statementsIn(t, tmpl, fnID), func(s map[string]any) bool {
			return equalJSON(s["Action"], "dynamodb:GetItem") && equalJSON(s["Resource"], getAttArn(keys))
		}) {
			t.Errorf("%s may not read the API keys", name)
		}
	}
	if n := len(resourcesIn(tmpl, "AWS::ApiGatewayV2::Authorizer")); n != 0 {
		t.Errorf("%d authorizers, want none", n)
	}
	if _, ok := tmpl.Resources[functionID(t, authorizerDir)]; ok {
		t.Error("the authorizer function exists, unused")
	}
	routes := map[string]cfnResource{}
	for _, r := range resourcesIn(tmpl, "AWS::ApiGatewayV2::Route") {
		routes[r.Properties["RouteKey"].(string)] = r
		if r.Properties["AuthorizationType"] != "NONE" || r.Properties["AuthorizerId"] != nil {
			t.Errorf("route %s: %v %v, want no authorizer", r.Properties["RouteKey"], r.Properties["AuthorizationType"], r.Properties["AuthorizerId"])
		}
	}
	for _, path := range httpapi.MetadataPaths {
		r, ok := routes["GET "+path]
		if !ok || !strings.Contains(mustJSONString(r.Properties["Target"]), "GatewayIntegration") {
			t.Errorf("GET %s: %v, want a route to the gateway", path, r.Properties)
		}
	}
	if len(routes) != len(expectedRouteKeys())+len(httpapi.MetadataPaths) {
		t.Errorf("%d routes, want the %d of the default and the metadata's", len(routes), len(expectedRouteKeys()))
	}
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestOAuthIssuer: with -c oauthIssuer the functions check credentials
// themselves, with the issuer, the chosen tenant claim and the public URL.
func TestOAuthIssuer(t *testing.T) {
	tmpl := synthesizedOf(t, withIssuer).tmpl
	checkProtectedByFunctions(t, tmpl, map[string]any{"TOOLSHED_OAUTH_ISSUER": testIssuer, "TOOLSHED_OAUTH_TENANT_CLAIM": "org_id"})
	if got := tmpl.Outputs[stackoutputs.OAuthIssuer].Value; got != testIssuer {
		t.Errorf("OAuthIssuer output: %v", got)
	}
	if n := len(resourcesIn(tmpl, "AWS::Cognito::UserPool")); n != 0 {
		t.Errorf("%d user pools with an issuer of its own", n)
	}
}

// TestOAuthCognito: with -c oauth=cognito the stack's user pool is the
// issuer: its domain, a resource server for the resource with the two
// scopes, a public client with the code flow (PKCE) and the default
// callbacks; the functions take its tokens, bound by scopes, and the
// outputs say where to sign in.
func TestOAuthCognito(t *testing.T) {
	tmpl := synthesizedOf(t, withCognito).tmpl
	one := func(typ string) map[string]any {
		rs := resourcesIn(tmpl, typ)
		if len(rs) != 1 {
			t.Fatalf("%d %s, want 1", len(rs), typ)
		}
		for _, r := range rs {
			return r.Properties
		}
		return nil
	}
	pool := resourcesIn(tmpl, "AWS::Cognito::UserPool")
	var poolID string
	for id := range pool {
		poolID = id
	}
	one("AWS::Cognito::UserPool")
	domain := one("AWS::Cognito::UserPoolDomain")
	wantPrefix := map[string]any{"Fn::Join": []any{"-", []any{"toolshed", ref("AWS::AccountId")}}}
	if !equalJSON(domain["Domain"], wantPrefix) || !equalJSON(domain["UserPoolId"], ref(poolID)) {
		t.Errorf("domain: %v", domain)
	}
	server := one("AWS::Cognito::UserPoolResourceServer")
	if !equalJSON(server["Identifier"], publicURLJSON(t, "/mcp")) || !equalJSON(server["Scopes"], []any{
		map[string]any{"ScopeDescription": "the read-only tools", "ScopeName": "toolshed:read"},
		map[string]any{"ScopeDescription": "every tool", "ScopeName": "toolshed:full"}}) {
		t.Errorf("resource server: %v", server)
	}
	client := one("AWS::Cognito::UserPoolClient")
	callbacks := []any{}
	for _, u := range defaultCallbackURLs {
		callbacks = append(callbacks, u)
	}
	for k, v := range map[string]any{"GenerateSecret": false, "AllowedOAuthFlows": []any{"code"}, "AllowedOAuthFlowsUserPoolClient": true,
		"CallbackURLs": callbacks, "SupportedIdentityProviders": []any{"COGNITO"}, "ExplicitAuthFlows": []any{"ALLOW_REFRESH_TOKEN_AUTH"}} {
		if !equalJSON(client[k], v) {
			t.Errorf("client %s = %v, want %v", k, client[k], v)
		}
	}
	if scopes := mustJSONString(client["AllowedOAuthScopes"]); !strings.Contains(scopes, "openid") || !strings.Contains(scopes, "/toolshed:read") || !strings.Contains(scopes, "/toolshed:full") {
		t.Errorf("client scopes: %s", scopes)
	}
	issuer := map[string]any{"Fn::Join": []any{"", []any{"https://", map[string]any{"Fn::GetAtt": []any{poolID, "ProviderURL"}}}}}
	checkProtectedByFunctions(t, tmpl, map[string]any{"TOOLSHED_OAUTH_ISSUER": issuer, "TOOLSHED_OAUTH_AUDIENCE": "scope",
		"TOOLSHED_OAUTH_READ_SCOPE": publicURLJSON(t, "/mcp/toolshed:read"), "TOOLSHED_OAUTH_FULL_SCOPE": publicURLJSON(t, "/mcp/toolshed:full")})
	for _, name := range []string{stackoutputs.OAuthIssuer, stackoutputs.UserPool, stackoutputs.OAuthClient, stackoutputs.OAuthAuthorizeURL} {
		if _, ok := tmpl.Outputs[name]; !ok {
			t.Errorf("no output %s", name)
		}
	}
	if got := mustJSONString(tmpl.Outputs[stackoutputs.OAuthAuthorizeURL].Value); !strings.Contains(got, "/oauth2/authorize") || !strings.Contains(got, ".auth.") {
		t.Errorf("OAuthAuthorizeUrl: %s", got)
	}
}

// TestOAuthOptions: the OAuth options and settings are checked at synthesis.
func TestOAuthOptions(t *testing.T) {
	tests := []struct {
		ctx     map[string]string
		wantErr string
	}{
		{map[string]string{"oauthIssuer": testIssuer, "TOOLSHED_OAUTH_READ_SCOPE": "r", "TOOLSHED_OAUTH_FULL_SCOPE": "f"}, ""},
		{map[string]string{"oauth": "cognito", "oauthCallbackUrls": "http://localhost:33418/callback", "oauthDomainPrefix": "acme-tools"}, ""},
		{map[string]string{"oauthIssuer": "http://idp.example"}, "use https"},
		{map[string]string{"oauthIssuer": testIssuer, "oauth": "cognito"}, "choose one"},
		{map[string]string{"oauth": "auth0"}, "use cognito"},
		{map[string]string{"TOOLSHED_OAUTH_TENANT_CLAIM": "org_id"}, "needs oauthIssuer or oauth=cognito"},
		{map[string]string{"oauthIssuer": testIssuer, "oauthCallbackUrls": "https://a.example/cb"}, "oauthCallbackUrls needs oauth=cognito"},
		{map[string]string{"oauth": "cognito", "oauthCallbackUrls": "http://tools.example/cb"}, "use https://host/path"},
		{map[string]string{"oauth": "cognito", "oauthDomainPrefix": "my-aws-pool"}, "without aws"},
		{map[string]string{"oauth": "cognito", "TOOLSHED_OAUTH_READ_SCOPE": "toolshed:full"}, "name two scopes"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": testIssuer}, `unknown context key "TOOLSHED_OAUTH_ISSUER"`},
	}
	for _, tt := range tests {
		_, err := readOptions(tt.ctx)
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%v: error %v, want %q", tt.ctx, err, tt.wantErr)
		}
	}
}
