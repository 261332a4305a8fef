package deploytest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// FanOut is the deployed indexer under the harness: the indexer function
// (S3 events), the index worker functions (a Pool, fed by two SQS event
// source mappings, on moto_server's index queue and embed queue, each
// with its own concurrency) and, when asked for, the deployed embedder,
// Titan Text Embeddings V2, answered by its stand-in.
type FanOut struct {
	Queue      emulator.Queue   // the index queue: build batches, precise conversions
	EmbedQueue emulator.Queue   // the embed queue: built parts' embed messages
	Embed      *embedtest.Titan // nil: lexical only
	Workers    *lambdatest.Pool
	// Source reads the index queue, EmbedSource the embed queue.
	Source      *lambdatest.SQSSource
	EmbedSource *lambdatest.SQSSource
	Indexer     *lambdatest.Function
	Store       *indexfile.Store

	stack   *Stack
	indexer lambdatest.Config // the indexer function's
}

// FanOutOptions shape a fan-out run.
type FanOutOptions struct {
	// Embed, when set, embeds with Titan V2 (at the deployed dimensions)
	// through its stand-in, shaped by these options (the account's quota,
	// the latency); nil indexes lexically.
	Embed *embedtest.TitanOptions
	// Pace is each worker's share of the quota, as an operator sets it
	// for the account's quota (TOOLSHED_EMBED_*_PER_MINUTE; a zero rate:
	// no bound); nil: the deployed default, the assumed default quota
	// split over Workers.
	Pace       *embedding.Pace
	BatchFiles int
	// Workers is the concurrency of the embed queue's mapping (the
	// processes sharing the quota); the index queue's is
	// deploy.IndexBuildConcurrency at most, and the worker function's
	// their sum, as deployed.
	Workers       int
	WorkerTimeout time.Duration // the worker function's timeout
	Visibility    time.Duration // the queues' visibility timeout
	VCPU          float64       // the functions' CPU share (0: unthrottled)
}

// StartFanOut starts the indexer and its workers as infra/indexer.go
// deploys them (their environment: the bucket, the queues, the
// embedder), with the emulators' endpoints. Everything stops when tb
// ends.
func (s *Stack) StartFanOut(tb testing.TB, o FanOutOptions) *FanOut {
	tb.Helper()
	bucket, _ := s.S3(tb)
	f := &FanOut{Queue: s.Moto.NewQueue(tb, o.Visibility, 5), EmbedQueue: s.Moto.NewQueue(tb, o.Visibility, 5), stack: s}
	f.Store = indexfile.NewStore(&indexfile.S3Blobs{Bucket: objects.New(s.Moto.S3(), bucket), Prefix: indexfile.BucketPrefix})
	cfg := s.IndexerConfig(tb)
	cfg.Env[indexer.QueueURL.Name()] = f.Queue.URL
	cfg.Env[indexer.EmbedQueueURL.Name()] = f.EmbedQueue.URL
	cfg.Env[indexer.BatchFiles.Name()] = strconv.Itoa(o.BatchFiles)
	cfg.Env[embedding.Workers.Name()] = strconv.Itoa(o.Workers) // as infra sets it
	if o.Embed != nil {
		f.Embed = embedtest.StartTitan(tb, *o.Embed)
		f.Embed.Configure(cfg.Env, embedding.DefaultTitanDimensions) // as deployed
	}
	if o.Pace != nil {
		cfg.Env[embedding.RequestsPerMinute.Name()] = strconv.FormatFloat(o.Pace.RequestsPerMinute, 'f', -1, 64)
		cfg.Env[embedding.TokensPerMinute.Name()] = strconv.FormatFloat(o.Pace.TokensPerMinute, 'f', -1, 64)
	}
	cfg.VCPU = o.VCPU
	f.indexer = cfg
	f.Indexer = s.Start(tb, cfg)
	worker := cfg
	worker.Name, worker.Timeout = "toolshed-index-worker", o.WorkerTimeout
	build := min(deploy.IndexBuildConcurrency, o.Workers)
	f.Workers = lambdatest.NewPool(s.Endpoints(worker), build+o.Workers)
	tb.Cleanup(f.Workers.Stop)
	f.Source = f.startSource(tb, f.Queue, build)
	f.EmbedSource = f.startSource(tb, f.EmbedQueue, o.Workers)
	return f
}

