package indexer

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// Start is the main of the indexer Lambda: configuration from the
// environment (TOOLSHED_BUCKET, the embedder settings), clients built once,
// then the Lambda loop. Snapshots are read from the bucket through
// shared/repo, with the files grep_codebase searches.
func Start() {
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	if err != nil {
		log.Error("indexer: configuration: " + err.Error())
		os.Exit(1)
	}
	// Each event is a pointer that has just moved: never trust a cached one.
	cfg.RepoRefresh = time.Nanosecond
	env := family.NewEnv(cfg, log)
	ctx := context.Background()
	src, err := env.Repo(ctx)
	if err != nil {
		log.Error("indexer: repository source: " + err.Error())
		os.Exit(1)
	}
	ix, err := New(ctx, env, contextindex.RepoSnapshots{Source: src})
	if err != nil {
		log.Error("indexer: " + err.Error())
		os.Exit(1)
	}
	lambda.Start(ix.Handle)
}

// New builds an Indexer from an Env: the bucket's indexes/ and the
// configured embedder.
func New(ctx context.Context, env *family.Env, snapshots Snapshots) (*Indexer, error) {
	client, bucket, err := env.S3(ctx)
	if err != nil {
		return nil, err
	}
	emb, err := embedding.FromConfig(ctx, env.Config, env.AWS)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	return &Indexer{
		Store:     contextindex.NewStore(&contextindex.S3Blobs{Client: client, Bucket: bucket, Prefix: contextindex.BucketPrefix}),
		Embedder:  emb,
		Snapshots: snapshots,
		Now:       time.Now,
		Log:       env.Log,
	}, nil
}
