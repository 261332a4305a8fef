package main

import (
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
)

// Snapshot publication that triggers the indexer: objects created under
// snapshotsPrefix whose key ends in pointerSuffix (snapshots/*/current.json).
const (
	snapshotsPrefix = repo.Prefix
	pointerSuffix   = "/" + repo.PointerName
)

// Memory stream reading: batches of streamBatchSize, failed records
// reported one by one (ReportBatchItemFailures) and retried up to
// streamRetries times; only INSERTs reach the function.
const (
	streamBatchSize = 100
	streamRetries   = 10
)

// Events the indexer fails are never dropped: a snapshot publication (an
// asynchronous invocation by S3) is retried asyncRetries times within
// asyncEventAgeHours, a stream batch streamRetries times; then each goes
// to the failure queue, which keeps it failureRetentionDays (SQS's
// longest) for someone to replay (docs/deploy.md#replaying-failed-index-events).
const (
	asyncRetries         = 2
	asyncEventAgeHours   = 6
	failureRetentionDays = 14
)

// The index queue: the batches of code index builds, which the index
// worker takes one per invocation. A batch the worker failed (or that was
// killed) comes back after the visibility timeout, twice the worker's
// timeout (Lambda requires at least the timeout), and goes to the
// dead-letter queue after indexQueueReceives receives. The worker's two
// mappings (below) run at most their shares of its reserved concurrency,
// which add up to it, so Lambda never throttles them (AWS's advice of a
// visibility timeout of six times the function's is for throttled
// functions; it would delay a killed batch's retry by half an hour).
//
// The embed queue: the embed messages of built parts (their chunks to
// embed), a queue of their own, read by the index worker through a
// mapping of its own, so that a push's batches never wait behind the
// hours of embedding of earlier pushes. The same timeouts, receives and
// retention as the index queue's, its own dead-letter queue and alarm.
const (
	indexQueueReceives  = 5
	indexQueueRetention = 4 // days: a build stalled longer is published again
)

// newIndexer creates the indexer function (snapshot publications and the
// Memory table's stream), the index worker function (the index queue's
// batches and the embed queue's messages), their grants from
// shared/indexer, the queues and the queues their failures go to.
func (d *deployment) newIndexer() {
	d.failures = d.deadLetters("IndexerFailureQueue")
	d.indexDeadLetters = d.deadLetters("IndexDeadLetterQueue")
	d.indexQueue = d.workerQueue("IndexQueue", d.indexDeadLetters)
	d.embedDeadLetters = d.deadLetters("EmbedDeadLetterQueue")
	d.embedQueue = d.workerQueue("EmbedQueue", d.embedDeadLetters)
	fn := d.newFunction(functionSpec{
		Name:           indexerDir,
		ID:             "Indexer",
		Dir:            indexerDir,
		TimeoutSeconds: deploy.IndexerTimeoutSeconds,
		MemoryMB:       deploy.IndexerMemoryMB,
		Concurrency:    deploy.IndexerConcurrency,
		Env:            d.indexerEnv(),
	})
	d.grantIndexer(fn)
	for _, schema := range dynamostore.Schemas {
		if schema.Stream {
			fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(d.tables[schema.Table], d.streamSource()))
		}
	}
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		RetryAttempts: jsii.Number(asyncRetries),
		MaxEventAge:   awscdk.Duration_Hours(jsii.Number(asyncEventAgeHours)),
		OnFailure:     awslambdadestinations.NewSqsDestination(d.failures),
	})
	d.bucket.AddEventNotification(awss3.EventType_OBJECT_CREATED, awss3notifications.NewLambdaDestination(fn),
		&awss3.NotificationKeyFilter{Prefix: jsii.String(snapshotsPrefix), Suffix: jsii.String(pointerSuffix)})
	d.indexer = fn

	worker := d.newFunction(functionSpec{
		Name:           indexWorkerName,
		ID:             "IndexWorker",
		Dir:            indexerDir,
		TimeoutSeconds: deploy.IndexWorkerTimeoutSeconds,
		MemoryMB:       deploy.IndexWorkerMemoryMB,
		StorageMB:      deploy.IndexWorkerStorageMB,
		Concurrency:    deploy.IndexWorkerConcurrency,
		Env:            d.indexerEnv(),
	})
	d.grantIndexer(worker)
	build, embed := d.opts.Concurrency.workerShares()
	worker.AddEventSource(awslambdaeventsources.NewSqsEventSource(d.indexQueue, workerSource(build)))
	worker.AddEventSource(awslambdaeventsources.NewSqsEventSource(d.embedQueue, workerSource(embed)))
	d.indexWorker = worker
}

