// Command infra is the Toolshed CDK app. It defines one stack, "Toolshed":
// the DynamoDB tables and the snapshot bucket, one Lambda function per tool
// (derived from the tool registry in shared/toolset and the contracts: its
// routes, aliases, timeout, memory, environment and IAM policy), the MCP
// gateway and the API key authorizer functions, the HTTP API that routes to
// them, the indexer function that keeps context_search's indexes (fed by
// the Memory table's stream and by snapshot uploads to the bucket), and
// the CloudWatch dashboard and alarms that watch them. The HTTP API answers
// browsers' CORS preflights itself, with the policy of shared/cors, for the
// origins of the context value allowedOrigins (any origin by default).
//
// The functions' code comes from pre-built binaries in
// <BuildDir>/<function>/bootstrap (see `make build`); every tool function
// runs <BuildDir>/tool/bootstrap. BuildDir is "../build"
// unless the environment variable TOOLSHED_BUILD_DIR names another directory.
//
//	cd infra && npx cdk synth
package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cors"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolset"
)

// stackName is the CloudFormation stack name of the app.
const stackName = "Toolshed"

// defaultBuildDir holds build/<function>/bootstrap, relative to infra/.
const defaultBuildDir = "../build"

// Build folders (and dashboard names) of the functions that are not tools.
const (
	gatewayName   = "gateway"
	authorizerDir = "authorizer"
	indexerDir    = "indexer"
)

// attributeTypes are the CDK names of the key attribute types.
var attributeTypes = map[types.ScalarAttributeType]awsdynamodb.AttributeType{
	types.ScalarAttributeTypeS: awsdynamodb.AttributeType_STRING,
	types.ScalarAttributeTypeN: awsdynamodb.AttributeType_NUMBER,
	types.ScalarAttributeTypeB: awsdynamodb.AttributeType_BINARY,
}

