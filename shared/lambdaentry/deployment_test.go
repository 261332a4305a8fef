package lambdaentry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/toolset"
)

// bootstrapDir holds the functions' bootstraps, built for the host by
// TestMain as `make build` builds them for Lambda (version testVersion):
// tool, gateway, authorizer, indexer.
var bootstrapDir string

// testVersion is the version the bootstraps are built with, as make sets it.
const testVersion = "v0.0.0-test"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "toolshed-bootstraps-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := dynamotest.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-ldflags=-s -w -X main.version="+testVersion,
		"-o", dir+string(filepath.Separator), "./functions/tool", "./functions/gateway", "./functions/authorizer", "./functions/indexer")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the bootstraps: %v\n%s", err, out)
		return 1
	}
	bootstrapDir = dir
	return m.Run()
}

// The deployed settings infra/functions.go gives the gateway and the authorizer.
const (
	gatewayTimeout     = 29 * time.Second
	gatewayMemoryMB    = 512
	authorizerTimeout  = 5 * time.Second
	authorizerMemoryMB = 256
)

// deployment is a stand-in for the deployed stack: DynamoDB tables on
// dynalite, an S3 bucket on moto_server when a tool needs one, and the
// Lambda Invoke API. Functions run as real bootstrap processes with the
// environment the CDK app gives them, plus the emulators' endpoints.
type deployment struct {
	tb        testing.TB
	dynamo    *dynamotest.Server
	tables    dynamostore.Tables
	stores    store.Stores
	contracts *schema.Set
	lambda    *lambdatest.Service

	moto   *emulator.Moto
	bucket string
	tools  map[string]*lambdatest.Function // tool functions by tool
}

// newDeployment starts the emulators; everything stops when tb ends.
func newDeployment(tb testing.TB) *deployment {
	tb.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		tb.Fatal(err)
	}
	d := &deployment{tb: tb, dynamo: dynamotest.Start(tb), contracts: set, tools: map[string]*lambdatest.Function{}}
	d.tables = d.dynamo.NewTables(tb)
	d.stores = dynamostore.New(d.dynamo.Client(), d.tables)
	d.lambda, err = lambdatest.NewService("")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.lambda.Close() })
	return d
}

// start runs a function and makes it invocable through the Invoke API. It
// stops when the deployment's test ends.
func (d *deployment) start(tb testing.TB, cfg lambdatest.Config) *lambdatest.Function {
	tb.Helper()
	fn, err := lambdatest.Start(d.endpoints(cfg))
	if err != nil {
		tb.Fatal(err)
	}
	d.tb.Cleanup(fn.Stop)
	d.lambda.Add(fn)
	return fn
}

// endpoints returns cfg with the emulators' endpoints added to its
// environment.
func (d *deployment) endpoints(cfg lambdatest.Config) lambdatest.Config {
	cfg.Env = maps.Clone(cfg.Env)
	cfg.Env["AWS_ENDPOINT_URL_DYNAMODB"] = d.dynamo.Endpoint
	cfg.Env["AWS_ENDPOINT_URL_LAMBDA"] = d.lambda.URL()
	if d.moto != nil {
		cfg.Env["AWS_ENDPOINT_URL_SQS"] = d.moto.Endpoint
	}
	return cfg
}

// tool returns the function of a tool, started on first use and named
// toolFunctionName(tool).
func (d *deployment) tool(tb testing.TB, name string) *lambdatest.Function {
	tb.Helper()
	if fn, ok := d.tools[name]; ok {
		return fn
	}
	fn := d.start(tb, d.toolConfig(tb, name))
	d.tools[name] = fn
	return fn
}

func toolFunctionName(tool string) string { return "toolshed-" + tool }

