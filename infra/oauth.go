package main

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/stackoutputs"
)

// OAuth (docs/oauth.md). With an issuer, API Gateway's
// authorizers step aside: they cannot answer a 401 with WWW-Authenticate,
// so the gateway and every tool function check tokens and API keys
// themselves (shared/oauth, oauth.Protect), and the metadata routes are
// open.
var (
	oauthIssuerOption = settings.New("oauthIssuer", "",
		"the OAuth issuer whose access tokens every route takes beside API keys (`https://…`, any OpenID Connect provider, exactly as its tokens carry it in `iss`)", settings.Text)
	oauthOption = settings.New("oauth", "",
		"`cognito`: the stack creates a Cognito user pool as the issuer (a domain, a resource server for `<McpUrl>` with the two scopes, an app client for public clients with the authorization code grant and PKCE)", parseOAuthMode)
	callbackURLsOption = settings.New("oauthCallbackUrls", strings.Join(defaultCallbackURLs, ","),
		"with `oauth=cognito`: the app client's callback URLs, comma-separated (https, or http on localhost)", parseCallbackURLs)
	domainPrefixOption = settings.New("oauthDomainPrefix", "",
		"with `oauth=cognito`: the user pool domain's prefix, `<prefix>.auth.<region>.amazoncognito.com` (default: the stack's name in lower case and the account id)", parseDomainPrefix)
)

// defaultCallbackURLs are the MCP Inspector's (normal and debug flows) and
// Claude.ai's connectors'.
var defaultCallbackURLs = []string{
	"http://localhost:6274/oauth/callback",
	"http://localhost:6274/oauth/callback/debug",
	"https://claude.ai/api/mcp/auth_callback",
}

// oauthSettings are the functions' OAuth settings a deployment with an
// issuer may choose by their names; the others come from the options.
var oauthSettings = []settings.Setting{config.OAuthTenantClaim, config.OAuthReadScope, config.OAuthFullScope}

// oauthOptions are the deployment's OAuth options.
type oauthOptions struct {
	Issuer       string // oauthIssuer
	Cognito      bool   // oauth=cognito
	CallbackURLs []string
	DomainPrefix string // "": derived from the stack
}

// on reports whether the deployment takes access tokens.
func (o oauthOptions) on() bool { return o.Issuer != "" || o.Cognito }

// readOAuthOptions reads the OAuth options and checks them with the OAuth
// settings, as the functions will read them.
func readOAuthOptions(get func(string) string) (oauthOptions, error) {
	r := settings.NewReader(get)
	o := oauthOptions{
		Issuer:       settings.Read(r, oauthIssuerOption),
		Cognito:      settings.Read(r, oauthOption),
		CallbackURLs: settings.Read(r, callbackURLsOption),
		DomainPrefix: settings.Read(r, domainPrefixOption),
	}
	if err := r.Err(); err != nil {
		return o, err
	}
	return o, checkOAuth(o, get)
}

// checkOAuth refuses OAuth settings without an issuer, two issuers, and
// values the functions would refuse at start.
func checkOAuth(o oauthOptions, get func(string) string) error {
	cognitoOnly := []string{callbackURLsOption.Name(), domainPrefixOption.Name()}
	for _, name := range slices.Concat(settingNames(oauthSettings), cognitoOnly) {
		if get(name) == "" {
			continue
		}
		switch {
		case !o.on():
			return fmt.Errorf("%s needs oauthIssuer or oauth=cognito", name)
		case !o.Cognito && slices.Contains(cognitoOnly, name):
			return fmt.Errorf("%s needs oauth=cognito", name)
		}
	}
	switch {
	case o.Issuer != "" && o.Cognito:
		return errors.New("oauthIssuer and oauth=cognito both name the issuer: choose one")
	case !o.on():
		return nil
	}
	issuer := o.Issuer
	if o.Cognito {
		issuer = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example" // its form; the pool's is known deployed
	}
	env := map[string]string{config.OAuthIssuer.Name(): issuer, config.PublicURL.Name(): "https://api.example"}
	for _, s := range oauthSettings {
		env[s.Name()] = get(s.Name())
	}
	if _, err := config.FromEnv(func(k string) string { return env[k] }); err != nil {
		return fmt.Errorf("oauthIssuer and the TOOLSHED_OAUTH_* settings would stop the functions from starting: %w", err)
	}
	return nil
}

func parseOAuthMode(s string) (bool, error) {
	switch s {
	case "":
		return false, nil
	case "cognito":
		return true, nil
	}
	return false, fmt.Errorf("%q: use cognito, or oauthIssuer for another issuer", s)
}