// Settings of the two non-tool functions. The gateway's timeout is API
// Gateway's integration limit; every tool's must be below it.
const (
	gatewayTimeoutSeconds    = 30
	gatewayMemoryMB          = 512
	authorizerTimeoutSeconds = 5
	authorizerMemoryMB       = 256
	authorizerCacheSeconds   = 30
	// The indexer builds whole code indexes: Lambda's longest timeout,
	// and memory (so CPU) for chunking and BM25 statistics.
	indexerTimeoutSeconds = 900
	indexerMemoryMB       = 2048
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

// defaultSnapshotRetentionDays is how long a snapshot that is no longer
// current is kept when the app is not told otherwise.
const defaultSnapshotRetentionDays = 30

// ToolshedStackProps configures NewToolshedStack.
type ToolshedStackProps struct {
	awscdk.StackProps
	// BuildDir holds <function>/bootstrap for every function; "../build" if empty.
	BuildDir string
	// DefaultRepo is the tenant whose repository snapshot tenants without
	// one read (TOOLSHED_DEFAULT_REPO of the repository tools); "" for none.
	DefaultRepo string
	// SnapshotRetentionDays keeps a snapshot that is no longer current
	// (and old versions of objects under snapshots/) this many days; 0
	// means defaultSnapshotRetentionDays.
	SnapshotRetentionDays float64
	// AllowedOrigins are the browser origins the HTTP API answers with
	// CORS (cdk deploy -c allowedOrigins=https://a.example,https://b.example);
	// empty means any origin ("*").
	AllowedOrigins []string
}

// functionSpec is what newFunction needs to create one Lambda function.
type functionSpec struct {
	ID             string // construct id prefix, e.g. "AddTask"
	Dir            string // folder under BuildDir
	TimeoutSeconds float64
	MemoryMB       float64
	Env            map[string]*string
}

// monitored is a function with the timeout its duration alarm compares against.
type monitored struct {
	Name           string
	Fn             awslambda.Function
	TimeoutSeconds float64
}

// NewToolshedStack builds the Toolshed stack.
func NewToolshedStack(scope constructs.Construct, id string, props *ToolshedStackProps) awscdk.Stack {
	p := withDefaults(props)
	stack := awscdk.NewStack(scope, &id, &p.StackProps)

	tables := make(map[config.Table]awsdynamodb.Table, len(dynamostore.Schemas))
	for _, schema := range dynamostore.Schemas {
		tables[schema.Table] = newTable(stack, schema)
	}
	bucket := awss3.NewBucket(stack, jsii.String("SnapshotBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		Versioned:         jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules:    snapshotLifecycle(p.SnapshotRetentionDays),
	})

	toolFns, watched := newToolFunctions(stack, p, tables, bucket)
	gateway := newGateway(stack, p.BuildDir, toolFns)
	authorizerFn := newAuthorizer(stack, p.BuildDir, tables)
	indexerFn := newIndexer(stack, p.BuildDir, tables, bucket)
	watched = append(watched,
		monitored{Name: gatewayName, Fn: gateway, TimeoutSeconds: gatewayTimeoutSeconds},
		monitored{Name: authorizerDir, Fn: authorizerFn, TimeoutSeconds: authorizerTimeoutSeconds},
		monitored{Name: indexerDir, Fn: indexerFn, TimeoutSeconds: indexerTimeoutSeconds})

	api := newHTTPAPI(stack, gateway, authorizerFn, toolFns, p.AllowedOrigins)
	addOutputs(stack, api)
	addMonitoring(stack, watched)
	dependOnPolicyOnly(stack)
	return stack
}

// withDefaults fills in what props leaves out, with the build folder made
// absolute.
func withDefaults(props *ToolshedStackProps) ToolshedStackProps {
	var p ToolshedStackProps
	if props != nil {
		p = *props
	}
	if p.BuildDir == "" {
		p.BuildDir = defaultBuildDir
	}
	if abs, err := filepath.Abs(p.BuildDir); err == nil {
		p.BuildDir = abs
	}
	if p.SnapshotRetentionDays <= 0 {
		p.SnapshotRetentionDays = defaultSnapshotRetentionDays
	}
	if len(p.AllowedOrigins) == 0 {
		p.AllowedOrigins = []string{"*"}
	}
	return p
}

// newToolFunctions creates one function per tool (the shared tool
// bootstrap), each with exactly its grants, in the order of tools.
func newToolFunctions(stack awscdk.Stack, p ToolshedStackProps, tables map[config.Table]awsdynamodb.Table, bucket awss3.Bucket) ([]awslambda.Function, []monitored) {
	fns := make([]awslambda.Function, len(tools))
	var watched []monitored
	for i, tool := range tools {
		fn := newFunction(stack, p.BuildDir, functionSpec{
			ID:             constructID(tool.Name),
			Dir:            toolDir,
			TimeoutSeconds: tool.TimeoutSeconds,
			MemoryMB:       tool.MemoryMB,
			Env:            toolEnv(tool, tables, bucket, p.DefaultRepo),
		})
		for _, g := range tool.Grants {
			fn.AddToRolePolicy(statement(stack, g, tables, bucket))
		}
		fns[i] = fn
		watched = append(watched, monitored{Name: tool.Name, Fn: fn, TimeoutSeconds: tool.TimeoutSeconds})
	}
	return fns, watched
}

// newGateway creates the MCP endpoint's function, which may invoke each
// tool function (toolFns, in the order of tools) and no other.
func newGateway(stack awscdk.Stack, buildDir string, toolFns []awslambda.Function) awslambda.Function {
	names := make(map[string]interface{}, len(tools))
	var invokable []*string
	for i, fn := range toolFns {
		names[tools[i].Name] = fn.FunctionName()
		invokable = append(invokable, fn.FunctionArn(), jsii.String(*fn.FunctionArn()+":*"))
	}
	gateway := newFunction(stack, buildDir, functionSpec{
		ID:             "Gateway",
		Dir:            gatewayName,
		TimeoutSeconds: gatewayTimeoutSeconds,
		MemoryMB:       gatewayMemoryMB,
		Env:            map[string]*string{"TOOLSHED_TOOL_FUNCTIONS": stack.ToJsonString(names, nil)},
	})
	gateway.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("lambda:InvokeFunction"),
		Resources: &invokable,
	}))
	return gateway
}

