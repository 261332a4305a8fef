package main

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/cors"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/servercard"
)

// The routes of each tool name and alias: POST <prefix><name>.
var toolRoutePrefixes = []string{"/v1/tools/", "/mcp/tool/"}

// mcpMethods are the methods of /mcp: POST, and GET and DELETE, which the
// gateway answers 405 (stateless, no SSE).
var mcpMethods = []awsapigatewayv2.HttpMethod{
	awsapigatewayv2.HttpMethod_POST, awsapigatewayv2.HttpMethod_GET, awsapigatewayv2.HttpMethod_DELETE,
}

// accessLogFormat is one JSON line per request in the HTTP API's access
// log: what was asked, by whom, what it got and how long it took.
var accessLogFormat = map[string]string{
	"requestId":         "$context.requestId",
	"time":              "$context.requestTime",
	"ip":                "$context.identity.sourceIp",
	"userAgent":         "$context.identity.userAgent",
	"routeKey":          "$context.routeKey",
	"path":              "$context.path",
	"status":            "$context.status",
	"responseLength":    "$context.responseLength",
	"latencyMs":         "$context.responseLatency",
	"integrationMs":     "$context.integrationLatency",
	"integrationError":  "$context.integrationErrorMessage",
	"authorizerError":   "$context.authorizer.error",
	"tenant":            "$context.authorizer." + auth.ContextTenant,
	"authorizerLatency": "$context.authorizer.latency",
	"integrationStatus": "$context.integrationStatus",
	"protocol":          "$context.protocol",
	"error":             "$context.error.message",
}

// newHTTPAPI creates the HTTP API: /mcp, /healthz and the server card
// (servercard.Path) go to the gateway, and each tool name and alias gets
// POST /v1/tools/<name> and POST /mcp/tool/<name>. Every route except
// /healthz and the server card has a Lambda authorizer;
// those of a tool's routes refuse at the edge, that of /mcp lets a refusal
// through for the gateway to answer (auth.PassesRefusals), and the two are
// apart so that neither's cached answers serve the other's routes. With
// OAuth no route has one, and the metadata routes go to the gateway
// (routeAuthorizers). Pages
// from origins get CORS (see corsPreflight); the stage throttles and logs
// every request.
func (d *deployment) newHTTPAPI() {
	d.api = awsapigatewayv2.NewHttpApi(d.stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:       jsii.String(*d.stack.StackName()),
		Description:   jsii.String("Toolshed MCP and tool endpoints"),
		CorsPreflight: corsPreflight(d.opts.AllowedOrigins),
	})
	authorizerOf := d.routeAuthorizers()
	gatewayIntegration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("GatewayIntegration"), d.gateway, nil)
	for _, path := range auth.MCPPaths {
		for _, m := range mcpMethods {
			d.addRoute(m, path, gatewayIntegration, authorizerOf(m, path))
		}
	}
	d.addRoute(awsapigatewayv2.HttpMethod_GET, "/healthz", gatewayIntegration, nil)
	d.addRoute(awsapigatewayv2.HttpMethod_GET, servercard.Path, gatewayIntegration, nil) // public, as discovery is
	if d.opts.OAuth.on() {
		for _, path := range httpapi.MetadataPaths {
			d.addRoute(awsapigatewayv2.HttpMethod_GET, path, gatewayIntegration, nil)
		}
	}

	throttled := map[awsapigatewayv2.CfnRoute]throttle{}                           // the routes with throttles of their own
	integrations := map[string]awsapigatewayv2integrations.HttpLambdaIntegration{} // one per tool function
	for _, tool := range tools {
		fn := tool.Function.Name
		if integrations[fn] == nil {
			integrations[fn] = awsapigatewayv2integrations.NewHttpLambdaIntegration(
				jsii.String(constructID(fn)+"Integration"), d.toolFns[fn], nil)
		}
		integration := integrations[fn]
		t, ownThrottle := d.routeThrottle(tool)
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			for _, prefix := range toolRoutePrefixes {
				m := awsapigatewayv2.HttpMethod_POST
				route := d.addRoute(m, prefix+name, integration, authorizerOf(m, prefix+name))
				if ownThrottle {
					throttled[route.Node().DefaultChild().(awsapigatewayv2.CfnRoute)] = t
				}
			}
		}
	}
	d.configureStage(throttled)
}

// routeAuthorizers returns the authorizer of each route. With OAuth, none:
// an authorizer with an identity source answers a request without one a
// bare 401, before the function could send WWW-Authenticate, so the
// functions check credentials themselves. Else the tools' routes refuse
// at the edge and /mcp's passes refusals to the gateway, each with its own
// authorizer (and cache).
func (d *deployment) routeAuthorizers() func(awsapigatewayv2.HttpMethod, string) awsapigatewayv2.IHttpRouteAuthorizer {
	if d.opts.OAuth.on() {
		return func(awsapigatewayv2.HttpMethod, string) awsapigatewayv2.IHttpRouteAuthorizer { return nil }
	}
	refusing := d.newAuthorizerOf("ToolAuthorizer")
	passing := d.newAuthorizerOf("McpAuthorizer")
	return func(method awsapigatewayv2.HttpMethod, path string) awsapigatewayv2.IHttpRouteAuthorizer {
		if auth.PassesRefusals(string(method) + " " + path) {
			return passing
		}
		return refusing
	}
}