// parseCallbackURLs reads redirect URLs as Cognito takes them: https, or
// http on localhost, without a fragment.
func parseCallbackURLs(list string) ([]string, error) {
	urls, _ := settings.List(list)
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Fragment != "" ||
			!(u.Scheme == "https" || (u.Scheme == "http" && u.Hostname() == "localhost")) {
			return nil, fmt.Errorf("%q: use https://host/path, or http://localhost:port/path", raw)
		}
	}
	if len(urls) == 0 {
		return nil, errors.New("no callback URL named")
	}
	return urls, nil
}

// domainPrefix is Cognito's rule for a domain prefix.
var domainPrefix = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

func parseDomainPrefix(s string) (string, error) {
	reserved := regexp.MustCompile(`aws|amazon|cognito`)
	if s != "" && (!domainPrefix.MatchString(s) || reserved.MatchString(s)) {
		return "", fmt.Errorf("%q: use lower-case letters, digits and hyphens (at most 63), without aws, amazon or cognito", s)
	}
	return s, nil
}

// addOAuth gives the gateway and every tool function what checking
// credentials themselves needs (oauthEnv) and read access to the API keys,
// when the deployment takes access tokens. It runs after newHTTPAPI: the
// public URL is the API's.
func (d *deployment) addOAuth() {
	if !d.opts.OAuth.on() {
		return
	}
	env := d.oauthEnv()
	fns := []awslambda.Function{d.gateway}
	for _, tf := range toolFunctions {
		fns = append(fns, d.toolFns[tf.Name])
	}
	for _, fn := range fns {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			fn.AddEnvironment(jsii.String(k), env[k], nil)
		}
		fn.AddToRolePolicy(d.readAPIKeys())
	}
}

// oauthEnv is the functions' OAuth environment: the issuer (the stack's
// Cognito pool's, with its resource server's scopes and the audience
// bound through them, or oauthIssuer's), the settings chosen, the public
// URL, and the API keys table.
func (d *deployment) oauthEnv() map[string]*string {
	env := map[string]*string{
		config.PublicURL.Name():                          d.publicURL(),
		config.Store.Name():                              jsii.String(string(config.StoreDynamoDB)),
		config.TableSettings[config.APIKeysTable].Name(): d.tables[config.APIKeysTable].TableName(),
	}
	for _, s := range oauthSettings {
		if v := d.setting(s.Name()); v != "" {
			env[s.Name()] = jsii.String(v)
		}
	}
	if !d.opts.OAuth.Cognito {
		env[config.OAuthIssuer.Name()] = jsii.String(d.opts.OAuth.Issuer)
		d.extraOutputs = append(d.extraOutputs, issuerOutput(env[config.OAuthIssuer.Name()]))
		return env
	}
	pool := d.newUserPool()
	env[config.OAuthIssuer.Name()] = pool.issuer
	env[config.OAuthReadScope.Name()] = pool.readScope
	env[config.OAuthFullScope.Name()] = pool.fullScope
	env[config.OAuthAudience.Name()] = jsii.String(string(config.AudienceScope))
	return env
}

// publicURL is the API's URL origin, built from its id (the API's URL
// would name its stage, and depend on it).
func (d *deployment) publicURL() *string {
	return awscdk.Fn_Join(jsii.String(""), jsii.Strings("https://", *d.api.ApiId(), ".execute-api.",
		*d.stack.Region(), ".", *d.stack.UrlSuffix()))
}

// resource is the OAuth resource: the public URL of /mcp.
func (d *deployment) resource() *string {
	return awscdk.Fn_Join(jsii.String(""), jsii.Strings(*d.publicURL(), "/mcp"))
}

// readAPIKeys is the statement that lets a function look up API keys.
func (d *deployment) readAPIKeys() awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:GetItem"),
		Resources: jsii.Strings(*d.tables[config.APIKeysTable].TableArn()),
	})
}

// userPool is what the functions need of the stack's Cognito user pool.
type userPool struct {
	issuer, readScope, fullScope *string
}