// newAuthorizer creates the Lambda authorizer, which reads the API keys
// table and nothing else.
func newAuthorizer(stack awscdk.Stack, buildDir string, tables map[config.Table]awsdynamodb.Table) awslambda.Function {
	fn := newFunction(stack, buildDir, functionSpec{
		ID:             "Authorizer",
		Dir:            authorizerDir,
		TimeoutSeconds: authorizerTimeoutSeconds,
		MemoryMB:       authorizerMemoryMB,
		Env: map[string]*string{
			"TOOLSHED_STORE":                      jsii.String("dynamodb"),
			config.TableVars[config.APIKeysTable]: tables[config.APIKeysTable].TableName(),
		},
	})
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:GetItem"),
		Resources: jsii.Strings(*tables[config.APIKeysTable].TableArn()),
	}))
	return fn
}

// addOutputs outputs the URLs a user connects to.
func addOutputs(stack awscdk.Stack, api awsapigatewayv2.HttpApi) {
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       api.Url(),
		Description: jsii.String("Base URL of the HTTP API"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("McpUrl"), &awscdk.CfnOutputProps{
		Value:       awscdk.Fn_Join(jsii.String(""), jsii.Strings(*api.Url(), "mcp")),
		Description: jsii.String("MCP endpoint (Streamable HTTP, JSON responses)"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("ToolsUrl"), &awscdk.CfnOutputProps{
		Value:       awscdk.Fn_Join(jsii.String(""), jsii.Strings(*api.Url(), "v1/tools/")),
		Description: jsii.String("Prefix of the per-tool HTTP/JSON endpoints"),
	})
}

// newIndexer creates the indexer function: its grants from
// shared/indexer, the Memory table's stream (INSERTs only) and the bucket's
// snapshot publications as its event sources.
func newIndexer(stack awscdk.Stack, buildDir string, tables map[config.Table]awsdynamodb.Table, bucket awss3.Bucket) awslambda.Function {
	fn := newFunction(stack, buildDir, functionSpec{
		ID:             "Indexer",
		Dir:            indexerDir,
		TimeoutSeconds: indexerTimeoutSeconds,
		MemoryMB:       indexerMemoryMB,
		Env:            indexerEnv(bucket),
	})
	for _, g := range indexer.Grants {
		fn.AddToRolePolicy(statement(stack, g, tables, bucket))
	}
	for _, schema := range dynamostore.Schemas {
		if !schema.Stream {
			continue
		}
		fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(tables[schema.Table], &awslambdaeventsources.DynamoEventSourceProps{
			StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
			BatchSize:               jsii.Number(streamBatchSize),
			BisectBatchOnError:      jsii.Bool(true),
			RetryAttempts:           jsii.Number(streamRetries),
			ReportBatchItemFailures: jsii.Bool(true),
			Filters: &[]*map[string]interface{}{
				awslambda.FilterCriteria_Filter(&map[string]interface{}{
					"eventName": awslambda.FilterRule_IsEqual(jsii.String("INSERT")),
				}),
			},
		}))
	}
	bucket.AddEventNotification(awss3.EventType_OBJECT_CREATED, awss3notifications.NewLambdaDestination(fn),
		&awss3.NotificationKeyFilter{Prefix: jsii.String(snapshotsPrefix), Suffix: jsii.String(pointerSuffix)})
	return fn
}

// indexerEnv is the indexer's environment: the bucket, and the repository
// and embedding settings the deployment chose (the indexer indexes what
// the repository tools may read, no more, with the embedder
// context_search queries with; Bedrock's Titan V2 unless chosen).
func indexerEnv(bucket awss3.Bucket) map[string]*string {
	env := map[string]*string{"TOOLSHED_BUCKET": bucket.BucketName()}
	names := slices.Clone(deploy.RepositorySettings)
	for _, s := range embedding.Settings {
		names = append(names, s.Name())
	}
	for _, name := range names {
		if v := os.Getenv(name); v != "" {
			env[name] = jsii.String(v)
		}
	}
	if env[embedding.Kind.Name()] == nil {
		env[embedding.Kind.Name()] = jsii.String(embedding.KindBedrock)
	}
	return env
}

// newTable creates one on-demand DynamoDB table as its schema declares it.
func newTable(stack awscdk.Stack, schema dynamostore.TableSchema) awsdynamodb.Table {
	props := &awsdynamodb.TableProps{
		PartitionKey:  cdkAttribute(schema.PartitionKey),
		BillingMode:   awsdynamodb.BillingMode_PAY_PER_REQUEST,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	}
	if schema.SortKey.Name != "" {
		props.SortKey = cdkAttribute(schema.SortKey)
	}
	if schema.TTLAttribute != "" {
		props.TimeToLiveAttribute = jsii.String(schema.TTLAttribute)
	}
	if schema.Stream {
		props.Stream = awsdynamodb.StreamViewType_NEW_IMAGE
	}
	if schema.Durable {
		props.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
		props.PointInTimeRecoverySpecification = &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		}
	}
	return awsdynamodb.NewTable(stack, jsii.String(string(schema.Table)+"Table"), props)
}

