package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
)

// output is one of the stack's outputs.
type output struct {
	name, description string
	value             *string
}

// addOutputs outputs what a user or a script acting on the deployment
// needs (shared/stackoutputs names them): the URLs to connect to, the
// bucket and the tables, where to look (dashboard, log groups) and what
// to subscribe to (the alarm topic), and those of the parts a deployment
// asked for (extraOutputs: OAuth's).
func (d *deployment) addOutputs() {
	url := func(suffix string) *string {
		return awscdk.Fn_Join(jsii.String(""), jsii.Strings(*d.api.Url(), suffix))
	}
	outputs := []output{
		{stackoutputs.APIURL, "Base URL of the HTTP API", d.api.Url()},
		{stackoutputs.MCPURL, "MCP endpoint (Streamable HTTP, JSON responses)", url("mcp")},
		{stackoutputs.ToolsURL, "Prefix of the per-tool HTTP/JSON endpoints", url("v1/tools/")},
		{stackoutputs.Bucket, "Bucket of snapshots (scripts/snapshot), indexes and workspaces", d.bucket.BucketName()},
		{stackoutputs.DashboardURL, "The CloudWatch dashboard", awscdk.Fn_Join(jsii.String(""), jsii.Strings(
			"https://", *d.stack.Region(), ".console.aws.amazon.com/cloudwatch/home?region=", *d.stack.Region(),
			"#dashboards:name=", *d.dashboard.DashboardName()))},
		{stackoutputs.LogGroups, "Every function's log group is this prefix and the function's name (a tool's, gateway, authorizer, indexer, index-worker)", jsii.String(d.logGroupName(""))},
		{stackoutputs.AccessLogs, "The HTTP API's access log (a JSON line per request)", d.accessLogs.LogGroupName()},
		{stackoutputs.Indexer, "The indexer's function", d.indexer.FunctionName()},
		{stackoutputs.IndexerFailed, "Queue of the index events the indexer failed (docs/deploy.md#replaying-failed-index-events)", d.failures.QueueUrl()},
		{stackoutputs.IndexQueue, "Queue of the batches of code index builds, which the index worker reads", d.indexQueue.QueueUrl()},
		{stackoutputs.IndexDeadLetters, "Queue of the index batches that failed every receive (docs/deploy.md#replaying-failed-index-events)", d.indexDeadLetters.QueueUrl()},
		{stackoutputs.EmbedQueue, "Queue of the embed messages of built parts, which the index worker reads", d.embedQueue.QueueUrl()},
		{stackoutputs.EmbedDeadLetters, "Queue of the embed messages that failed every receive (docs/deploy.md#replaying-failed-index-events)", d.embedDeadLetters.QueueUrl()},
		{stackoutputs.AlarmTopic, "SNS topic every alarm notifies (subscribe to it, or deploy with -c alarmEmail=...)", d.alarms.TopicArn()},
	}
	for _, schema := range dynamostore.Schemas {
		outputs = append(outputs, output{stackoutputs.Table(schema.Table), "DynamoDB table " + string(schema.Table), d.tables[schema.Table].TableName()})
	}
	for _, o := range append(outputs, d.extraOutputs...) {
		// The construct's id is not the output's name, which may be that of
		// a resource's construct ("SnapshotBucket").
		out := awscdk.NewCfnOutput(d.stack, jsii.String(o.name+"Output"), &awscdk.CfnOutputProps{
			Value:       o.value,
			Description: jsii.String(o.description),
		})
		out.OverrideLogicalId(jsii.String(o.name))
	}
}
