// Command indexer is the bootstrap of the indexer and index worker Lambdas
// that keep context_search's indexes: it plans the code index builds of
// published repository snapshots (S3 events), builds their batches (the
// index queue's messages) and embeds new memory entries (the Memory
// table's stream). See shared/indexer.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/secrets/parameterstore"
	"github.com/toolshed/toolshed/shared/wiring"
)

// version is the build's version (make sets it with -ldflags).
var version = "dev"

func main() {
	log, cfg, getenv := lambdaentry.Begin("indexer", version,
		"the Lambda that builds context_search's indexes from snapshots and memory entries", parameterstore.Fetch)
	env := wiring.NewEnv(cfg, log)
	env.Getenv = getenv
	ix, err := indexer.New(context.Background(), env, lambdaentry.Metrics(cfg))
	lambdaentry.FatalIf(log, "indexer", err)
	lambda.Start(ix.Handle)
}