// cdkAttribute is a key attribute as CDK names it.
func cdkAttribute(k dynamostore.KeyAttr) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: attributeTypes[k.Type]}
}

// snapshotLifecycle keeps old snapshots for days: scripts/snapshot tags a
// zip "retired" when the pointer leaves it, and a retired zip is deleted
// once it is that old; overwritten or deleted versions under snapshots/
// (the pointer's history) go the same number of days after they stop
// being current. The current snapshot is never expired.
func snapshotLifecycle(days float64) *[]*awss3.LifecycleRule {
	return &[]*awss3.LifecycleRule{
		{
			Id:         jsii.String("ExpireRetiredSnapshots"),
			Prefix:     jsii.String(repo.Prefix),
			TagFilters: &map[string]interface{}{repo.StateTag: repo.Retired},
			Expiration: awscdk.Duration_Days(jsii.Number(days)),
		},
		{
			Id:                          jsii.String("ExpireOldSnapshotVersions"),
			Prefix:                      jsii.String(repo.Prefix),
			NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(days)),
			ExpiredObjectDeleteMarker:   jsii.Bool(true),
		},
	}
}

// toolEnv is a tool function's environment, as deploy.Env
// describes it, with the stack's table and bucket names; settings the
// deployment chose come from the environment the app synthesizes in.
func toolEnv(tool toolSpec, tables map[config.Table]awsdynamodb.Table, bucket awss3.Bucket, defaultRepo string) map[string]*string {
	env := deploy.Env(tool.Family, tool.Name, deploy.Deployment{
		TableName:   func(t config.Table) string { return *tables[t].TableName() },
		Bucket:      *bucket.BucketName(),
		DefaultRepo: defaultRepo,
		Getenv:      os.Getenv,
	})
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = jsii.String(v)
	}
	return out
}

// statement turns a family grant into an IAM statement on exactly its resource.
func statement(stack awscdk.Stack, g family.Grant, tables map[config.Table]awsdynamodb.Table, bucket awss3.Bucket) awsiam.PolicyStatement {
	props := &awsiam.PolicyStatementProps{Actions: jsii.Strings(g.Actions...)}
	switch g.Kind {
	case family.TableGrant:
		props.Resources = jsii.Strings(*tables[g.Table].TableArn())
	case family.ObjectGrant:
		props.Resources = jsii.Strings(*bucket.ArnForObjects(jsii.String(g.Prefix + "*")))
	case family.ListGrant:
		props.Resources = jsii.Strings(*bucket.BucketArn())
		props.Conditions = &map[string]interface{}{
			"StringLike": map[string]interface{}{"s3:prefix": []string{g.Prefix + "*"}},
		}
	case family.ModelGrant:
		props.Resources = jsii.Strings(fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s",
			*stack.Partition(), *stack.Region(), g.Model))
	}
	return awsiam.NewPolicyStatement(props)
}