// newAuthorizerOf creates a Lambda authorizer (simple responses) of the
// authorizer function on the Authorization header, with answers cached
// auth.AuthorizerCacheTTL.
func (d *deployment) newAuthorizerOf(id string) awsapigatewayv2authorizers.HttpLambdaAuthorizer {
	return awsapigatewayv2authorizers.NewHttpLambdaAuthorizer(jsii.String(id), d.authorizer,
		&awsapigatewayv2authorizers.HttpLambdaAuthorizerProps{
			ResponseTypes:   &[]awsapigatewayv2authorizers.HttpLambdaResponseType{awsapigatewayv2authorizers.HttpLambdaResponseType_SIMPLE},
			IdentitySource:  jsii.Strings("$request.header.Authorization"),
			ResultsCacheTtl: awscdk.Duration_Seconds(jsii.Number(auth.AuthorizerCacheTTL.Seconds())),
		})
}

// addRoute adds one route; authorizer nil leaves it open.
func (d *deployment) addRoute(method awsapigatewayv2.HttpMethod, path string, integration awsapigatewayv2.HttpRouteIntegration,
	authorizer awsapigatewayv2.IHttpRouteAuthorizer) awsapigatewayv2.HttpRoute {
	routes := d.api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String(path),
		Methods:     &[]awsapigatewayv2.HttpMethod{method},
		Integration: integration,
		Authorizer:  authorizer,
	})
	return (*routes)[0]
}

// routeThrottle is the throttle of a tool's routes when it has one of its
// own: as the deployment says, else N:2N for a function with reserved
// concurrency N (it is offered as many calls a second as it may run at
// once, and twice that in a burst).
func (d *deployment) routeThrottle(tool toolSpec) (throttle, bool) {
	if t, ok := d.opts.RouteThrottles[tool.Name]; ok {
		return t, true
	}
	if n := d.opts.Concurrency.of(tool.Function.Name, tool.Function.Family.Concurrency); n > 0 {
		return throttle{Rate: n, Burst: 2 * n}, true
	}
	return throttle{}, false
}

// configureStage sets the default stage's throttles (every route's, and
// those of the routes with their own, which must exist before the stage
// names them) and its access log: a JSON line per request into a log
// group kept logRetention.
func (d *deployment) configureStage(throttled map[awsapigatewayv2.CfnRoute]throttle) {
	d.accessLogs = awslogs.NewLogGroup(d.stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String(d.logGroupName("api-access")),
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	format, err := json.Marshal(accessLogFormat)
	if err != nil {
		panic(fmt.Sprintf("access log format: %v", err)) // a map of strings always encodes
	}
	stage := d.api.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: d.accessLogs.LogGroupArn(),
		Format:         jsii.String(string(format)),
	})
	stage.AddPropertyOverride(jsii.String("DefaultRouteSettings"), routeSettings(d.opts.Throttle))
	if len(throttled) == 0 {
		return
	}
	routes := map[string]any{}
	for route, t := range throttled {
		routes[*route.RouteKey()] = routeSettings(t)
		stage.AddDependency(route)
	}
	stage.AddPropertyOverride(jsii.String("RouteSettings"), routes)
}

// routeSettings are a stage's settings (CloudFormation's) for a route
// throttled at t.
func routeSettings(t throttle) map[string]any {
	return map[string]any{"ThrottlingRateLimit": t.Rate, "ThrottlingBurstLimit": t.Burst}
}

// corsPreflight is the HTTP API's CORS configuration: the methods, headers
// and max age of shared/cors (the policy the local server applies too) for
// origins. API Gateway answers preflights itself, before any authorizer
// (no route takes OPTIONS), and adds the CORS headers to the functions'
// answers.
func corsPreflight(origins []string) *awsapigatewayv2.CorsPreflightOptions {
	methods := make([]awsapigatewayv2.CorsHttpMethod, len(cors.AllowMethods))
	for i, m := range cors.AllowMethods {
		methods[i] = awsapigatewayv2.CorsHttpMethod(m)
	}
	return &awsapigatewayv2.CorsPreflightOptions{
		AllowOrigins:  jsii.Strings(origins...),
		AllowMethods:  &methods,
		AllowHeaders:  jsii.Strings(cors.AllowHeaders...),
		ExposeHeaders: jsii.Strings(cors.ExposeHeaders...),
		MaxAge:        awscdk.Duration_Seconds(jsii.Number(cors.MaxAgeSeconds)),
		// Callers authenticate with a bearer credential in the
		// Authorization header, which a page sends explicitly; no cookie
		// ever authenticates. Without credentials a cross-site page cannot
		// ride on a user's ambient login, and "*" stays a valid origin
		// (browsers refuse "*" together with credentials).
		AllowCredentials: jsii.Bool(false),
	}
}
