package lambdaentry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/backend"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/lambdainvoke"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolset"
)

// Version is reported by the MCP server; set with -ldflags at build time.
var Version = "dev"

// InLambda reports whether the process runs inside the Lambda runtime.
func InLambda() bool { return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// StartTool is the main of a tool function: it builds the pipeline for one
// tool once, outside the handler, and serves events until the runtime stops.
func StartTool(name string) {
	log, cfg := setup()
	ctx := context.Background()
	stores, _, err := backend.Open(ctx, cfg)
	fatalIf(log, "open storage", err)
	tools, err := toolset.Only(toolset.Deps{Stores: stores}, name)
	fatalIf(log, "select tool", err)
	p, err := toolset.NewPipeline(tools, toolset.Options{Config: cfg, Stores: stores, Log: log, Metrics: metrics(cfg)})
	fatalIf(log, "build pipeline", err)
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Gateway{}, RequestID: RequestID, Log: log})
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
	inv, err := lambdainvoke.New(awslambda.NewFromConfig(awsCfg), set, cfg.ToolFunctions)
	fatalIf(log, "tool functions", err)
	srv := mcpserver.NewServer(mcpserver.Config{Name: "toolshed", Version: Version, Tools: inv.Served(), Invoker: inv, Log: log})
	h := httpapi.New(httpapi.Config{Invoker: inv, Auth: auth.Gateway{}, MCP: mcpserver.Handler(srv), RequestID: RequestID, Log: log})
	lambda.Start(HTTPHandler(h))
}

// StartAuthorizer is the main of the API Gateway Lambda authorizer.
func StartAuthorizer() {
	log, cfg := setup()
	stores, _, err := backend.Open(context.Background(), cfg)
	fatalIf(log, "open storage", err)
	lambda.Start(auth.Authorizer{Keys: stores.APIKeys}.Handle)
}

func setup() (*slog.Logger, config.Config) {
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

func fatalIf(log *slog.Logger, what string, err error) {
	if err != nil {
		log.Error(fmt.Sprintf("%s: %v", what, err))
		os.Exit(1)
	}
}