// newFunction creates an arm64 provided.al2023 function with X-Ray tracing and
// its own log group kept for a month.
func newFunction(stack awscdk.Stack, buildDir string, spec functionSpec) awslambda.Function {
	logs := awslogs.NewLogGroup(stack, jsii.String(spec.ID+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	fn := awslambda.NewFunction(stack, jsii.String(spec.ID+"Function"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(buildDir, spec.Dir)), nil),
		MemorySize:   jsii.Number(spec.MemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(spec.TimeoutSeconds)),
		Tracing:      awslambda.Tracing_ACTIVE,
		LogGroup:     logs,
		Environment:  &spec.Env,
	})
	return fn
}

// dependOnPolicyOnly leaves each Lambda function's DependsOn with only its
// role's policy (so it never runs before it may do its work). CDK also
// lists the role, on which the function already depends through
// Fn::GetAtt; cfn-lint reports that redundancy (W3005). It covers the
// functions CDK adds itself (the bucket notifications handler) too.
func dependOnPolicyOnly(stack awscdk.Stack) {
	for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		cfnFn, ok := c.(awscdk.CfnResource)
		if !ok || *cfnFn.CfnResourceType() != "AWS::Lambda::Function" {
			continue
		}
		parent := cfnFn.Node().Scope()
		for _, roleID := range []string{"ServiceRole", "Role"} {
			role := parent.Node().TryFindChild(jsii.String(roleID))
			if role == nil {
				continue
			}
			if policy := role.Node().TryFindChild(jsii.String("DefaultPolicy")); policy != nil {
				cfnPolicy := policy.Node().DefaultChild().(awscdk.CfnElement)
				cfnFn.AddOverride(jsii.String("DependsOn"), []*string{stack.GetLogicalId(cfnPolicy)})
			}
		}
	}
}

// newHTTPAPI creates the HTTP API: /mcp and /healthz go to the gateway, and
// each tool name and alias gets POST /v1/tools/<name> and POST /mcp/tool/<name>.
// Every route except /healthz requires the API key authorizer. Pages from
// origins get CORS (see corsPreflight).
func newHTTPAPI(stack awscdk.Stack, gateway, authorizerFn awslambda.Function, toolFns []awslambda.Function, origins []string) awsapigatewayv2.HttpApi {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:       jsii.String(stackName),
		Description:   jsii.String("Toolshed MCP and tool endpoints"),
		CorsPreflight: corsPreflight(origins),
	})
	authorizer := awsapigatewayv2authorizers.NewHttpLambdaAuthorizer(jsii.String("ApiKeyAuthorizer"), authorizerFn,
		&awsapigatewayv2authorizers.HttpLambdaAuthorizerProps{
			ResponseTypes:   &[]awsapigatewayv2authorizers.HttpLambdaResponseType{awsapigatewayv2authorizers.HttpLambdaResponseType_SIMPLE},
			IdentitySource:  jsii.Strings("$request.header.Authorization"),
			ResultsCacheTtl: awscdk.Duration_Seconds(jsii.Number(authorizerCacheSeconds)),
		})

	gatewayIntegration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("GatewayIntegration"), gateway, nil)
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path: jsii.String("/mcp"),
		Methods: &[]awsapigatewayv2.HttpMethod{
			awsapigatewayv2.HttpMethod_POST, awsapigatewayv2.HttpMethod_GET, awsapigatewayv2.HttpMethod_DELETE,
		},
		Integration: gatewayIntegration,
		Authorizer:  authorizer,
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/healthz"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
		Integration: gatewayIntegration,
	})

	for i, tool := range tools {
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(
			jsii.String(constructID(tool.Name)+"Integration"), toolFns[i], nil)
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			for _, prefix := range []string{"/v1/tools/", "/mcp/tool/"} {
				api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
					Path:        jsii.String(prefix + name),
					Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
					Integration: integration,
					Authorizer:  authorizer,
				})
			}
		}
	}
	return api
}