// newUserPool creates the Cognito user pool that issues the access tokens
// (oauth=cognito): users the administrator creates (no self sign-up), its
// domain, a resource server whose identifier is the resource with the read
// and full scopes, and one app client for public MCP clients (no secret,
// authorization code with PKCE, refresh tokens). Its outputs say where a
// client signs in.
func (d *deployment) newUserPool() userPool {
	names := d.oauthConfig()
	pool := awscognito.NewUserPool(d.stack, jsii.String("UserPool"), &awscognito.UserPoolProps{
		SelfSignUpEnabled: jsii.Bool(false),
		SignInAliases:     &awscognito.SignInAliases{Email: jsii.Bool(true)},
		AccountRecovery:   awscognito.AccountRecovery_EMAIL_ONLY,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
	})
	domain := pool.AddDomain(jsii.String("UserPoolDomain"), &awscognito.UserPoolDomainOptions{
		CognitoDomain: &awscognito.CognitoDomainOptions{DomainPrefix: d.domainPrefix()},
	})
	read := awscognito.NewResourceServerScope(&awscognito.ResourceServerScopeProps{
		ScopeName: jsii.String(names.ReadScope), ScopeDescription: jsii.String("the read-only tools")})
	full := awscognito.NewResourceServerScope(&awscognito.ResourceServerScopeProps{
		ScopeName: jsii.String(names.FullScope), ScopeDescription: jsii.String("every tool")})
	server := pool.AddResourceServer(jsii.String("McpResourceServer"), &awscognito.UserPoolResourceServerOptions{
		Identifier: d.resource(),
		Scopes:     &[]awscognito.ResourceServerScope{read, full},
	})
	client := pool.AddClient(jsii.String("McpClient"), &awscognito.UserPoolClientOptions{
		GenerateSecret:             jsii.Bool(false),
		PreventUserExistenceErrors: jsii.Bool(true),
		EnableTokenRevocation:      jsii.Bool(true),
		SupportedIdentityProviders: &[]awscognito.UserPoolClientIdentityProvider{awscognito.UserPoolClientIdentityProvider_COGNITO()},
		OAuth: &awscognito.OAuthSettings{
			Flows: &awscognito.OAuthFlows{AuthorizationCodeGrant: jsii.Bool(true)},
			Scopes: &[]awscognito.OAuthScope{awscognito.OAuthScope_OPENID(),
				awscognito.OAuthScope_ResourceServer(server, read), awscognito.OAuthScope_ResourceServer(server, full)},
			CallbackUrls: jsii.Strings(d.opts.OAuth.CallbackURLs...),
		},
	})
	// Sign-in is the hosted UI's; the client itself only refreshes tokens
	// (CDK writes no ExplicitAuthFlows for none, which Cognito reads as SRP
	// and custom auth too).
	client.Node().DefaultChild().(awscognito.CfnUserPoolClient).AddPropertyOverride(
		jsii.String("ExplicitAuthFlows"), []string{"ALLOW_REFRESH_TOKEN_AUTH"})
	issuer := awscdk.Fn_Join(jsii.String(""), jsii.Strings("https://", *pool.UserPoolProviderUrl()))
	d.addCognitoOutputs(pool, client, domain, issuer)
	scope := func(name string) *string {
		return awscdk.Fn_Join(jsii.String(""), jsii.Strings(*d.resource(), "/", name))
	}
	return userPool{issuer: issuer, readScope: scope(names.ReadScope), fullScope: scope(names.FullScope)}
}

// oauthConfig is the OAuth settings the deployment chose, with the
// functions' defaults for the others.
func (d *deployment) oauthConfig() config.OAuth {
	cfg, err := config.FromEnv(func(k string) string {
		if slices.Contains(settingNames(oauthSettings), k) {
			return d.setting(k)
		}
		return ""
	})
	if err != nil {
		panic(fmt.Sprintf("the OAuth settings, checked by readOptions: %v", err))
	}
	return cfg.OAuth
}

// domainPrefix is the user pool domain's prefix: as the deployment says,
// else the stack's name in lower case and the account id (unique in the
// region, as Cognito needs).
func (d *deployment) domainPrefix() *string {
	if p := d.opts.OAuth.DomainPrefix; p != "" {
		return jsii.String(p)
	}
	return awscdk.Fn_Join(jsii.String("-"), jsii.Strings(strings.ToLower(*d.stack.StackName()), *d.stack.Account()))
}

// addCognitoOutputs outputs what an MCP client needs to sign in with the
// stack's user pool.
func (d *deployment) addCognitoOutputs(pool awscognito.UserPool, client awscognito.UserPoolClient,
	domain awscognito.UserPoolDomain, issuer *string) {
	base := domain.BaseUrl(nil)
	d.extraOutputs = append(d.extraOutputs,
		issuerOutput(issuer),
		output{stackoutputs.UserPool, "The Cognito user pool: create users in it", pool.UserPoolId()},
		output{stackoutputs.OAuthClient, "The app client id MCP clients use (public, authorization code with PKCE)", client.UserPoolClientId()},
		output{stackoutputs.OAuthAuthorizeURL, "The authorization endpoint (the user pool domain's sign-in)",
			awscdk.Fn_Join(jsii.String(""), jsii.Strings(*base, "/oauth2/authorize"))},
	)
}

func issuerOutput(issuer *string) output {
	return output{stackoutputs.OAuthIssuer, "The OAuth issuer whose access tokens every route takes beside API keys", issuer}
}
