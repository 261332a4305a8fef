// Command indexer is the Lambda that keeps context_search's indexes: it
// indexes published repository snapshots (S3 events) and embeds new memory
// entries (the Memory table's stream). See shared/indexer.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/toolshed/toolshed/shared/cmdline"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/wiring"
)

// version is the build's version (make sets it with -ldflags).
var version = "dev"

func main() {
	cmdline.Command{Name: "indexer", Version: version, Readme: "README.md#build-and-deploy",
		Summary: "the Lambda that builds context_search's indexes from snapshots and memory entries; run by Lambda, it takes its settings from the environment"}.Parse()
	log, cfg := lambdaentry.Setup()
	// Each event is a pointer that has just moved: never trust a cached one.
	cfg.RepoRefresh = time.Nanosecond
	ctx := context.Background()
	env := wiring.NewEnv(cfg, log)
	src, err := env.Repo(ctx)
	lambdaentry.FatalIf(log, "repository source", err)
	ix, err := indexer.New(ctx, env, contextindex.RepoSnapshots{Source: src})
	lambdaentry.FatalIf(log, "indexer", err)
	lambda.Start(ix.Handle)
}