// corsPreflight is the HTTP API's CORS configuration: the methods, headers
// and max age of shared/cors (the policy the local server applies too) for
// origins. API Gateway answers preflights itself, before any authorizer
// (no route takes OPTIONS), and adds the CORS headers to the functions'
// answers.
func corsPreflight(origins []string) *awsapigatewayv2.CorsPreflightOptions {
	methods := make([]awsapigatewayv2.CorsHttpMethod, len(cors.AllowMethods))
	for i, m := range cors.AllowMethods {
		methods[i] = awsapigatewayv2.CorsHttpMethod(m)
	}
	return &awsapigatewayv2.CorsPreflightOptions{
		AllowOrigins:  jsii.Strings(origins...),
		AllowMethods:  &methods,
		AllowHeaders:  jsii.Strings(cors.AllowHeaders...),
		ExposeHeaders: jsii.Strings(cors.ExposeHeaders...),
		MaxAge:        awscdk.Duration_Seconds(jsii.Number(cors.MaxAgeSeconds)),
		// Callers authenticate with a bearer credential in the
		// Authorization header, which a page sends explicitly; no cookie
		// ever authenticates. Without credentials a cross-site page cannot
		// ride on a user's ambient login, and "*" stays a valid origin
		// (browsers refuse "*" together with credentials).
		AllowCredentials: jsii.Bool(false),
	}
}

// addMonitoring adds a dashboard row per function (invocations, errors,
// duration) and three alarms per function: any error in 5 minutes, any
// throttle in 5 minutes, and p99 duration above 80% of the timeout.
func addMonitoring(stack awscdk.Stack, watched []monitored) {
	period := awscdk.Duration_Minutes(jsii.Number(5))
	var rows []*[]awscloudwatch.IWidget
	for _, w := range watched {
		sum := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}
		p99 := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p99"), Label: jsii.String("p99")}
		avg := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Average"), Label: jsii.String("avg")}
		rows = append(rows, &[]awscloudwatch.IWidget{
			graph(w.Name+" invocations", w.Fn.MetricInvocations(sum)),
			graph(w.Name+" errors", w.Fn.MetricErrors(sum), w.Fn.MetricThrottles(sum)),
			graph(w.Name+" duration (ms)", w.Fn.MetricDuration(avg), w.Fn.MetricDuration(p99)),
		})

		id := constructID(w.Name)
		w.Fn.MetricErrors(sum).CreateAlarm(stack, jsii.String(id+"ErrorsAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String(fmt.Sprintf("%s: at least one error in 5 minutes", w.Name)),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		w.Fn.MetricThrottles(sum).CreateAlarm(stack, jsii.String(id+"ThrottlesAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String(fmt.Sprintf("%s: at least one throttle in 5 minutes", w.Name)),
			Threshold:          jsii.Number(1),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		// The alarm metric has no label: a labelled metric becomes a metric math alarm.
		p99Alarm := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p99")}
		w.Fn.MetricDuration(p99Alarm).CreateAlarm(stack, jsii.String(id+"DurationAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String(fmt.Sprintf("%s: p99 duration above 80%% of the %gs timeout", w.Name, w.TimeoutSeconds)),
			Threshold:          jsii.Number(w.TimeoutSeconds * 1000 * 0.8),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}
	awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(stackName),
		Widgets:       &rows,
	})
}

// graph is a third-of-a-row line graph of the given metrics.
func graph(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title),
		Left:  &metrics,
		Width: jsii.Number(8),
	})
}

