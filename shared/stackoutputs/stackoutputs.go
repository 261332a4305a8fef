// Package stackoutputs names the outputs of the deployed Toolshed stack,
// which the CDK app (infra) writes and the scripts that act on a
// deployment (scripts/apikeys, scripts/snapshot) read, and reads them from
// CloudFormation, so that a user needs only the stack's name.
package stackoutputs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/config"
)

// DefaultStack is the stack the CDK app deploys unless told otherwise.
const DefaultStack = "Toolshed"

// The stack's outputs besides the tables' (see Table).
const (
	APIURL        = "ApiUrl"              // base URL of the HTTP API
	MCPURL        = "McpUrl"              // the MCP endpoint
	ToolsURL      = "ToolsUrl"            // prefix of /v1/tools/<name>
	Bucket        = "SnapshotBucket"      // the bucket: snapshots, indexes, workspaces
	DashboardURL  = "DashboardUrl"        // the CloudWatch dashboard
	LogGroups     = "LogGroupPrefix"      // every function's log group is this prefix and the function's name
	AccessLogs    = "AccessLogGroup"      // the HTTP API's access log
	Indexer       = "IndexerFunction"     // the indexer's function name
	IndexerFailed = "IndexerFailureQueue" // URL of the queue of index events that failed
	AlarmTopic    = "AlarmTopicArn"       // the SNS topic every alarm notifies
	// IndexQueue is the URL of the queue of index batches; IndexDeadLetters,
	// of the queue of those that failed every receive.
	IndexQueue       = "IndexQueue"
	IndexDeadLetters = "IndexDeadLetterQueue"
	// EmbedQueue is the URL of the queue of embed messages (a built
	// part's chunks to embed); EmbedDeadLetters, of those that failed
	// every receive.
	EmbedQueue       = "EmbedQueue"
	EmbedDeadLetters = "EmbedDeadLetterQueue"
)

// The outputs of a deployment that takes OAuth access tokens: the issuer,
// and with the stack's Cognito user pool (oauth=cognito) the pool, the
// app client MCP clients use and the authorization endpoint.
const (
	OAuthIssuer       = "OAuthIssuer"
	UserPool          = "UserPoolId"
	OAuthClient       = "OAuthClientId"
	OAuthAuthorizeURL = "OAuthAuthorizeUrl"
)

// Table is the output naming a DynamoDB table, e.g. "ApiKeysTable".
func Table(t config.Table) string { return string(t) + "Table" }

// Outputs are a stack's outputs, by name.
type Outputs struct {
	Stack  string
	Values map[string]string
}

// Get returns an output, or an error naming the stack and what it lacks.
func (o Outputs) Get(name string) (string, error) {
	v, ok := o.Values[name]
	if !ok || v == "" {
		have := make([]string, 0, len(o.Values))
		for k := range o.Values {
			have = append(have, k)
		}
		sort.Strings(have)
		return "", fmt.Errorf("stack %s has no output %s (it has %s): deploy this version of the stack first",
			o.Stack, name, strings.Join(have, ", "))
	}
	return v, nil
}

// Read returns the outputs of a deployed stack.
func Read(ctx context.Context, client cloudformation.DescribeStacksAPIClient, stack string) (Outputs, error) {
	out, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	if nc, ok := awscall.NoCredentials(err); ok {
		return Outputs{}, fmt.Errorf("read the outputs of stack %s: %w", stack, nc)
	}
	if err != nil {
		return Outputs{}, fmt.Errorf("read the outputs of stack %s: %w", stack, err)
	}
	if len(out.Stacks) != 1 {
		return Outputs{}, fmt.Errorf("read the outputs of stack %s: %d stacks answered", stack, len(out.Stacks))
	}
	o := Outputs{Stack: stack, Values: map[string]string{}}
	for _, kv := range out.Stacks[0].Outputs {
		o.Values[aws.ToString(kv.OutputKey)] = aws.ToString(kv.OutputValue)
	}
	return o, nil
}

// Load reads the outputs of a deployed stack with the AWS settings of the
// environment (credentials, region, AWS_ENDPOINT_URL_CLOUDFORMATION).
func Load(ctx context.Context, stack string) (Outputs, error) {
	cfg, err := awscall.LoadConfig(ctx)
	if err != nil {
		return Outputs{}, err
	}
	return Read(ctx, cloudformation.NewFromConfig(cfg), stack)
}

// Getenv returns getenv with the settings that point a process at the
// stack: DynamoDB as the store, and the stack's tables and bucket.
func (o Outputs) Getenv(getenv func(string) string) (func(string) string, error) {
	env := map[string]string{config.Store.Name(): string(config.StoreDynamoDB)}
	var err error
	if env[config.Bucket.Name()], err = o.Get(Bucket); err != nil {
		return nil, err
	}
	for t, s := range config.TableSettings {
		if env[s.Name()], err = o.Get(Table(t)); err != nil {
			return nil, err
		}
	}
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}

// Config reads the configuration with getenv, pointed at the deployed
// stack named stack (see Getenv) unless stack is "".
func Config(ctx context.Context, stack string, getenv func(string) string) (config.Config, error) {
	if stack == "" {
		return config.FromEnv(getenv)
	}
	o, err := Load(ctx, stack)
	if err != nil {
		return config.Config{}, err
	}
	if getenv, err = o.Getenv(getenv); err != nil {
		return config.Config{}, err
	}
	return config.FromEnv(getenv)
}
