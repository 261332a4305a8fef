// Command infra is the Toolshed CDK app. It defines one stack, "Toolshed":
// the DynamoDB tables and the snapshot bucket (storage.go), the secret
// that authenticates the list tools' paging cursors, one Lambda
// function per tool, or one for the tools of a family deployed as one
// (derived from the tool registry in shared/toolset and the contracts:
// its routes, aliases, timeout, memory, reserved concurrency, environment,
// layers and IAM policy), the MCP gateway and the API
// key authorizer functions (functions.go), the HTTP API that routes to
// them, throttled, refusing unauthenticated calls to tools at the edge and
// logging every request (edge.go), the indexer and index worker functions
// that keep context_search's indexes, fed by the Memory table's stream,
// snapshot uploads and the index queue of batches, with queues for what
// they fail (indexer.go), the
// alarms, their SNS topic, the dashboard and saved Logs Insights queries
// (monitoring.go), and the outputs a user or script needs (outputs.go).
//
// A deployment is configured by the CDK context only (options.go): the
// app's options and the functions' settings, checked at synthesis.
//
// The functions' code comes from pre-built binaries in
// <BuildDir>/<function>/bootstrap (see `make build`); every tool function
// runs <BuildDir>/tool/bootstrap, and a function's layers come from
// <BuildDir>/<layer>-layer (the git program's: git-layer). BuildDir is "../build"
// unless the environment variable TOOLSHED_BUILD_DIR names another directory.
//
//	cd infra && npx cdk synth
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/stackoutputs"
)

// stackName is the CloudFormation stack name of the app.
const stackName = stackoutputs.DefaultStack

// defaultBuildDir holds build/<function>/bootstrap, relative to infra/.
const defaultBuildDir = "../build"

// ToolshedStackProps configures NewToolshedStack.
type ToolshedStackProps struct {
	awscdk.StackProps
	// BuildDir holds <function>/bootstrap for every function; "../build" if empty.
	BuildDir string
	// Options are the deployment's (readOptions); nil for the defaults.
	Options *options
}

// deployment builds the stack's parts, each step from what the steps
// before it made.
type deployment struct {
	stack    awscdk.Stack
	buildDir string
	opts     options
	// stackSettings are the functions' settings the stack gives them
	// when the deployment chose none (the cursor key's secret).
	stackSettings map[string]string

	tables     map[config.Table]awsdynamodb.Table
	bucket     awss3.Bucket
	toolFns    map[string]awslambda.Function      // by name (toolFunctions)
	layers     map[string]awslambda.ILayerVersion // by name (family.Layers)
	gateway    awslambda.Function
	authorizer awslambda.Function
	indexer    awslambda.Function
	failures   awssqs.Queue // the index events the indexer failed
	// The index worker, its queue of batches and the batches that failed
	// every receive.
	indexWorker      awslambda.Function
	indexQueue       awssqs.Queue
	indexDeadLetters awssqs.Queue
	// The embed queue: built parts' embed messages, apart from the
	// batches (infra/indexer.go), and those that failed every receive.
	embedQueue       awssqs.Queue
	embedDeadLetters awssqs.Queue
	api              awsapigatewayv2.HttpApi
	accessLogs       awslogs.LogGroup
	watched          []monitored // every function, for the alarms and the dashboard
	alarms           awssns.Topic
	dashboard        awscloudwatch.Dashboard
	// extraOutputs are outputs of the parts a deployment asked for (OAuth).
	extraOutputs []output
}

// NewToolshedStack builds the Toolshed stack.
func NewToolshedStack(scope constructs.Construct, id string, props *ToolshedStackProps) awscdk.Stack {
	p := withDefaults(props)
	stack := awscdk.NewStack(scope, &id, &p.StackProps)
	d := &deployment{stack: stack, buildDir: p.BuildDir, opts: *p.Options}

	d.newStorage()
	d.newCursorKey()
	d.newToolFunctions()
	d.newGateway()
	if !d.opts.OAuth.on() { // else the functions check credentials themselves
		d.newAuthorizer()
	}
	d.newIndexer()
	d.newHTTPAPI()
	d.addOAuth()
	d.addMonitoring()
	d.addOutputs()
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
	if p.Options == nil {
		opts, err := readOptions(nil)
		if err != nil {
			panic(fmt.Sprintf("the default options: %v", err))
		}
		p.Options = &opts
	}
	return p
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

// buildDirSetting names the folder holding build/<function>/bootstrap.
var buildDirSetting = settings.New("TOOLSHED_BUILD_DIR", defaultBuildDir,
	"the folder holding `build/<function>/bootstrap` that the CDK app stages, relative to infra/", settings.Text)

// buildDirFromEnv returns TOOLSHED_BUILD_DIR, or "../build" when it is unset.
func buildDirFromEnv() string {
	dir, _ := buildDirSetting.Get(os.Getenv) // settings.Text takes any value
	return dir
}

// checkBuildDir reports a missing bootstrap or layer early, with a hint,
// instead of letting asset staging fail with a bare path.
func checkBuildDir(buildDir string) error {
	var paths []string
	for _, dir := range []string{gatewayName, authorizerDir, indexerDir, toolDir} {
		paths = append(paths, filepath.Join(buildDir, dir, "bootstrap"))
	}
	for _, tf := range toolFunctions {
		for _, layer := range tf.Family.Layers {
			paths = append(paths, filepath.Join(buildDir, deploy.LayerFolder(layer)))
		}
	}
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("missing %s: run `make build` first or set %s", path, buildDirSetting.Name())
		}
	}
	return nil
}

func main() {
	defer jsii.Close()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

// run synthesizes the stack the context describes.
func run() error {
	buildDir := buildDirFromEnv()
	if err := checkBuildDir(buildDir); err != nil {
		return err
	}
	app := awscdk.NewApp(nil)
	values, err := contextValues(app)
	if err != nil {
		return err
	}
	opts, err := readOptions(values)
	if err != nil {
		return fmt.Errorf("the deployment's context: %w", err)
	}
	NewToolshedStack(app, stackName, &ToolshedStackProps{
		StackProps: awscdk.StackProps{
			Description: jsii.String("Toolshed: MCP tool server, one Lambda per tool behind an HTTP API"),
		},
		BuildDir: buildDir,
		Options:  &opts,
	})
	app.Synth(nil)
	return nil
}