// deadLetters creates a queue of what failed every retry or receive (the
// indexer's events, a worker queue's messages), kept failureRetentionDays
// for someone to replay.
func (d *deployment) deadLetters(id string) awssqs.Queue {
	return awssqs.NewQueue(d.stack, jsii.String(id), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(failureRetentionDays)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
}

// workerQueue creates a queue the index worker reads: the index queue or
// the embed queue.
func (d *deployment) workerQueue(id string, dead awssqs.Queue) awssqs.Queue {
	return awssqs.NewQueue(d.stack, jsii.String(id), &awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(2 * deploy.IndexWorkerTimeoutSeconds)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(indexQueueRetention)),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dead, MaxReceiveCount: jsii.Number(indexQueueReceives)},
	})
}

// workerSource is how the index worker reads one of its queues: a
// message per invocation, failures reported, at most n at once (SQS
// mappings take no cap below 2).
func workerSource(n int) *awslambdaeventsources.SqsEventSourceProps {
	p := &awslambdaeventsources.SqsEventSourceProps{BatchSize: jsii.Number(1), ReportBatchItemFailures: jsii.Bool(true)}
	if n >= 2 {
		p.MaxConcurrency = jsii.Number(float64(n))
	}
	return p
}

// grantIndexer gives one of the indexer's functions its grants: those of
// shared/indexer, its secrets, and sending to the index and embed queues
// (plans, embed messages and continuations).
func (d *deployment) grantIndexer(fn awslambda.Function) {
	for _, g := range indexer.Grants {
		fn.AddToRolePolicy(d.statement(g))
	}
	d.grantSecrets(fn, embedding.Settings)
	d.indexQueue.GrantSendMessages(fn)
	d.embedQueue.GrantSendMessages(fn)
}

// workerShares splits the index worker's reserved concurrency between
// its mappings: the index queue's takes deploy.IndexBuildConcurrency (at
// most half of a smaller reservation), the embed queue's the rest. When
// the deployment reserves none, each mapping is capped at its declared
// share.
func (c concurrency) workerShares() (build, embed int) {
	n := c.of(indexWorkerName, deploy.IndexWorkerConcurrency)
	if n <= 0 {
		return deploy.IndexBuildConcurrency, deploy.EmbedConcurrency
	}
	build = min(deploy.IndexBuildConcurrency, max(n/2, 1))
	return build, max(n-build, 1)
}

// embedWorkers is how many index workers embed at once, sharing the
// embedding quota: the embed queue's share (workerShares).
func (c concurrency) embedWorkers() int {
	_, embed := c.workerShares()
	return embed
}

// streamSource is how the indexer reads a table's stream.
func (d *deployment) streamSource() *awslambdaeventsources.DynamoEventSourceProps {
	return &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(streamBatchSize),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(streamRetries),
		ReportBatchItemFailures: jsii.Bool(true),
		OnFailure:               awslambdaeventsources.NewSqsDlq(d.failures),
		Filters: &[]*map[string]interface{}{
			awslambda.FilterCriteria_Filter(&map[string]interface{}{
				"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
			}),
		},
	}
}

// indexerEnv is the environment of the indexer's functions: the bucket,
// the index and embed queues, indexer.Env, and the repository, embedding and indexer
// settings the deployment chose (the indexer indexes what
// the repository tools may read, no more, with the embedder
// context_search queries with, from the same declarations; Bedrock's
// Titan V2 unless chosen).
func (d *deployment) indexerEnv() map[string]*string {
	env := deploy.SettingsEnv(slices.Concat(deploy.RepositorySettings, embedding.Settings, indexer.Settings), d.setting)
	maps.Copy(env, indexer.Env)
	env[config.Bucket.Name()] = *d.bucket.BucketName()
	env[indexer.QueueURL.Name()] = *d.indexQueue.QueueUrl()
	env[indexer.EmbedQueueURL.Name()] = *d.embedQueue.QueueUrl()
	env[embedding.Workers.Name()] = strconv.Itoa(d.opts.Concurrency.embedWorkers())
	if env[embedding.Kind.Name()] == "" {
		env[embedding.Kind.Name()] = embedding.KindBedrock
	}
	return jsiiEnv(env)
}