// startSource starts the worker function's mapping of a queue: a message
// per invocation, at most n at once. It stops when tb ends.
func (f *FanOut) startSource(tb testing.TB, q emulator.Queue, n int) *lambdatest.SQSSource {
	src := lambdatest.StartSQS(lambdatest.SQSConfig{Client: f.stack.Moto.SQS(), QueueURL: q.URL, QueueArn: q.Arn,
		BatchSize: 1, Concurrency: n, Target: f.Workers})
	tb.Cleanup(src.Stop)
	return src
}

// StartIndexer starts another environment of the indexer function (Lambda
// runs concurrent events in several) whose S3 requests go to s3Endpoint:
// a proxy in front of moto_server, to hold some of them back. It stops
// when tb ends.
func (f *FanOut) StartIndexer(tb testing.TB, s3Endpoint string) *lambdatest.Function {
	tb.Helper()
	cfg := f.stack.Endpoints(f.indexer)
	cfg.Env[config.S3Endpoint.Name()] = s3Endpoint
	fn, err := lambdatest.Start(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(fn.Stop)
	return fn
}

// Published invokes the indexer with the S3 event of the snapshot
// pointer of the repository whose folder is repoKey (reposcope.Ref.Key)
// being written.
func (f *FanOut) Published(ctx context.Context, repoKey string) error {
	return PublishedTo(ctx, f.Indexer, repoKey)
}

// PublishedTo invokes an environment of the indexer function with the S3
// event of the snapshot pointer of the repository whose folder is
// repoKey being written.
func PublishedTo(ctx context.Context, fn *lambdatest.Function, repoKey string) error {
	event := fmt.Appendf(nil, `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"snapshots/%s/current.json"}}}]}`, repoKey)
	resp, err := fn.Invoke(ctx, event)
	if err == nil && resp.FunctionError != "" {
		err = fmt.Errorf("%s: %s", resp.ErrorType, resp.Payload)
	}
	if err != nil {
		return fmt.Errorf("indexer: %w\n%s", err, fn.Output())
	}
	return nil
}

// WaitEmbedded waits until the index pointer of the repository whose
// folder is repoKey names commit with no chunk waiting for a vector, and
// returns the index's manifest.
func (f *FanOut) WaitEmbedded(ctx context.Context, repoKey, commit string) (indexfile.Manifest, error) {
	for ; ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		p, _, err := f.Store.Pointer(ctx, repoKey, "")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return indexfile.Manifest{}, err
		}
		if p.Commit == commit && p.Pending == 0 {
			return f.Store.Manifest(ctx, repoKey, commit)
		}
	}
	return indexfile.Manifest{}, fmt.Errorf("%s not embedded: %w", commit, ctx.Err())
}

// WaitPublished waits until the index pointer of the repository whose
// folder is repoKey names commit and returns the index's manifest.
func (f *FanOut) WaitPublished(ctx context.Context, repoKey, commit string) (indexfile.Manifest, error) {
	for ; ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		p, _, err := f.Store.Pointer(ctx, repoKey, "")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return indexfile.Manifest{}, err
		}
		if p.Commit == commit {
			return f.Store.Manifest(ctx, repoKey, commit)
		}
	}
	b, _, _ := f.Store.Build(context.Background(), repoKey, "")
	return indexfile.Manifest{}, fmt.Errorf("%s not published: build %+v; %d batch events, %d failed; %d embed events, %d failed: %w",
		commit, b, f.Source.Events.Load(), f.Source.Failed.Load(), f.EmbedSource.Events.Load(), f.EmbedSource.Failed.Load(), ctx.Err())
}
