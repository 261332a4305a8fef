package lambdaentry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/lambdainvoke"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// Version is reported by the MCP server; set with -ldflags at build time.
var Version = "dev"

// InLambda reports whether the process runs inside the Lambda runtime.
func InLambda() bool { return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// StartTool is the main of a tool function. TOOLSHED_TOOL names the tool;
// only its family is built (and only what that family asks of the Env),
// once, outside the handler. Rate counters are shared in DynamoDB.
func StartTool(families []family.Family) {
	log, cfg := setup()
	ctx := context.Background()
	if cfg.Tool == "" {
		fatalIf(log, "configuration", fmt.Errorf("TOOLSHED_TOOL is not set: it names the tool this function serves"))
	}
	env := family.NewEnv(cfg, log)
	tools, err := family.Build(ctx, families, env, cfg.Tool)
	fatalIf(log, "build "+cfg.Tool, err)
	stores, err := env.Stores(ctx)
	fatalIf(log, "open storage", err)
	p, err := family.Pipeline(tools, family.PipelineOptions{
		Limiter:    ratelimit.New(stores.Counters, nil),
		RateLimits: cfg.RateLimits,
		Log:        log,
		Metrics:    metrics(cfg),
	})
	fatalIf(log, "build pipeline", err)
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Gateway{}, RequestID: RequestID, MaxResponse: MaxHTTPBody, Log: log})
	lambda.Start(ToolHandler(p, h))
}

// StartGateway is the main of the deployed gateway: the MCP endpoint, with
// each tools/call sent to that tool's function.
func StartGateway() {
	log, cfg := setup()
	ctx := context.Background()
	set, err := schema.Load(contracts.FS)
	fatalIf(log, "load contracts", err)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	fatalIf(log, "load AWS config", err)
	inv, err := lambdainvoke.New(awslambda.NewFromConfig(awsCfg), set, cfg.ToolFunctions,
		telemetry.NewGatewayObserver(log, metrics(cfg)))
	fatalIf(log, "tool functions", err)
	srv := mcpserver.New(mcpserver.Config{Name: "toolshed", Version: Version, Tools: inv, Log: log})
	h := httpapi.New(httpapi.Config{Invoker: inv, Auth: auth.Gateway{}, MCP: srv, RequestID: RequestID,
		MaxResponse: MaxHTTPBody, Log: log})
	lambda.Start(HTTPHandler(h))
}

// StartAuthorizer is the main of the API Gateway Lambda authorizer.
func StartAuthorizer() {
	log, cfg := setup()
	stores, err := family.NewEnv(cfg, log).Stores(context.Background())
	fatalIf(log, "open storage", err)
	lambda.Start(auth.Authorizer{Keys: stores.APIKeys}.Handle)
}

// StartIndexer is the main of the indexer Lambda (shared/indexer): the
// bucket's indexes and the configured embedder built once, snapshots read
// from the bucket with the files grep_codebase searches.
func StartIndexer() {
	log, cfg := setup()
	// Each event is a pointer that has just moved: never trust a cached one.
	cfg.RepoRefresh = time.Nanosecond
	ctx := context.Background()
	env := family.NewEnv(cfg, log)
	src, err := env.Repo(ctx)
	fatalIf(log, "repository source", err)
	ix, err := indexer.New(ctx, env, contextindex.RepoSnapshots{Source: src})
	fatalIf(log, "indexer", err)
	lambda.Start(ix.Handle)
}

func setup() (*slog.Logger, config.Config) {
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	fatalIf(log, "configuration", err)
	return log, cfg
}

func metrics(cfg config.Config) io.Writer {
	if cfg.Metrics {
		return os.Stdout
	}
	return nil
}

// fatalIf ends a function that cannot start: it logs why, reports it to
// the Runtime API as the init error when running in Lambda, and exits.
func fatalIf(log *slog.Logger, what string, err error) {
	if err == nil {
		return
	}
	err = fmt.Errorf("%s: %w", what, err)
	log.Error(err.Error())
	if api := os.Getenv("AWS_LAMBDA_RUNTIME_API"); api != "" {
		if rerr := reportInitError(context.Background(), api, err); rerr != nil {
			log.Error(rerr.Error())
		}
	}
	os.Exit(1)
}
