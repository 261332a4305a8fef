// Command gateway is the MCP endpoint. In AWS Lambda it serves /mcp and
// invokes each tool's function; anywhere else it is the local server with
// every tool in process (make run).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/localserver"
	"github.com/toolshed/toolshed/shared/telemetry"
)

func main() {
	if lambdaentry.InLambda() {
		lambdaentry.StartGateway()
		return
	}
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (env TOOLSHED_ADDR)")
	flag.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data directory for the embedded store (env TOOLSHED_DATA_DIR)")
	flag.StringVar(&cfg.RepoDir, "repo", cfg.RepoDir, "repository directory the repository tools serve when TOOLSHED_BUCKET is unset (env TOOLSHED_REPO_DIR)")
	flag.Parse()
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localserver.Run(ctx, cfg, log, lambdaentry.Version); err != nil {
		log.Error("server failed", "error", err)
		os.Exit(1)
	}
}