// constructID turns a tool or function name into a construct id:
// "add_task" → "AddTask", "sys-audit" → "SysAudit".
func constructID(name string) string {
	var out []byte
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			out = append(out, c-'a'+'A')
			upper = false
		default:
			out = append(out, c)
			upper = false
		}
	}
	return string(out)
}

// buildDirFromEnv returns TOOLSHED_BUILD_DIR, or "../build" when it is unset.
func buildDirFromEnv() string {
	if dir := os.Getenv("TOOLSHED_BUILD_DIR"); dir != "" {
		return dir
	}
	return defaultBuildDir
}

// checkBuildDir reports a missing bootstrap early, with a hint, instead of
// letting asset staging fail with a bare path.
func checkBuildDir(buildDir string) error {
	for _, dir := range []string{gatewayName, authorizerDir, indexerDir, toolDir} {
		path := filepath.Join(buildDir, dir, "bootstrap")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("missing %s: run `make build` first or set TOOLSHED_BUILD_DIR", path)
		}
	}
	return nil
}

// contextDays reads a positive whole number of days from the CDK context
// (cdk deploy -c name=N); 0 when it is not given.
func contextDays(app awscdk.App, name string) (float64, error) {
	v := app.Node().TryGetContext(jsii.String(name))
	if v == nil {
		return 0, nil
	}
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("context %s=%v: use a positive whole number of days", name, v)
	}
	return float64(n), nil
}

// contextOrigins reads the browser origins allowed by the HTTP API's CORS
// from the CDK context (cdk deploy -c allowedOrigins=https://a.example,https://b.example):
// nil when it is not given (any origin), else each origin as a browser
// sends it, scheme://host[:port], or "*" alone.
func contextOrigins(app awscdk.App) ([]string, error) {
	v := app.Node().TryGetContext(jsii.String("allowedOrigins"))
	if v == nil {
		return nil, nil
	}
	list, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("context allowedOrigins=%v: use comma-separated origins, e.g. https://a.example,https://b.example", v)
	}
	var origins []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o != "*" && !isOrigin(o) {
			return nil, fmt.Errorf("context allowedOrigins: %q is not an origin: use scheme://host[:port], e.g. https://a.example, or *", o)
		}
		origins = append(origins, o)
	}
	if len(origins) == 0 {
		return nil, fmt.Errorf("context allowedOrigins=%q names no origin", list)
	}
	if len(origins) > 1 && slices.Contains(origins, "*") {
		return nil, fmt.Errorf("context allowedOrigins=%q: * allows every origin and stands alone", list)
	}
	return origins, nil
}

// isOrigin reports whether o is an origin as a browser sends it in the
// Origin header: http or https, a host, an optional port, nothing else.
func isOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		o == u.Scheme+"://"+u.Host
}

func main() {
	defer jsii.Close()

	buildDir := buildDirFromEnv()
	if err := checkBuildDir(buildDir); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}

	if err := deploy.CheckSettings(declaredSettings(toolset.Families), os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "infra: a setting in this environment would stop the functions from starting:", err)
		os.Exit(1)
	}

	app := awscdk.NewApp(nil)
	retention, err := contextDays(app, "snapshotRetentionDays")
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
	origins, err := contextOrigins(app)
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
	defaultRepo, _ := app.Node().TryGetContext(jsii.String("defaultRepo")).(string)
	if defaultRepo != "" {
		if err := tenant.Check(defaultRepo); err != nil {
			fmt.Fprintln(os.Stderr, "infra: defaultRepo:", err)
			os.Exit(1)
		}
	}
	NewToolshedStack(app, stackName, &ToolshedStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Toolshed: MCP tool server, one Lambda per tool behind an HTTP API"),
		},
		BuildDir:              buildDir,
		DefaultRepo:           defaultRepo,
		SnapshotRetentionDays: retention,
		AllowedOrigins:        origins,
	})
	app.Synth(nil)
}
