package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
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
// longest) for someone to replay (README, "Replaying failed index events").
const (
	asyncRetries         = 2
	asyncEventAgeHours   = 6
	failureRetentionDays = 14
)

// newIndexer creates the indexer function: its grants from
// shared/indexer, the Memory table's stream (INSERTs only) and the bucket's
// snapshot publications as its event sources, and the queue their
// failures go to.
func (d *deployment) newIndexer() {
	d.failures = awssqs.NewQueue(d.stack, jsii.String("IndexerFailureQueue"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(failureRetentionDays)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	fn := d.newFunction(functionSpec{
		Name:           indexerDir,
		ID:             "Indexer",
		Dir:            indexerDir,
		TimeoutSeconds: indexerTimeoutSeconds,
		MemoryMB:       indexerMemoryMB,
		Concurrency:    indexerConcurrency,
		Env:            d.indexerEnv(),
	})
	for _, g := range indexer.Grants {
		fn.AddToRolePolicy(d.statement(g))
	}
	d.grantSecrets(fn, embedding.Settings)
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

// indexerEnv is the indexer's environment: the bucket, and the repository
// and embedding settings the deployment chose (the indexer indexes what
// the repository tools may read, no more, with the embedder
// context_search queries with, from the same declarations; Bedrock's
// Titan V2 unless chosen).
func (d *deployment) indexerEnv() map[string]*string {
	env := deploy.SettingsEnv(deploy.RepositorySettings, embedding.Settings, d.setting)
	env["TOOLSHED_BUCKET"] = *d.bucket.BucketName()
	if env[embedding.Kind.Name()] == "" {
		env[embedding.Kind.Name()] = embedding.KindBedrock
	}
	return jsiiEnv(env)
}
