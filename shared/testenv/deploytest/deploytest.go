// Package deploytest stands in for the deployed stack on this machine: the
// functions' real bootstraps, built for the host, run as processes under
// the Lambda harness (shared/testenv/lambdatest) with the environment,
// timeout, memory and layers the CDK app gives them, on DynamoDB tables (dynalite),
// an S3 bucket (moto_server, started when a function needs it) and the
// Lambda Invoke API. The bootstrap tests and `make bench-scale` use it.
//
//	dir := t.TempDir()
//	err := deploytest.BuildBootstraps(dir, "v0.0.0-test")
//	s := deploytest.New(t, dir)
//	fn := s.Tool(t, "grep_codebase")          // started on first use
//	resp, err := fn.Invoke(ctx, deploytest.DirectEvent("grep_codebase", `{"pattern":"x"}`, "acme", "r1"))
package deploytest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Bootstraps are the functions BuildBootstraps builds, each into a file
// of its name.
var Bootstraps = []string{"tool", "gateway", "authorizer", "indexer"}

// BuildBootstraps builds the functions' bootstraps for the host into dir,
// as `make build` builds them for Lambda, stamped with version. It runs
// from the repository's root.
func BuildBootstraps(dir, version string) error {
	args := []string{"-tags", "lambda.norpc", "-ldflags=-s -w -X main.version=" + version, "-o", dir + string(filepath.Separator)}
	for _, b := range Bootstraps {
		args = append(args, "./functions/"+b)
	}
	return goCommand("the bootstraps", append([]string{"build"}, args...)...)
}

// BuildSnapshotCLI builds scripts/snapshot for the host into dir and
// returns the binary's path (see Stack.SnapshotPush).
func BuildSnapshotCLI(dir string) (string, error) {
	cli := filepath.Join(dir, "snapshot")
	if err := goCommand("scripts/snapshot", "build", "-o", cli, "./scripts/snapshot"); err != nil {
		return "", err
	}
	return cli, nil
}

// goCommand runs the go command with args (build, run) from the
// repository's root; what names what it makes in the error.
func goCommand(what string, args ...string) error {
	root, err := dynamotest.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make %s: %v\n%s", what, err, out)
	}
	return nil
}

// The deployed settings of the functions that are not tools (deploy
// declares them for the CDK app too).
const (
	GatewayTimeout     = deploy.GatewayTimeoutSeconds * time.Second
	GatewayMemoryMB    = deploy.GatewayMemoryMB
	AuthorizerTimeout  = deploy.AuthorizerTimeoutSeconds * time.Second
	AuthorizerMemoryMB = deploy.AuthorizerMemoryMB
	IndexerTimeout     = deploy.IndexerTimeoutSeconds * time.Second
	IndexerMemoryMB    = deploy.IndexerMemoryMB
)

// CursorKey is the key of the paging cursors every function of a Stack
// is given.
const CursorKey = "deploytest-cursor-key-0123456789abcdef"

// Stack is a stand-in for the deployed stack: DynamoDB tables on dynalite,
// an S3 bucket on moto_server once a function needs one, and the Lambda
// Invoke API. Functions run as real bootstrap processes with the
// environment the CDK app gives them, plus the emulators' endpoints.
type Stack struct {
	Dynamo    *dynamotest.Server
	Tables    dynamostore.Tables
	Stores    store.Stores
	Contracts *schema.Set
	Lambda    *lambdatest.Service
	// Moto and Bucket are set once S3 has been asked for (see S3).
	Moto   *emulator.Moto
	Bucket string

	tb         testing.TB
	bootstraps string
	tools      map[string]*lambdatest.Function // tool functions by function name (deploy.Function)
}