// toolConfig is a tool function as infra/main.go deploys it, from the same
// derivation (deploy.Env, deploy.Timeout, Memory), with the
// emulators' tables and bucket (and the S3 endpoint that finds it).
func (d *deployment) toolConfig(tb testing.TB, tool string) lambdatest.Config {
	tb.Helper()
	fam, ok := family.Of(toolset.Families, tool)
	c, found := d.contracts.Get(tool)
	if !ok || !found {
		tb.Fatalf("no family or contract serves %q", tool)
	}
	dep := deploy.Deployment{
		TableName: func(t config.Table) string { return d.tableName(tb, t) },
		Getenv:    func(string) string { return "" },
	}
	if family.UsesBucket(deploy.Grants(fam, tool)) {
		dep.Bucket, _ = d.s3(tb)
	}
	env := deploy.Env(fam, tool, dep)
	if dep.Bucket != "" {
		_, env["TOOLSHED_S3_ENDPOINT"] = d.s3(tb)
	}
	return lambdatest.Config{
		Name:      toolFunctionName(tool),
		Bootstrap: filepath.Join(bootstrapDir, "tool"),
		Env:       env,
		Timeout:   deploy.Timeout(c.TimeoutMs),
		MemoryMB:  fam.Memory(),
	}
}

// gatewayConfig is the gateway as deployed, with TOOLSHED_TOOL_FUNCTIONS
// mapping each tool to its function.
func (d *deployment) gatewayConfig(tb testing.TB, functions map[string]string) lambdatest.Config {
	tb.Helper()
	m, err := json.Marshal(functions)
	if err != nil {
		tb.Fatal(err)
	}
	return lambdatest.Config{
		Name:      "toolshed-gateway",
		Bootstrap: filepath.Join(bootstrapDir, "gateway"),
		Env:       map[string]string{"TOOLSHED_TOOL_FUNCTIONS": string(m)},
		Timeout:   gatewayTimeout,
		MemoryMB:  gatewayMemoryMB,
	}
}

// authorizerConfig is the authorizer as deployed.
func (d *deployment) authorizerConfig() lambdatest.Config {
	return lambdatest.Config{
		Name:      "toolshed-authorizer",
		Bootstrap: filepath.Join(bootstrapDir, "authorizer"),
		Env: map[string]string{
			"TOOLSHED_STORE":                      "dynamodb",
			config.TableVars[config.APIKeysTable]: d.tables.APIKeys,
		},
		Timeout:  authorizerTimeout,
		MemoryMB: authorizerMemoryMB,
	}
}

func (d *deployment) tableName(tb testing.TB, t config.Table) string {
	tb.Helper()
	names := map[config.Table]string{
		config.TasksTable:      d.tables.Tasks,
		config.MemoryTable:     d.tables.Memory,
		config.RateLimitsTable: d.tables.RateLimits,
		config.AccessTable:     d.tables.Access,
		config.APIKeysTable:    d.tables.APIKeys,
	}
	name, ok := names[t]
	if !ok {
		tb.Fatalf("no test table for %s", t)
	}
	return name
}

// s3 returns the bucket and the S3 endpoint, starting moto_server the first
// time a tool needs them.
func (d *deployment) s3(tb testing.TB) (bucket, endpoint string) {
	tb.Helper()
	if d.moto == nil {
		d.moto = emulator.StartMoto(d.tb)
		d.bucket = d.moto.NewBucket(d.tb)
	}
	return d.bucket, d.moto.Endpoint
}

// keys creates two keys of tenant acme in the API keys table: good, and
// revoked (named "old").
func (d *deployment) keys(tb testing.TB) (good, revoked string) {
	tb.Helper()
	ctx := context.Background()
	good, _, err := auth.Create(ctx, d.stores.APIKeys, "acme", "ci", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	revoked, rec, err := auth.Create(ctx, d.stores.APIKeys, "acme", "old", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := d.stores.APIKeys.Revoke(ctx, rec.Hash, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return good, revoked
}

// invoke runs one invocation and fails the test if it cannot.
func invoke(tb testing.TB, fn *lambdatest.Function, event []byte) lambdatest.Response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := fn.Invoke(ctx, event)
	if err != nil {
		tb.Fatalf("invoke %s: %v\noutput:\n%s", fn.Name, err, fn.Output())
	}
	return resp
}

// directEvent is the gateway's direct invocation of a tool.
func directEvent(tool, args, tenant, requestID string) []byte {
	return fmt.Appendf(nil, `{"tool":%s,"args":%s,"tenant":%s,"requestId":%s}`,
		strconv.Quote(tool), args, strconv.Quote(tenant), strconv.Quote(requestID))
}
