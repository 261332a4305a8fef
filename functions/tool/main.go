// Command tool is the Lambda function of every tool: one artifact, deployed
// once per tool, or once for all the tools of a family deployed as one
// function (family.OneFunction), with TOOLSHED_TOOL naming the tools the
// function serves. Only their family is built, from what it asks of the Env;
// the stores are DynamoDB. Its HTTP routes trust the API key authorizer,
// or with an issuer (TOOLSHED_OAUTH_ISSUER) check access tokens and API
// keys themselves (oauth.Protect); direct invocations come from the
// gateway, which has checked the caller.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/lambdaevent"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/secrets/parameterstore"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// version is the build's version (make sets it with -ldflags).
var version = "dev"

func main() {
	log, cfg, getenv := lambdaentry.Begin("tool", version,
		"the Lambda function of tools ("+config.Tool.Name()+" names them)", parameterstore.Fetch)
	ctx := context.Background()
	if len(cfg.Tools) == 0 {
		lambdaentry.FatalIf(log, "configuration", fmt.Errorf("%s is not set: it names the tools this function serves", config.Tool.Name()))
	}
	env := wiring.NewEnv(cfg, log)
	env.Getenv = getenv
	tools, err := family.Build(ctx, toolset.Families, env, cfg.Tools...)
	lambdaentry.FatalIf(log, "build "+config.ToolValue(cfg.Tools), err)
	stores, err := env.Stores(ctx) // the rate counters are shared in DynamoDB
	lambdaentry.FatalIf(log, "open storage", err)
	p, err := wiring.Pipeline(tools, wiring.PipelineOptions{
		Limiter:    ratelimit.New(stores.Counters, nil),
		RateLimits: cfg.RateLimits,
		Log:        log,
		Metrics:    lambdaentry.Metrics(cfg),
	})
	lambdaentry.FatalIf(log, "build pipeline", err)
	// The default repository, read (its symbol table built) as far as the
	// init's time allows.
	var deadlines []time.Duration
	for _, c := range p.Served() {
		deadlines = append(deadlines, time.Duration(c.TimeoutMs)*time.Millisecond)
	}
	env.WaitWarm(lambdaentry.WarmTime(deadlines...))
	hc := httpapi.Config{Invoker: p, Auth: auth.Gateway{}, RequestID: lambdaevent.RequestID,
		MaxResponse: lambdaevent.MaxHTTPBody, Log: log}
	_, err = oauth.Protect(ctx, &hc, cfg, env, p.Served())
	lambdaentry.FatalIf(log, "OAuth", err)
	lambda.Start(lambdaevent.ToolHandler(p, httpapi.New(hc)))
}