// New starts the emulators and the Invoke API, with the bootstraps built
// into dir (BuildBootstraps). Everything stops when tb ends.
func New(tb testing.TB, dir string) *Stack {
	tb.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Stack{tb: tb, bootstraps: dir, Dynamo: dynamotest.Start(tb), Contracts: set, tools: map[string]*lambdatest.Function{}}
	s.Tables = s.Dynamo.NewTables(tb)
	s.Stores = dynamostore.New(s.Dynamo.Client(), s.Tables)
	s.Lambda, err = lambdatest.NewService("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Lambda.Close() })
	return s
}

// Start runs a function and makes it invocable through the Invoke API. It
// stops when the stack's test ends.
func (s *Stack) Start(tb testing.TB, cfg lambdatest.Config) *lambdatest.Function {
	tb.Helper()
	fn, err := lambdatest.Start(s.Endpoints(cfg))
	if err != nil {
		tb.Fatal(err)
	}
	s.tb.Cleanup(fn.Stop)
	s.Lambda.Add(fn)
	return fn
}

// Endpoints returns cfg with the emulators' endpoints added to its
// environment (SQS once S3 has been asked for: moto serves both).
func (s *Stack) Endpoints(cfg lambdatest.Config) lambdatest.Config {
	cfg.Env = maps.Clone(cfg.Env)
	cfg.Env["AWS_ENDPOINT_URL_DYNAMODB"] = s.Dynamo.Endpoint
	cfg.Env["AWS_ENDPOINT_URL_LAMBDA"] = s.Lambda.URL()
	if s.Moto != nil {
		cfg.Env["AWS_ENDPOINT_URL_SQS"] = s.Moto.Endpoint
	}
	return cfg
}

// Tool returns the function serving a tool, started on first use and
// named ToolFunctionName(tool): the tools of a family deployed as one
// function get the same one.
func (s *Stack) Tool(tb testing.TB, tool string) *lambdatest.Function {
	tb.Helper()
	name := ToolFunctionName(tool)
	if fn, ok := s.tools[name]; ok {
		return fn
	}
	fn := s.Start(tb, s.ToolConfig(tb, tool))
	s.tools[name] = fn
	return fn
}

// ToolFunctionName is the name of the function serving tool (that of its
// deploy.Function); "" for a tool no family serves.
func ToolFunctionName(tool string) string {
	fn, ok := deploy.FunctionOf(toolset.Families, tool)
	if !ok {
		return ""
	}
	return "toolshed-" + fn.Name
}

// ToolConfig is the function serving a tool as infra/main.go deploys it,
// from the same derivation (deploy.Functions, deploy.Env,
// deploy.FunctionTimeout, the family's memory and layers, the layers laid
// out for the host), with the emulators' tables and bucket (and the S3
// endpoint that finds it).
func (s *Stack) ToolConfig(tb testing.TB, tool string) lambdatest.Config {
	tb.Helper()
	fn, ok := deploy.FunctionOf(toolset.Families, tool)
	if !ok {
		tb.Fatalf("no family serves %q", tool)
	}
	timeout, err := deploy.FunctionTimeout(fn, s.Contracts)
	if err != nil {
		tb.Fatal(err)
	}
	dep := deploy.Deployment{
		TableName: func(t config.Table) string { return s.TableName(tb, t) },
		Getenv:    func(string) string { return "" },
	}
	if family.UsesBucket(deploy.Grants(fn)) {
		dep.Bucket, _ = s.S3(tb)
	}
	env := deploy.Env(fn, dep)
	if dep.Bucket != "" {
		_, env[config.S3Endpoint.Name()] = s.S3(tb)
	}
	// Deployed, the functions that page read the cursor key from the
	// secret the CDK app generates (see TOOLSHED_SECRET_PARAMETERS); here
	// every function of the stack is given the same key as it is.
	if slices.ContainsFunc(fn.Settings(), func(v settings.Setting) bool { return v.Name() == wiring.CursorKey.Name() }) {
		env[wiring.CursorKey.Name()] = CursorKey
	}
	var layers []string
	for _, layer := range fn.Family.Layers {
		layers = append(layers, s.layer(tb, layer))
	}
	return lambdatest.Config{
		Name:      ToolFunctionName(tool),
		Bootstrap: filepath.Join(s.bootstraps, "tool"),
		Env:       env,
		Timeout:   timeout,
		MemoryMB:  fn.Family.Memory(),
		Layers:    layers,
	}
}

// layer returns the folder of a Lambda layer laid out for the host next
// to the bootstraps, as `make build` lays it out for Lambda, laying it
// out the first time a function needs it.
func (s *Stack) layer(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join(s.bootstraps, deploy.LayerFolder(name))
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	if name != family.GitLayer {
		tb.Fatalf("no way to lay out the layer %q", name)
	}
	if err := goCommand("the git layer", "run", "./scripts/gitlayer", "-o", dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// GatewayConfig is the gateway as deployed, with TOOLSHED_TOOL_FUNCTIONS
// mapping each tool to its function.
func (s *Stack) GatewayConfig(tb testing.TB, functions map[string]string) lambdatest.Config {
	tb.Helper()
	m, err := json.Marshal(functions)
	if err != nil {
		tb.Fatal(err)
	}
	return lambdatest.Config{
		Name:      "toolshed-gateway",
		Bootstrap: filepath.Join(s.bootstraps, "gateway"),
		Env:       map[string]string{config.ToolFunctions.Name(): string(m)},
		Timeout:   GatewayTimeout,
		MemoryMB:  GatewayMemoryMB,
	}
}

// AuthorizerConfig is the authorizer as deployed.
func (s *Stack) AuthorizerConfig() lambdatest.Config {
	return lambdatest.Config{
		Name:      "toolshed-authorizer",
		Bootstrap: filepath.Join(s.bootstraps, "authorizer"),
		Env: map[string]string{
			config.Store.Name(): string(config.StoreDynamoDB),
			config.TableSettings[config.APIKeysTable].Name(): s.Tables.APIKeys,
		},
		Timeout:  AuthorizerTimeout,
		MemoryMB: AuthorizerMemoryMB,
	}
}

// IndexerConfig is the indexer as deployed (infra/indexer.go), on the
// bucket, lexical only: the deployed default embedder (Bedrock) cannot be
// called here.
func (s *Stack) IndexerConfig(tb testing.TB) lambdatest.Config {
	tb.Helper()
	bucket, endpoint := s.S3(tb)
	env := maps.Clone(indexer.Env)
	env[config.Bucket.Name()] = bucket
	env[config.S3Endpoint.Name()] = endpoint
	env[embedding.Kind.Name()] = embedding.KindNone
	return lambdatest.Config{
		Name:      "toolshed-indexer",
		Bootstrap: filepath.Join(s.bootstraps, "indexer"),
		Env:       env,
		Timeout:   IndexerTimeout,
		MemoryMB:  IndexerMemoryMB,
	}
}

// TableName is the name of a table of the stack.
func (s *Stack) TableName(tb testing.TB, t config.Table) string {
	tb.Helper()
	names := map[config.Table]string{
		config.TasksTable:      s.Tables.Tasks,
		config.MemoryTable:     s.Tables.Memory,
		config.RateLimitsTable: s.Tables.RateLimits,
		config.AccessTable:     s.Tables.Access,
		config.APIKeysTable:    s.Tables.APIKeys,
	}
	name, ok := names[t]
	if !ok {
		tb.Fatalf("no test table for %s", t)
	}
	return name
}

// S3 returns the bucket and the S3 endpoint, starting moto_server the first
// time a function needs them.
func (s *Stack) S3(tb testing.TB) (bucket, endpoint string) {
	tb.Helper()
	if s.Moto == nil {
		s.Moto = emulator.StartMoto(s.tb)
		s.Bucket = s.Moto.NewBucket(s.tb)
	}
	return s.Bucket, s.Moto.Endpoint
}

// SnapshotPush is the command `snapshot push args...` of cli (built by
// BuildSnapshotCLI) publishing to the stack's bucket, with dummy
// credentials; moto_server is started if it is not yet.
func (s *Stack) SnapshotPush(tb testing.TB, cli string, args ...string) *exec.Cmd {
	tb.Helper()
	bucket, endpoint := s.S3(tb)
	cmd := exec.Command(cli, append([]string{"push"}, args...)...)
	cmd.Env = append(os.Environ(), config.Bucket.Name()+"="+bucket, config.S3Endpoint.Name()+"="+endpoint,
		"AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy", "AWS_REGION=us-east-1")
	return cmd
}

// Invoke runs one invocation and fails tb if it cannot.
func Invoke(tb testing.TB, fn *lambdatest.Function, event []byte) lambdatest.Response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := fn.Invoke(ctx, event)
	if err != nil {
		tb.Fatalf("invoke %s: %v\noutput:\n%s", fn.Name, err, fn.Output())
	}
	return resp
}

// DirectEvent is the gateway's direct invocation of a tool.
func DirectEvent(tool, args, tenant, requestID string) []byte {
	return fmt.Appendf(nil, `{"tool":%s,"args":%s,"tenant":%s,"requestId":%s}`,
		strconv.Quote(tool), args, strconv.Quote(tenant), strconv.Quote(requestID))
}
