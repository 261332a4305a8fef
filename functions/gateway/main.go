// Command gateway is the MCP endpoint. In AWS Lambda it serves /mcp and
// invokes each tool's function; anywhere else it is the local server with
// every tool in process (make run). `gateway index-go DIR` writes the SCIP
// index of the Go code in DIR (shared/goscip) and `gateway precise-convert`
// converts a SCIP index into a precise store (shared/preciselocal): the
// local server runs both as processes of their own, with limits.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/cmdline"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/lambdaevent"
	"github.com/toolshed/toolshed/shared/lambdainvoke"
	"github.com/toolshed/toolshed/shared/localserver"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/preciselocal"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/wiring"
)

// version is the build's version (make sets it with -ldflags).
var version = "dev"

var command = cmdline.Command{Name: "gateway", Version: version, Readme: "docs/configuration.md",
	Summary: "the MCP endpoint; outside Lambda, the local server with every tool in process (make run)",
	Subcommands: []cmdline.Subcommand{
		{Name: goscip.CommandName, Summary: goscip.CommandSummary, Run: goscip.Command},
		{Name: preciselocal.ConvertName, Summary: preciselocal.ConvertSummary, Run: preciselocal.ConvertCommand},
	}}

func main() {
	command.RunSubcommand()
	if config.InLambda(os.Getenv) {
		serveLambda()
		return
	}
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (env "+config.Addr.Name()+")")
	flag.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data directory: the embedded store, workspaces, indexes (env "+config.DataDir.Name()+")")
	var repos []string
	flag.Func("repo", "a repository the repository tools serve when "+config.Bucket.Name()+" is unset, name=DIR or DIR (named after its folder); repeat it for more, the first is the default one (default: env "+config.Repos.Name()+", else the working directory)",
		func(spec string) error { repos = append(repos, spec); return nil })
	command.Parse()
	if repos != nil {
		cfg.Repos = repos
	}
	if exe, err := os.Executable(); err == nil {
		cfg.Executable = exe // its subcommands index code precisely
	}
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localserver.Run(ctx, cfg, log, version); err != nil {
		log.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// serveLambda is the deployed gateway: the MCP endpoint, with each
// tools/call sent to that tool's function (TOOLSHED_TOOL_FUNCTIONS). The
// API key authorizer has checked the caller, unless an issuer is set
// (TOOLSHED_OAUTH_ISSUER): then the gateway checks access tokens and API
// keys itself (oauth.Protect).
func serveLambda() {
	log, cfg, getenv := lambdaentry.Setup(nil)
	set, err := schema.Load(contracts.FS)
	lambdaentry.FatalIf(log, "load contracts", err)
	// Not awscall's bounds: a tool function may take its whole deadline.
	awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
	lambdaentry.FatalIf(log, "load AWS config", err)
	inv, err := lambdainvoke.New(awslambda.NewFromConfig(awsCfg), set, cfg.ToolFunctions,
		telemetry.NewGatewayObserver(log, lambdaentry.Metrics(cfg)))
	lambdaentry.FatalIf(log, "tool functions", err)
	srv := mcpserver.New(mcpserver.Config{Name: "toolshed", Version: version, Tools: inv, Log: log})
	hc := httpapi.Config{Invoker: inv, Auth: auth.Gateway{}, MCP: srv, ServerCard: srv.Card, PublicURL: cfg.PublicURL,
		RequestID: lambdaevent.RequestID, MaxResponse: lambdaevent.MaxHTTPBody, Log: log}
	env := wiring.NewEnv(cfg, log)
	env.Getenv = getenv
	_, err = oauth.Protect(context.Background(), &hc, cfg, env, inv.Served())
	lambdaentry.FatalIf(log, "OAuth", err)
	lambda.Start(lambdaevent.HTTPHandler(httpapi.New(hc)))
}
