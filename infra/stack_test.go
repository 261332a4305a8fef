package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/servercard"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/workspace"
)

// Synthesis starts node (jsii) and takes seconds, so TestMain synthesizes the
// stack once and every test reads the shared template.
var (
	stack    awscdk.Stack
	template assertions.Template
	synth    cfnTemplate // the same template, decoded for plain Go checks
	buildDir string      // the placeholder bootstraps, for tests that synthesize another stack
)

// cfnTemplate is the part of a CloudFormation template the tests read.
type cfnTemplate struct {
	Resources map[string]cfnResource `json:"Resources"`
	Outputs   map[string]cfnOutput   `json:"Outputs"`
}

type cfnResource struct {
	Type                string         `json:"Type"`
	Properties          map[string]any `json:"Properties"`
	DeletionPolicy      string         `json:"DeletionPolicy"`
	UpdateReplacePolicy string         `json:"UpdateReplacePolicy"`
}

type cfnOutput struct {
	Value any `json:"Value"`
}

// The stack under test has a default repository, keeps old snapshots 45
// days, and chose some of the functions' settings (a secret among them);
// the environment it synthesizes in sets every declared setting
// (shellValue), which must reach no function.
const (
	testDefaultRepo   = "demo"
	testRetentionDays = 45
	testKeyParameter  = "/toolshed/test/embed-key"
	shellValue        = "from-the-shell-not-the-context"
)

// testContext is the CDK context of the stack under test.
var testContext = map[string]string{
	"defaultRepo":                    testDefaultRepo,
	"snapshotRetentionDays":          "45",
	"TOOLSHED_FETCH_ALLOWED_DOMAINS": "docs.python.org,*.go.dev",
	"TOOLSHED_EMBEDDER":              "openai",
	"TOOLSHED_EMBED_URL":             "https://api.openai.com/v1",
	"TOOLSHED_EMBED_MODEL":           "text-embedding-3-small",
	"TOOLSHED_EMBED_KEY":             "ssm:" + testKeyParameter,
	"TOOLSHED_RATE_LIMITS":           "hello=600",
	"TOOLSHED_REPO_DENY":             "*.sqlite",
	"TOOLSHED_INDEX_BATCH_FILES":     "500",
}

// allFunctionDirs are the build folders the stack expects.
var allFunctionDirs = []string{gatewayName, authorizerDir, indexerDir, toolDir}

// otherFunctions are the functions that are not tools: timeout and memory.
var otherFunctions = map[string]struct{ timeout, memory float64 }{
	gatewayName:   {deploy.GatewayTimeoutSeconds, deploy.GatewayMemoryMB},
	authorizerDir: {deploy.AuthorizerTimeoutSeconds, deploy.AuthorizerMemoryMB},
	indexerDir:    {deploy.IndexerTimeoutSeconds, deploy.IndexerMemoryMB},
	// The index worker runs the indexer's bootstrap.
	indexWorkerName: {deploy.IndexWorkerTimeoutSeconds, deploy.IndexWorkerMemoryMB},
}

// notificationHandlers is the function CDK adds to configure the bucket's
// Lambda notifications (one per stack, whatever the number of them).
const notificationHandlers = 1

// streamTables counts the tables whose stream the indexer reads.
func streamTables() int {
	n := 0
	for _, tbl := range dynamostore.Schemas {
		if tbl.Stream {
			n++
		}
	}
	return n
}

// ourFunctions returns the logical ids of the stack's own functions (our
// bootstrap binaries), leaving out CDK's notification handler.
func ourFunctions() map[string]cfnResource {
	out := map[string]cfnResource{}
	for id, r := range resourcesOfType("AWS::Lambda::Function") {
		if r.Properties["Handler"] == "bootstrap" {
			out[id] = r
		}
	}
	return out
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	// Keep the test output readable on machines with an end-of-life node
	// (the machine's node 20); `cdk synth` still shows the warning.
	os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,19,20,21,23")
	defer jsii.Close()

	var err error
	buildDir, err = os.MkdirTemp("", "toolshed-build-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(buildDir)
	if err := writePlaceholderBuild(buildDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	outDir, err := os.MkdirTemp("", "toolshed-cdkout-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(outDir)

	for _, s := range declaredSettings(toolset.Families) {
		os.Setenv(s.Name(), shellValue)
	}
	opts, err := readOptions(testContext)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outDir)})
	stack = NewToolshedStack(app, stackName, &ToolshedStackProps{BuildDir: buildDir, Options: &opts})
	template = assertions.Template_FromStack(stack, nil)
	if synth, err = decode(template); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// decode decodes a synthesized template for plain Go checks.
func decode(tmpl assertions.Template) (cfnTemplate, error) {
	var out cfnTemplate
	raw, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(raw, &out)
}

// writePlaceholderBuild creates <dir>/<function>/bootstrap for every
// function, and <dir>/git-layer/bin/git for the git layer.
func writePlaceholderBuild(dir string) error {
	files := []string{filepath.Join(deploy.LayerFolder(family.GitLayer), "bin", "git")}
	for _, fn := range allFunctionDirs {
		files = append(files, filepath.Join(fn, "bootstrap"))
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// ---- helpers over the decoded template ----

// must runs an assertions call, which throws (a Go panic) on mismatch, and
// reports the mismatch as a test error instead of ending the test binary.
func must(t *testing.T, check func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%v", r)
		}
	}()
	check()
}

// resourcesOfType returns logical id → resource for one CloudFormation type.
func resourcesOfType(typ string) map[string]cfnResource { return resourcesIn(synth, typ) }

// resourcesIn returns logical id → resource for one CloudFormation type in tmpl.
func resourcesIn(tmpl cfnTemplate, typ string) map[string]cfnResource {
	out := map[string]cfnResource{}
	for id, r := range tmpl.Resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// logicalID returns the logical id of the CloudFormation resource behind the
// construct at the given id directly under the stack (e.g. "GatewayFunction").
func logicalID(t *testing.T, constructID string) string {
	t.Helper()
	child := stack.Node().TryFindChild(jsii.String(constructID))
	if child == nil {
		t.Fatalf("no construct %q in the stack", constructID)
	}
	cfn, ok := child.Node().DefaultChild().(awscdk.CfnElement)
	if !ok {
		t.Fatalf("construct %q has no CloudFormation resource", constructID)
	}
	return *stack.GetLogicalId(cfn)
}

// functionID returns the logical id of the Lambda function for a tool or "gateway"/"authorizer".
func functionID(t *testing.T, name string) string {
	t.Helper()
	return logicalID(t, constructID(name)+"Function")
}

// tableIDs maps a table ("Tasks", ...) to its logical id.
func tableIDs(t *testing.T) map[config.Table]string {
	t.Helper()
	out := map[config.Table]string{}
	for _, tbl := range dynamostore.Schemas {
		out[tbl.Table] = logicalID(t, string(tbl.Table)+"Table")
	}
	return out
}

// ref and getAtt build the intrinsic functions as they appear in the decoded template.
func ref(id string) map[string]any { return map[string]any{"Ref": id} }
func getAttArn(id string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{id, "Arn"}}
}

// equalJSON compares two decoded JSON values.
func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if err := errors.Join(errA, errB); err != nil {
		panic(fmt.Sprintf("equalJSON: %v", err)) // never compare two failures as equal
	}
	return string(ja) == string(jb)
}

// asList returns v as a list, wrapping a single value.
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// statements returns the statements of every policy attached to the role
// of function fnID, as written in the template (actions, resources and
// conditions), leaving out the X-Ray grant on "*" that active tracing adds
// and the writing of the function's own log group (TestLogPermissions).
func statements(t *testing.T, fnID string) []map[string]any {
	t.Helper()
	return statementsIn(t, synth, fnID)
}

// statementsIn is statements of function fnID in tmpl.
func statementsIn(t *testing.T, tmpl cfnTemplate, fnID string) []map[string]any {
	t.Helper()
	fn := tmpl.Resources[fnID]
	role, ok := fn.Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any)
	if !ok {
		t.Fatalf("function %s: role is not a GetAtt: %v", fnID, fn.Properties["Role"])
	}
	roleID := role[0].(string)

	var out []map[string]any
	found := false
	for _, p := range resourcesIn(tmpl, "AWS::IAM::Policy") {
		if !slices.ContainsFunc(asList(p.Properties["Roles"]), func(r any) bool { return equalJSON(r, ref(roleID)) }) {
			continue
		}
		found = true
		for _, s := range asList(p.Properties["PolicyDocument"].(map[string]any)["Statement"]) {
			stmt := s.(map[string]any)
			if isXRay(actionsOf(stmt)) && equalJSON(stmt["Resource"], "*") || equalJSON(stmt, logWriting(tmpl, fnID)) {
				continue
			}
			out = append(out, stmt)
		}
	}
	if !found {
		t.Fatalf("function %s: no policy attached to role %s", fnID, roleID)
	}
	return out
}

// logWriting is the statement that lets function fnID write its own log
// group, and nothing else.
func logWriting(tmpl cfnTemplate, fnID string) map[string]any {
	lg, _ := tmpl.Resources[fnID].Properties["LoggingConfig"].(map[string]any)["LogGroup"].(map[string]any)
	return map[string]any{"Action": []any{"logs:CreateLogStream", "logs:PutLogEvents"}, "Effect": "Allow",
		"Resource": getAttArn(fmt.Sprint(lg["Ref"]))}
}

// actionsOf returns a statement's actions as a list.
func actionsOf(stmt map[string]any) []string {
	var actions []string
	for _, a := range asList(stmt["Action"]) {
		actions = append(actions, a.(string))
	}
	return actions
}

// roleActions returns, for the function's role, resource (as JSON) → sorted
// actions (X-Ray aside, as in statements); every statement must Allow.
func roleActions(t *testing.T, fnID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, stmt := range statements(t, fnID) {
		if stmt["Effect"] != "Allow" {
			t.Errorf("function %s: unexpected %v statement", fnID, stmt["Effect"])
		}
		for _, r := range asList(stmt["Resource"]) {
			key, _ := json.Marshal(r)
			out[string(key)] = append(out[string(key)], actionsOf(stmt)...)
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func isXRay(actions []string) bool {
	for _, a := range actions {
		if !strings.HasPrefix(a, "xray:") {
			return false
		}
	}
	return len(actions) > 0
}

// expectedRouteKeys lists every route the API must have.
func expectedRouteKeys() []string {
	keys := []string{"GET /healthz", "GET " + servercard.Path}
	for _, path := range auth.MCPPaths {
		keys = append(keys, "POST "+path, "GET "+path, "DELETE "+path)
	}
	for _, tool := range tools {
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			keys = append(keys, "POST /v1/tools/"+name, "POST /mcp/tool/"+name)
		}
	}
	return keys
}

// ---- tests ----

func TestResourceCounts(t *testing.T) {
	functions := len(toolFunctions) + len(otherFunctions) // every tool function, the gateway, the authorizer, the indexer and its worker
	routeNames := 0
	for _, tool := range tools {
		routeNames += 1 + len(tool.Aliases)
	}
	alarms := 3*functions + // errors, throttles, duration of each function
		3*len(tools) + // each tool's error rate, p99 and rate-limited share (EMF)
		2 + // the HTTP API's 5xx share and latency
		len(dynamostore.Schemas) + // each table's throttles
		4 // the indexer's failure queue and iterator age, the index and embed dead letters
	tests := []struct {
		typ  string
		want int
	}{
		{"AWS::Lambda::Function", functions + notificationHandlers},
		{"AWS::Logs::LogGroup", functions + 1}, // and the HTTP API's access log
		{"AWS::IAM::Role", functions + notificationHandlers},
		{"AWS::Lambda::EventSourceMapping", streamTables() + 2}, // and the index and embed queues'
		{"AWS::Lambda::EventInvokeConfig", 1},                   // the indexer's, for S3's events
		{"AWS::SQS::Queue", 5},                                  // the indexer's failures, the index and embed queues and their dead letters
		{"Custom::S3BucketNotifications", 1},
		{"AWS::DynamoDB::Table", len(dynamostore.Schemas)},
		{"AWS::S3::Bucket", 1},
		{"AWS::ApiGatewayV2::Api", 1},
		{"AWS::ApiGatewayV2::Stage", 1},
		{"AWS::ApiGatewayV2::Authorizer", 2},                                  // the tools' routes', /mcp's
		{"AWS::ApiGatewayV2::Integration", 1 + len(toolFunctions)},            // the gateway and each tool function
		{"AWS::Lambda::LayerVersion", 1},                                      // the git layer
		{"AWS::ApiGatewayV2::Route", 2 + 3*len(auth.MCPPaths) + 2*routeNames}, // /healthz and the server card, 3 on each MCP path, 2 per name
		{"AWS::CloudWatch::Alarm", alarms},
		{"AWS::SNS::Topic", 1},
		{"AWS::SecretsManager::Secret", 1}, // the cursor key
		{"AWS::SNS::Subscription", 0},      // without -c alarmEmail
		{"AWS::Logs::QueryDefinition", len(savedQueries)},
		{"AWS::CloudWatch::Dashboard", 1},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			must(t, func() {
				template.ResourceCountIs(jsii.String(tt.typ), jsii.Number(float64(tt.want)))
			})
		})
	}
}

// cloudFormationResourceLimit is the most resources one CloudFormation
// stack may have
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html).
const cloudFormationResourceLimit = 500

// TestUnderResourceLimit checks the stack stays deployable: CloudFormation
// refuses a template of more than cloudFormationResourceLimit resources.
func TestUnderResourceLimit(t *testing.T) {
	t.Logf("the stack has %d resources (CloudFormation's limit: %d)", len(synth.Resources), cloudFormationResourceLimit)
	if len(synth.Resources) > cloudFormationResourceLimit {
		t.Errorf("the stack has %d resources, over CloudFormation's limit of %d", len(synth.Resources), cloudFormationResourceLimit)
	}
}

// TestLayers: the git layer is one layer version for the functions'
// runtime and architecture, attached to the functions of the families
// that declare it (the history tools' one function) and no other; each
// tool function has its family's ephemeral storage.
func TestLayers(t *testing.T) {
	layers := resourcesOfType("AWS::Lambda::LayerVersion")
	if len(layers) != 1 {
		t.Fatalf("%d layer versions, want the git layer alone", len(layers))
	}
	id := logicalID(t, constructID(family.GitLayer)+"Layer")
	p := synth.Resources[id].Properties
	if !equalJSON(p["CompatibleArchitectures"], []string{deploy.Architecture}) || !equalJSON(p["CompatibleRuntimes"], []string{"provided.al2023"}) {
		t.Errorf("the git layer: %v", p)
	}
	for _, fn := range toolFunctions {
		props := synth.Resources[functionID(t, fn.Name)].Properties
		var want any
		if slices.Contains(fn.Family.Layers, family.GitLayer) {
			want = []any{ref(id)}
		}
		if !equalJSON(props["Layers"], want) {
			t.Errorf("%s: layers %v, want %v", fn.Name, props["Layers"], want)
		}
		var storage any
		if fn.StorageMB > 0 {
			storage = map[string]any{"Size": fn.StorageMB}
		}
		if !equalJSON(props["EphemeralStorage"], storage) {
			t.Errorf("%s: ephemeral storage %v, want %v", fn.Name, props["EphemeralStorage"], storage)
		}
	}
	// Anchors: the history tools' function has the layer and 4 GB of /tmp.
	history := synth.Resources[functionID(t, "history")].Properties
	if !equalJSON(history["Layers"], []any{ref(id)}) || !equalJSON(history["EphemeralStorage"], map[string]any{"Size": 4096}) {
		t.Errorf("the history function: layers %v, storage %v", history["Layers"], history["EphemeralStorage"])
	}
}

func TestFunctions(t *testing.T) {
	type want struct {
		timeout, memory float64
	}
	tests := map[string]want{}
	for name, f := range otherFunctions {
		tests[name] = want{f.timeout, f.memory}
	}
	for _, fn := range toolFunctions {
		tests[fn.Name] = want{fn.TimeoutSeconds, fn.MemoryMB}
	}
	// Anchors, so that a wrong derivation cannot pass by agreeing with itself:
	// hello's contract allows 2 s, add_task's 5 s; the history tools' one
	// function waits for the slowest of them (10 s each today).
	for name, w := range map[string]want{"hello": {5, 256}, "add_task": {8, 256}, "history": {13, 2048}} {
		if tests[name] != w {
			t.Errorf("%s: derived %+v, want %+v", name, tests[name], w)
		}
	}
	if got := len(ourFunctions()); got != len(tests) {
		t.Errorf("functions: got %d, want %d", got, len(tests))
	}
	logGroups := resourcesOfType("AWS::Logs::LogGroup")
	for name, w := range tests {
		t.Run(name, func(t *testing.T) {
			fn := synth.Resources[functionID(t, name)]
			p := fn.Properties
			checks := []struct {
				field string
				got   any
				want  any
			}{
				{"Runtime", p["Runtime"], "provided.al2023"},
				{"Architectures", p["Architectures"], []any{deploy.Architecture}},
				{"Handler", p["Handler"], "bootstrap"},
				{"TracingConfig", p["TracingConfig"], map[string]any{"Mode": "Active"}},
				{"Timeout", p["Timeout"], w.timeout},
				{"MemorySize", p["MemorySize"], w.memory},
			}
			for _, c := range checks {
				if !equalJSON(c.got, c.want) {
					t.Errorf("%s: got %v, want %v", c.field, c.got, c.want)
				}
			}
			lg, _ := p["LoggingConfig"].(map[string]any)["LogGroup"].(map[string]any)
			if _, ok := logGroups[fmt.Sprint(lg["Ref"])]; !ok {
				t.Errorf("LoggingConfig.LogGroup = %v, want a Ref to a log group of the stack", lg)
			}
			if _, other := otherFunctions[name]; w.timeout >= deploy.GatewayTimeoutSeconds && !other {
				t.Errorf("timeout %g s is not below the gateway's %d s", w.timeout, deploy.GatewayTimeoutSeconds)
			}
			if name == gatewayName && w.timeout >= 30 {
				t.Errorf("the gateway's timeout %g s is not below API Gateway's 30 s", w.timeout)
			}
		})
	}
}

func TestEveryFunctionIsArmAl2023Traced(t *testing.T) {
	for id, fn := range resourcesOfType("AWS::Lambda::Function") {
		p := fn.Properties
		if p["Handler"] != "bootstrap" {
			// CDK's handler of Custom::S3BucketNotifications (inline Python).
			if desc, _ := p["Description"].(string); !strings.Contains(desc, "S3BucketNotifications") {
				t.Errorf("function %s is neither ours nor CDK's notification handler: %v", id, p)
			}
			continue
		}
		if p["Runtime"] != "provided.al2023" || !equalJSON(p["Architectures"], []any{deploy.Architecture}) ||
			!equalJSON(p["TracingConfig"], map[string]any{"Mode": "Active"}) {
			t.Errorf("function %s: runtime %v, architectures %v, tracing %v", id, p["Runtime"], p["Architectures"], p["TracingConfig"])
		}
	}
}

func TestEnvironment(t *testing.T) {
	ids := tableIDs(t)
	bucketID := logicalID(t, "SnapshotBucket")
	env := func(t *testing.T, name string) map[string]any {
		t.Helper()
		e, _ := synth.Resources[functionID(t, name)].Properties["Environment"].(map[string]any)
		vars, _ := e["Variables"].(map[string]any)
		return vars
	}
	// Each tool function gets its tools, the store, the tables it is granted,
	// the bucket when granted, and its family's settings; nothing else.
	for _, fn := range toolFunctions {
		t.Run(fn.Name, func(t *testing.T) {
			want := map[string]any{"TOOLSHED_TOOL": strings.Join(fn.Tools, ","), "TOOLSHED_STORE": "dynamodb"}
			for _, g := range fn.Grants {
				switch g.Kind {
				case family.TableGrant:
					want[config.TableSettings[g.Table].Name()] = ref(ids[g.Table])
				case family.ObjectGrant, family.ListGrant:
					want["TOOLSHED_BUCKET"] = ref(bucketID)
				}
			}
			if fn.Family.ReadsRepositories {
				want["TOOLSHED_DEFAULT_REPO"] = testDefaultRepo
			}
			for k, v := range fn.Family.Env {
				want[k] = v
			}
			// The settings every tool function may be given, the
			// repository tools' and the family's own.
			names := slices.Clone(deploy.CommonSettings)
			if fn.Family.ReadsRepositories {
				names = append(names, deploy.RepositorySettings...)
			}
			for _, name := range settingNames(append(names, fn.Settings()...)) {
				if v := testContext[name]; v != "" {
					want[name] = v
				}
			}
			// The secrets, as the names of their parameters.
			delete(want, embedding.Key.Name())
			if params := secretParameters(fn); len(params) > 0 {
				want[secrets.EnvVar] = secrets.Encode(params)
			}
			if got := env(t, fn.Name); !equalJSON(got, want) {
				t.Errorf("environment:\n got %v\nwant %v", got, want)
			}
		})
	}
	// Anchors independent of the derivation.
	for name, want := range map[string]map[string]any{
		"hello": {"TOOLSHED_TOOL": "hello", "TOOLSHED_STORE": "dynamodb",
			"TOOLSHED_RATE_TABLE": ref(ids[config.RateLimitsTable]), "TOOLSHED_RATE_LIMITS": "hello=600"},
		"add_task": {"TOOLSHED_TOOL": "add_task", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_LIMITS": "hello=600",
			"TOOLSHED_RATE_TABLE": ref(ids[config.RateLimitsTable]), "TOOLSHED_TASKS_TABLE": ref(ids[config.TasksTable])},
		"list_tasks": {"TOOLSHED_TOOL": "list_tasks", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_LIMITS": "hello=600",
			"TOOLSHED_RATE_TABLE": ref(ids[config.RateLimitsTable]), "TOOLSHED_TASKS_TABLE": ref(ids[config.TasksTable]),
			secrets.EnvVar: `{"TOOLSHED_CURSOR_KEY":"/aws/reference/secretsmanager/Toolshed-cursor-key"}`},
		"web-fetch": {"TOOLSHED_TOOL": "web-fetch", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_LIMITS": "hello=600",
			"TOOLSHED_RATE_TABLE": ref(ids[config.RateLimitsTable]), "TOOLSHED_FETCH_ALLOWED_DOMAINS": "docs.python.org,*.go.dev"},
		"history": {"TOOLSHED_TOOL": "list_commits,get_commit,compare,blame,search_commits,list_refs", "TOOLSHED_STORE": "dynamodb",
			"TOOLSHED_RATE_LIMITS": "hello=600", "TOOLSHED_RATE_TABLE": ref(ids[config.RateLimitsTable]),
			"TOOLSHED_BUCKET": ref(bucketID), "TOOLSHED_DEFAULT_REPO": testDefaultRepo, "TOOLSHED_REPO_DENY": "*.sqlite",
			secrets.EnvVar: `{"TOOLSHED_CURSOR_KEY":"/aws/reference/secretsmanager/Toolshed-cursor-key"}`},
	} {
		if got := env(t, name); !equalJSON(got, want) {
			t.Errorf("%s environment:\n got %v\nwant %v", name, got, want)
		}
	}

	t.Run("gateway", func(t *testing.T) {
		got := env(t, "gateway")
		if len(got) != 1 {
			t.Errorf("gateway environment has %v; want only TOOLSHED_TOOL_FUNCTIONS", got)
		}
		// TOOLSHED_TOOL_FUNCTIONS is a Fn::Join; put "<Ref:id>" in place of
		// each Ref and decode the JSON object it spells.
		join, _ := got["TOOLSHED_TOOL_FUNCTIONS"].(map[string]any)["Fn::Join"].([]any)
		if len(join) != 2 {
			t.Fatalf("TOOLSHED_TOOL_FUNCTIONS is not a Fn::Join: %v", got["TOOLSHED_TOOL_FUNCTIONS"])
		}
		var b strings.Builder
		for _, part := range join[1].([]any) {
			switch p := part.(type) {
			case string:
				b.WriteString(p)
			case map[string]any:
				fmt.Fprintf(&b, "<Ref:%v>", p["Ref"])
			}
		}
		var mapping map[string]string
		if err := json.Unmarshal([]byte(b.String()), &mapping); err != nil {
			t.Fatalf("TOOLSHED_TOOL_FUNCTIONS %q: %v", b.String(), err)
		}
		want := map[string]string{}
		for _, tool := range tools {
			want[tool.Name] = "<Ref:" + functionID(t, tool.Function.Name) + ">"
		}
		if !equalJSON(mapping, want) {
			t.Errorf("TOOLSHED_TOOL_FUNCTIONS:\n got %v\nwant %v", mapping, want)
		}
	})

	t.Run("authorizer", func(t *testing.T) {
		want := map[string]any{
			"TOOLSHED_STORE":         "dynamodb",
			"TOOLSHED_APIKEYS_TABLE": ref(ids[config.APIKeysTable]),
		}
		if got := env(t, "authorizer"); !equalJSON(got, want) {
			t.Errorf("environment:\n got %v\nwant %v", got, want)
		}
	})

	// The indexer and its worker embed with context_search's embedder,
	// from the same settings, read only what the repository tools may,
	// and send batches to the index queue, embed messages to the embed
	// queue.
	t.Run("indexer", func(t *testing.T) {
		want := map[string]any{"TOOLSHED_BUCKET": ref(bucketID), "TOOLSHED_REPO_DENY": "*.sqlite", secrets.EnvVar: `{"TOOLSHED_EMBED_KEY":"` + testKeyParameter + `"}`,
			indexer.QueueURL.Name(): ref(logicalID(t, "IndexQueue")), indexer.EmbedQueueURL.Name(): ref(logicalID(t, "EmbedQueue")),
			indexer.BatchFiles.Name(): "500", "GOMEMLIMIT": "1800MiB", embedding.Workers.Name(): strconv.Itoa(deploy.EmbedConcurrency)}
		search := env(t, "context_search")
		for _, s := range embedding.Settings {
			if v, ok := search[s.Name()]; ok {
				want[s.Name()] = v
			}
		}
		for _, fn := range []string{indexerDir, indexWorkerName} {
			if got := env(t, fn); !equalJSON(got, want) || want["TOOLSHED_EMBEDDER"] != "openai" {
				t.Errorf("%s environment:\n got %v\nwant %v", fn, got, want)
			}
		}
	})
}

func TestRoutes(t *testing.T) {
	routes := resourcesOfType("AWS::ApiGatewayV2::Route")
	integrations := resourcesOfType("AWS::ApiGatewayV2::Integration")
	// The tools' routes refuse at the edge; /mcp's passes refusals to the
	// gateway; each has its own authorizer (and cache).
	authorizerOf := func(routeKey string) string {
		if auth.PassesRefusals(routeKey) {
			return authorizerID(t, "McpAuthorizer")
		}
		return authorizerID(t, "ToolAuthorizer")
	}

	// route key → function name it must reach
	open := map[string]bool{"GET /healthz": true, "GET " + servercard.Path: true} // no authorizer
	want := map[string]string{"GET /healthz": "gateway", "GET " + servercard.Path: "gateway"}
	for _, path := range auth.MCPPaths {
		for _, m := range []string{"POST", "GET", "DELETE"} {
			want[m+" "+path] = "gateway"
		}
	}
	for _, tool := range tools {
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			want["POST /v1/tools/"+name] = tool.Function.Name
			want["POST /mcp/tool/"+name] = tool.Function.Name
		}
	}
	// Spot checks that do not depend on the tools table.
	for key, fn := range map[string]string{
		"POST /v1/tools/blame":          "history",
		"POST /mcp/tool/list_refs":      "history",
		"POST /v1/tools/hello":          "hello",
		"POST /mcp/tool/add_task":       "add_task",
		"POST /v1/tools/adam-sys-audit": "sys-audit",
		"POST /mcp/tool/adam-sys-audit": "sys-audit",
		"POST /v1/tools/read_memory":    "read_memory",
	} {
		if want[key] != fn {
			t.Errorf("expected route %q → %s is missing from the tools table", key, fn)
		}
	}
	if len(want) != len(expectedRouteKeys()) {
		t.Errorf("duplicate route names in the tools table")
	}

	byKey := map[string]cfnResource{}
	for _, r := range routes {
		key := r.Properties["RouteKey"].(string)
		if _, dup := byKey[key]; dup {
			t.Errorf("route %q defined twice", key)
		}
		byKey[key] = r
	}
	if len(byKey) != len(want) {
		t.Errorf("routes: got %d, want %d", len(byKey), len(want))
	}

	for key, fnName := range want {
		t.Run(key, func(t *testing.T) {
			r, ok := byKey[key]
			if !ok {
				t.Fatalf("route %q missing", key)
			}
			if open[key] {
				if got := r.Properties["AuthorizationType"]; got != "NONE" {
					t.Errorf("AuthorizationType: got %v, want NONE", got)
				}
			} else {
				if got := r.Properties["AuthorizationType"]; got != "CUSTOM" {
					t.Errorf("AuthorizationType: got %v, want CUSTOM", got)
				}
				if got, want := r.Properties["AuthorizerId"], ref(authorizerOf(key)); !equalJSON(got, want) {
					t.Errorf("AuthorizerId: got %v, want %v", got, want)
				}
			}
			// Target is "integrations/" + Ref(integration).
			join, _ := r.Properties["Target"].(map[string]any)["Fn::Join"].([]any)
			if len(join) != 2 {
				t.Fatalf("Target is not a Fn::Join: %v", r.Properties["Target"])
			}
			parts := join[1].([]any)
			integrationID := fmt.Sprint(parts[len(parts)-1].(map[string]any)["Ref"])
			integration, ok := integrations[integrationID]
			if !ok {
				t.Fatalf("Target %v names no integration", parts)
			}
			if got, want := integration.Properties["IntegrationUri"], getAttArn(functionID(t, fnName)); !equalJSON(got, want) {
				t.Errorf("IntegrationUri: got %v, want %v", got, want)
			}
			if got := integration.Properties["IntegrationType"]; got != "AWS_PROXY" {
				t.Errorf("IntegrationType: got %v, want AWS_PROXY", got)
			}
		})
	}
}

// authorizerID returns the logical id of the HTTP API's authorizer named id.
func authorizerID(t *testing.T, id string) string {
	t.Helper()
	a := stack.Node().TryFindChild(jsii.String("HttpApi")).Node().TryFindChild(jsii.String(id))
	if a == nil {
		t.Fatalf("no authorizer %s", id)
	}
	return *stack.GetLogicalId(a.Node().DefaultChild().(awscdk.CfnElement))
}

func TestAuthorizer(t *testing.T) {
	authorizers := resourcesOfType("AWS::ApiGatewayV2::Authorizer")
	for _, id := range []string{"ToolAuthorizer", "McpAuthorizer"} {
		a, ok := authorizers[authorizerID(t, id)]
		if !ok {
			t.Fatalf("%s is not an authorizer", id)
		}
		for field, want := range map[string]any{
			"AuthorizerType":                 "REQUEST",
			"AuthorizerPayloadFormatVersion": "2.0",
			"EnableSimpleResponses":          true,
			"IdentitySource":                 []any{"$request.header.Authorization"},
			"AuthorizerResultTtlInSeconds":   auth.AuthorizerCacheTTL.Seconds(),
		} {
			if got := a.Properties[field]; !equalJSON(got, want) {
				t.Errorf("%s %s: got %v, want %v", id, field, got, want)
			}
		}
		uri, _ := json.Marshal(a.Properties["AuthorizerUri"])
		if want, _ := json.Marshal(getAttArn(functionID(t, "authorizer"))); !strings.Contains(string(uri), string(want)) {
			t.Errorf("%s: AuthorizerUri %s does not invoke the authorizer function", id, uri)
		}
	}
}

func TestPolicies(t *testing.T) {
	ids := tableIDs(t)
	table := func(key config.Table) string {
		b, _ := json.Marshal(getAttArn(ids[key]))
		return string(b)
	}
	// Every tool function: exactly its grants, on exactly their resources.
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			want := map[string][]string{}
			for _, g := range tool.Function.Grants {
				if g.Kind != family.TableGrant {
					continue // bucket and model grants are checked in TestBucketAndModelGrants
				}
				want[table(g.Table)] = append(want[table(g.Table)], g.Actions...)
			}
			got := roleActions(t, functionID(t, tool.Function.Name))
			for res := range got {
				if !strings.Contains(res, "Table") {
					delete(got, res)
				}
			}
			for k := range want {
				slices.Sort(want[k])
			}
			if !equalJSON(got, want) {
				t.Errorf("table policy:\n got %v\nwant %v", got, want)
			}
		})
	}
	// Anchors: least privilege spelled out for some tools and the authorizer
	// (list_tasks may read the cursor key: see TestCursorKey).
	rate := []string{"dynamodb:UpdateItem"}
	withKey := func(grants map[string][]string) map[string][]string {
		maps.Copy(grants, cursorKeyGrants())
		return grants
	}
	anchors := map[string]map[string][]string{
		"hello":              {table(config.RateLimitsTable): rate},
		"add_task":           {table(config.TasksTable): {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}, table(config.RateLimitsTable): rate},
		"list_tasks":         withKey(map[string][]string{table(config.TasksTable): {"dynamodb:Query"}, table(config.RateLimitsTable): rate}),
		"delete_task":        {table(config.TasksTable): {"dynamodb:DeleteItem"}, table(config.RateLimitsTable): rate},
		"write_memory_entry": {table(config.MemoryTable): {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}, table(config.RateLimitsTable): rate},
		"authorizer":         {table(config.APIKeysTable): {"dynamodb:GetItem"}},
	}
	for name, want := range anchors {
		if got := roleActions(t, functionID(t, name)); !equalJSON(got, want) {
			t.Errorf("%s policy:\n got %v\nwant %v", name, got, want)
		}
	}
}

func TestGatewayPolicy(t *testing.T) {
	got := roleActions(t, functionID(t, "gateway"))
	var resources []any
	for res, actions := range got {
		for _, a := range actions {
			if a != "lambda:InvokeFunction" {
				t.Errorf("gateway may %s on %s; want only lambda:InvokeFunction", a, res)
			}
			if strings.HasPrefix(a, "dynamodb:") {
				t.Errorf("gateway has table access: %s", a)
			}
		}
		var r any
		if err := json.Unmarshal([]byte(res), &r); err != nil {
			t.Fatal(err)
		}
		resources = append(resources, r)
	}
	for _, tool := range tools {
		arn := getAttArn(functionID(t, tool.Function.Name))
		if !slices.ContainsFunc(resources, func(r any) bool { return equalJSON(r, arn) }) {
			t.Errorf("gateway cannot invoke %s", tool.Name)
		}
	}
	// The tool functions and their :version/:alias ARNs, nothing more.
	if len(resources) != 2*len(toolFunctions) {
		t.Errorf("gateway invoke resources: got %d, want %d", len(resources), 2*len(toolFunctions))
	}
}

// TestTables: each table is deployed as dynamostore.Schemas declares it.
func TestTables(t *testing.T) {
	ids := tableIDs(t)
	for _, tbl := range dynamostore.Schemas {
		t.Run(string(tbl.Table), func(t *testing.T) {
			r := synth.Resources[ids[tbl.Table]]
			p := r.Properties
			// The SDK's types marshal with CloudFormation's property names.
			wantKeys, wantAttrs := tbl.KeySchema(), tbl.AttributeDefinitions()
			if !equalJSON(p["KeySchema"], wantKeys) {
				t.Errorf("KeySchema: got %v, want %v", p["KeySchema"], wantKeys)
			}
			if !equalJSON(p["AttributeDefinitions"], wantAttrs) {
				t.Errorf("AttributeDefinitions: got %v, want %v", p["AttributeDefinitions"], wantAttrs)
			}
			if p["BillingMode"] != "PAY_PER_REQUEST" {
				t.Errorf("BillingMode: got %v, want PAY_PER_REQUEST", p["BillingMode"])
			}
			if p["GlobalSecondaryIndexes"] != nil || p["LocalSecondaryIndexes"] != nil {
				t.Errorf("secondary indexes: got %v, %v; the schema declares none", p["GlobalSecondaryIndexes"], p["LocalSecondaryIndexes"])
			}
			checkDurable(t, r, tbl.Durable)
			checkStreamAndTTL(t, p, tbl)
		})
	}
}

// checkDurable: a durable table has point-in-time recovery and deletion
// protection, and is kept when the stack goes; another is deleted with it.
func checkDurable(t *testing.T, r cfnResource, durable bool) {
	t.Helper()
	pitr, _ := r.Properties["PointInTimeRecoverySpecification"].(map[string]any)
	if got := pitr["PointInTimeRecoveryEnabled"] == true; got != durable {
		t.Errorf("point-in-time recovery: got %v, want %v", got, durable)
	}
	if got := r.Properties["DeletionProtectionEnabled"] == true; got != durable {
		t.Errorf("deletion protection: got %v, want %v", got, durable)
	}
	wantPolicy := "Delete"
	if durable {
		wantPolicy = "Retain"
	}
	if r.DeletionPolicy != wantPolicy || r.UpdateReplacePolicy != wantPolicy {
		t.Errorf("DeletionPolicy/UpdateReplacePolicy: got %s/%s, want %s", r.DeletionPolicy, r.UpdateReplacePolicy, wantPolicy)
	}
}

// checkStreamAndTTL: the table's stream (NEW_IMAGE) and TTL attribute are
// those tbl declares.
func checkStreamAndTTL(t *testing.T, p map[string]any, tbl dynamostore.TableSchema) {
	t.Helper()
	wantStream := ""
	if tbl.Stream {
		wantStream = "NEW_IMAGE"
	}
	stream, _ := p["StreamSpecification"].(map[string]any)
	if got, _ := stream["StreamViewType"].(string); got != wantStream {
		t.Errorf("stream: got %q, want %q", got, wantStream)
	}
	ttl, _ := p["TimeToLiveSpecification"].(map[string]any)
	if tbl.TTLAttribute == "" && ttl != nil {
		t.Errorf("TimeToLiveSpecification: got %v, want none", ttl)
	}
	if tbl.TTLAttribute != "" && !equalJSON(ttl, map[string]any{"AttributeName": tbl.TTLAttribute, "Enabled": true}) {
		t.Errorf("TimeToLiveSpecification: got %v, want attribute %q enabled", ttl, tbl.TTLAttribute)
	}
}

func TestSnapshotBucket(t *testing.T) {
	must(t, func() {
		template.HasResource(jsii.String("AWS::S3::Bucket"), &map[string]any{
			"DeletionPolicy":      "Retain",
			"UpdateReplacePolicy": "Retain",
			"Properties": map[string]any{
				"PublicAccessBlockConfiguration": map[string]any{
					"BlockPublicAcls":       true,
					"BlockPublicPolicy":     true,
					"IgnorePublicAcls":      true,
					"RestrictPublicBuckets": true,
				},
				"VersioningConfiguration": map[string]any{"Status": "Enabled"},
				"BucketEncryption": map[string]any{
					"ServerSideEncryptionConfiguration": []any{map[string]any{
						"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"},
					}},
				},
			},
		})
	})
	// enforceSSL: deny every request that is not over TLS.
	must(t, func() {
		template.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), &map[string]any{
			"PolicyDocument": map[string]any{
				"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
					"Effect":    "Deny",
					"Action":    "s3:*",
					"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				})}),
			},
		})
	})
}

// TestBucketLifecycle: retired snapshots and old versions under
// snapshots/ expire after the retention; replaced workspace files and
// indexes soon after; incomplete uploads are aborted; nothing else expires.
func TestBucketLifecycle(t *testing.T) {
	replaced := func(id, prefix string, days float64) map[string]any {
		return map[string]any{"Id": id, "Status": "Enabled", "Prefix": prefix,
			"NoncurrentVersionExpiration": map[string]any{"NoncurrentDays": days}, "ExpiredObjectDeleteMarker": true}
	}
	must(t, func() {
		template.HasResourceProperties(jsii.String("AWS::S3::Bucket"), &map[string]any{
			"LifecycleConfiguration": map[string]any{"Rules": []any{
				map[string]any{
					"Id": "ExpireRetiredSnapshots", "Status": "Enabled", "Prefix": repo.Prefix,
					"TagFilters":       []any{map[string]any{"Key": repo.StateTag, "Value": repo.Retired}},
					"ExpirationInDays": testRetentionDays,
				},
				replaced("ExpireOldSnapshotVersions", repo.Prefix, testRetentionDays),
				replaced("ExpireOldWorkspaceVersions", workspace.Prefix, replacedObjectDays),
				replaced("ExpireOldIndexVersions", indexfile.BucketPrefix, replacedObjectDays),
				map[string]any{"Id": "AbortIncompleteUploads", "Status": "Enabled",
					"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": incompleteUploadDays}},
			}},
		})
	})
}

// TestDefaultRepository: only the functions that read snapshots (or the
// indexes built from them) learn the default repository.
func TestDefaultRepository(t *testing.T) {
	// Only the functions that read snapshots (or the indexes built from
	// them) learn the default repository.
	for _, tool := range tools {
		e, _ := synth.Resources[functionID(t, tool.Function.Name)].Properties["Environment"].(map[string]any)
		vars, _ := e["Variables"].(map[string]any)
		_, has := vars["TOOLSHED_DEFAULT_REPO"]
		// Anchored on the grants, not on the flag the stack reads.
		reads := slices.ContainsFunc(tool.Function.Grants, func(g family.Grant) bool {
			return g.Kind == family.ObjectGrant && (g.Prefix == repo.Prefix || g.Prefix == indexfile.BucketPrefix)
		})
		if has != reads {
			t.Errorf("%s: TOOLSHED_DEFAULT_REPO set %t, reads repositories %t", tool.Name, has, reads)
		}
	}
	for _, name := range []string{"read_repo_file", "read_file", "grep_codebase", "context_search"} {
		if !slices.ContainsFunc(tools, func(s toolSpec) bool { return s.Name == name }) {
			t.Errorf("no function for %s", name)
		}
	}
}

// TestBucketAndModelGrants: a function may touch the bucket or a Bedrock
// model only when its family grants it, and then only under the granted
// prefix or on the granted model.
func TestBucketAndModelGrants(t *testing.T) {
	bucket, _ := json.Marshal(getAttArn(logicalID(t, "SnapshotBucket")))
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			got := roleActions(t, functionID(t, tool.Function.Name))
			var s3Actions, modelActions []string
			for res, actions := range got {
				if strings.Contains(res, string(bucket)) {
					s3Actions = append(s3Actions, actions...)
				}
				if strings.Contains(res, "foundation-model") {
					modelActions = append(modelActions, actions...)
				}
			}
			var wantS3, wantModel []string
			for _, g := range tool.Function.Grants {
				switch g.Kind {
				case family.ObjectGrant, family.ListGrant:
					wantS3 = append(wantS3, g.Actions...)
				case family.ModelGrant:
					wantModel = append(wantModel, g.Actions...)
				}
			}
			slices.Sort(s3Actions)
			slices.Sort(wantS3)
			slices.Sort(modelActions)
			slices.Sort(wantModel)
			if !slices.Equal(s3Actions, wantS3) || !slices.Equal(modelActions, wantModel) {
				t.Errorf("bucket actions %v (want %v), model actions %v (want %v)", s3Actions, wantS3, modelActions, wantModel)
			}
		})
	}
}

// TestLogGroups: every log group keeps its lines a month, and is named
// after its function under the stack's prefix (the LogGroupPrefix output).
func TestLogGroups(t *testing.T) {
	must(t, func() {
		template.AllResources(jsii.String("AWS::Logs::LogGroup"), &map[string]any{
			"DeletionPolicy": "Delete",
			"Properties":     map[string]any{"RetentionInDays": deploy.LogRetentionDays},
		})
	})
	names := slices.Clone(otherFunctionNames)
	for _, fn := range toolFunctions {
		names = append(names, fn.Name)
	}
	for _, name := range names {
		lg, _ := synth.Resources[functionID(t, name)].Properties["LoggingConfig"].(map[string]any)["LogGroup"].(map[string]any)
		if got := synth.Resources[fmt.Sprint(lg["Ref"])].Properties["LogGroupName"]; got != "/Toolshed/"+name {
			t.Errorf("%s logs to %v, want /Toolshed/%s", name, got, name)
		}
	}
}

func TestAlarms(t *testing.T) {
	alarms := resourcesOfType("AWS::CloudWatch::Alarm")
	timeouts := map[string]float64{"gateway": deploy.GatewayTimeoutSeconds, "authorizer": deploy.AuthorizerTimeoutSeconds, "indexer": deploy.IndexerTimeoutSeconds}
	for _, fn := range toolFunctions {
		timeouts[fn.Name] = fn.TimeoutSeconds
	}
	for name, timeout := range timeouts {
		t.Run(name, func(t *testing.T) {
			dims := []any{map[string]any{"Name": "FunctionName", "Value": ref(functionID(t, name))}}
			type alarm struct {
				metric, op string
				threshold  float64
				stat       string // Statistic or ExtendedStatistic
			}
			want := map[string]alarm{
				"Errors":    {"Errors", "GreaterThanOrEqualToThreshold", 1, "Sum"},
				"Throttles": {"Throttles", "GreaterThanOrEqualToThreshold", 1, "Sum"},
				"Duration":  {"Duration", "GreaterThanThreshold", timeout * 1000 * 0.8, "p99"},
			}
			for _, a := range alarms {
				p := a.Properties
				if p["Namespace"] != "AWS/Lambda" || !equalJSON(p["Dimensions"], dims) {
					continue
				}
				metric, _ := p["MetricName"].(string)
				w, ok := want[metric]
				if metric == "IteratorAge" { // TestIndexerFailures
					continue
				}
				if !ok {
					t.Errorf("unexpected alarm on %s", metric)
					continue
				}
				delete(want, metric)
				stat := p["Statistic"]
				if stat == nil {
					stat = p["ExtendedStatistic"]
				}
				if p["ComparisonOperator"] != w.op || p["Threshold"] != w.threshold || stat != w.stat ||
					p["Period"] != 300.0 || p["EvaluationPeriods"] != 1.0 {
					t.Errorf("%s alarm: got %s %v %v period %v × %v, want %s %v %s over 300 s × 1",
						metric, p["ComparisonOperator"], p["Threshold"], stat, p["Period"], p["EvaluationPeriods"],
						w.op, w.threshold, w.stat)
				}
			}
			for metric := range want {
				t.Errorf("no %s alarm", metric)
			}
		})
	}
}

func TestDashboard(t *testing.T) {
	for _, d := range resourcesOfType("AWS::CloudWatch::Dashboard") {
		body, _ := json.Marshal(d.Properties["DashboardBody"])
		names := []string{"gateway", "authorizer", "indexer"}
		for _, fn := range toolFunctions {
			names = append(names, fn.Name)
		}
		for _, name := range names {
			for _, title := range []string{" invocations", " errors", " duration (ms)"} {
				if !strings.Contains(string(body), name+title) {
					t.Errorf("dashboard has no %q widget", name+title)
				}
			}
		}
	}
}

func TestToolTable(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range tools {
		for _, name := range append([]string{tool.Name}, tool.Aliases...) {
			if seen[name] {
				t.Errorf("route name %q used twice", name)
			}
			seen[name] = true
		}
		if rateCounter := family.Table(config.RateLimitsTable, "dynamodb:UpdateItem"); len(tool.Function.Grants) == 0 || !equalJSON(tool.Function.Grants[0], rateCounter) {
			t.Errorf("%s: the rate counter grant must come first, got %+v", tool.Name, tool.Function.Grants)
		}
	}
	if len(tools) != len(toolset.Tools()) {
		t.Errorf("the stack deploys %d tools, the registry deploys %d", len(tools), len(toolset.Tools()))
	}
}

func TestConstructID(t *testing.T) {
	tests := map[string]string{
		"hello":              "Hello",
		"add_task":           "AddTask",
		"sys-audit":          "SysAudit",
		"write_memory_entry": "WriteMemoryEntry",
		"gateway":            "Gateway",
	}
	for in, want := range tests {
		if got := constructID(in); got != want {
			t.Errorf("constructID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckBuildDir(t *testing.T) {
	dir := t.TempDir()
	if err := checkBuildDir(dir); err == nil {
		t.Error("empty build dir: got nil error")
	}
	if err := writePlaceholderBuild(dir); err != nil {
		t.Fatal(err)
	}
	if err := checkBuildDir(dir); err != nil {
		t.Errorf("complete build dir: %v", err)
	}
	layer := filepath.Join(dir, deploy.LayerFolder(family.GitLayer))
	if err := os.RemoveAll(layer); err != nil {
		t.Fatal(err)
	}
	if err := checkBuildDir(dir); err == nil || !strings.Contains(err.Error(), layer) {
		t.Errorf("without the git layer: %v", err)
	}
}

func TestBuildDirFromEnv(t *testing.T) {
	t.Setenv("TOOLSHED_BUILD_DIR", "")
	if got := buildDirFromEnv(); got != "../build" {
		t.Errorf("default: got %q, want ../build", got)
	}
	t.Setenv("TOOLSHED_BUILD_DIR", "/tmp/x")
	if got := buildDirFromEnv(); got != "/tmp/x" {
		t.Errorf("override: got %q, want /tmp/x", got)
	}
}

// TestFunctionFolders: functions/ holds the gateway, the authorizer and the
// one tool bootstrap; tools are not folders of their own.
func TestFunctionFolders(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.IsDir() {
			got = append(got, e.Name())
		}
	}
	want := slices.Clone(allFunctionDirs)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("functions/ has %v, want %v", got, want)
	}
}

// TestToolSpecsFromContract derives a tool the stack has never seen from a
// contract and a family: aliases and timeout come from the contract, memory,
// grants and settings from the family, chosen settings from the deployment.
func TestToolSpecsFromContract(t *testing.T) {
	contract := `{"name":"echo","aliases":["say"],"title":"Echo","description":"Echoes.",
		"inputSchema":{"type":"object"},"outputSchema":{"type":"object"},
		"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
		"rateLimit":{"requestsPerMinute":10},"timeoutMs":12500,"examples":[]}`
	set, err := schema.Load(fstest.MapFS{"echo.json": {Data: []byte(contract)}})
	if err != nil {
		t.Fatal(err)
	}
	fam := family.Family{Name: "echo", Tools: []string{"echo"}, MemoryMB: 1024,
		Grants:   []family.Grant{family.Objects("workspace/", "s3:GetObject")},
		Env:      map[string]string{"ECHO_MODE": "loud"},
		Settings: family.Every(settings.New("ECHO_VOICE", "", "", settings.Text), settings.New("ECHO_UNSET", "", "", settings.Text))}
	specs, fns, err := toolSpecs([]family.Family{fam}, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || len(fns) != 1 {
		t.Fatalf("%d specs and %d functions, want 1 each", len(specs), len(fns))
	}
	got := specs[0]
	rateCounter := family.Table(config.RateLimitsTable, "dynamodb:UpdateItem")
	want := toolSpec{Name: "echo", Aliases: []string{"say"}, DeadlineMs: 12500}
	if !equalJSON(got, want) || got.Function != fns[0] {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	fn := fns[0]
	if fn.Name != "echo" || fn.Family.Name != "echo" || !slices.Equal(fn.Tools, []string{"echo"}) || fn.TimeoutSeconds != 16 ||
		fn.MemoryMB != 1024 || fn.StorageMB != 0 || !equalJSON(fn.Grants, []family.Grant{rateCounter, family.Objects("workspace/", "s3:GetObject")}) {
		t.Errorf("function %+v", *fn)
	}
	deployment := map[string]string{"ECHO_VOICE": "bass", "TOOLSHED_RATE_LIMITS": "echo=5", "OTHER": "x"}
	env := deploy.Env(fns[0].Function, deploy.Deployment{
		TableName: func(t config.Table) string { return "table-" + string(t) },
		Bucket:    "the-bucket", DefaultRepo: "shared",
		Getenv: func(k string) string { return deployment[k] }})
	wantEnv := map[string]string{"TOOLSHED_TOOL": "echo", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_TABLE": "table-RateLimits",
		"TOOLSHED_BUCKET": "the-bucket", "ECHO_MODE": "loud", "ECHO_VOICE": "bass", "TOOLSHED_RATE_LIMITS": "echo=5"}
	if !equalJSON(env, wantEnv) {
		t.Errorf("environment:\n got %v\nwant %v", env, wantEnv)
	}
	testOneFunctionSpecs(t)
	bad := family.Family{Name: "bad", Tools: []string{"echo"}, Grants: []family.Grant{family.Objects("workspace/", "dynamodb:Query")}}
	if _, _, err := toolSpecs([]family.Family{bad}, set); err == nil {
		t.Error("a grant mixing services was accepted")
	}
	missing := family.Family{Name: "missing", Tools: []string{"nope"}}
	if _, _, err := toolSpecs([]family.Family{missing}, set); err == nil {
		t.Error("a tool without a contract was accepted")
	}
}

// testOneFunctionSpecs: a family deployed as one function gets one
// function, named after it, with the longest of its tools' timeouts and
// its family's storage, serving each of its tools.
func testOneFunctionSpecs(t *testing.T) {
	contract := `{"name":%q,"title":"T","description":"D.",
		"inputSchema":{"type":"object"},"outputSchema":{"type":"object"},
		"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
		"rateLimit":{"requestsPerMinute":10},"timeoutMs":%d,"examples":[]}`
	set, err := schema.Load(fstest.MapFS{
		"sing.json": {Data: fmt.Appendf(nil, contract, "sing", 2000)},
		"hum.json":  {Data: fmt.Appendf(nil, contract, "hum", 30000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	chorus := family.Family{Name: "chorus", Tools: []string{"sing", "hum"}, OneFunction: true, StorageMB: 4096,
		Layers: []string{family.GitLayer}}
	specs, fns, err := toolSpecs([]family.Family{chorus}, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || len(fns) != 1 || specs[0].Function != fns[0] || specs[1].Function != fns[0] {
		t.Fatalf("%d tools and %d functions, want 2 tools of one function", len(specs), len(fns))
	}
	if fn := fns[0]; fn.Name != "chorus" || !slices.Equal(fn.Tools, chorus.Tools) || fn.TimeoutSeconds != 33 || fn.StorageMB != 4096 {
		t.Errorf("function %+v, want chorus serving sing and hum, 33 s (hum's 30 s and the margin), 4096 MB of /tmp", *fn)
	}
	if specs[0].DeadlineMs != 2000 || specs[1].DeadlineMs != 30000 {
		t.Errorf("each tool keeps its contract's deadline: %v, %v", specs[0].DeadlineMs, specs[1].DeadlineMs)
	}
}

// TestCfnLint runs cfn-lint (installed on the development and CI machines)
// on the synthesized templates (the default, the variant, and both OAuth
// modes'): no errors, and no warnings either.
func TestCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatalf("cfn-lint is not on PATH (%v); install it with pip install cfn-lint==1.51.0", err)
	}
	templates := map[string]any{"default": template.ToJSON(), "variant": synthesizedOf(t, variant).raw,
		"oauthIssuer": synthesizedOf(t, withIssuer).raw, "oauth=cognito": synthesizedOf(t, withCognito).raw}
	for name, tmpl := range templates {
		raw, err := json.MarshalIndent(tmpl, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "Toolshed.template.json")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lint, "--format", "parseable", path).CombinedOutput()
		if err != nil {
			t.Errorf("cfn-lint found problems in the %s template (%v):\n%s", name, err, out)
		}
	}
}

// TestIndexer: the indexer reads the streams of the stream tables (INSERTs
// only, failures reported per record), is invoked for snapshots/*/current.json
// uploads, and may touch exactly its grants and those streams.
func TestIndexer(t *testing.T) {
	fnID := functionID(t, indexerDir)
	ids := tableIDs(t)
	streamArn := func(tbl config.Table) map[string]any {
		return map[string]any{"Fn::GetAtt": []any{ids[tbl], "StreamArn"}}
	}

	mappings := resourcesOfType("AWS::Lambda::EventSourceMapping")
	for _, tbl := range dynamostore.Schemas {
		if !tbl.Stream {
			continue
		}
		found := false
		for _, m := range mappings {
			p := m.Properties
			if !equalJSON(p["EventSourceArn"], streamArn(tbl.Table)) {
				continue
			}
			found = true
			checks := []struct {
				field     string
				got, want any
			}{
				{"FunctionName", p["FunctionName"], ref(fnID)},
				{"StartingPosition", p["StartingPosition"], "TRIM_HORIZON"},
				{"BatchSize", p["BatchSize"], float64(streamBatchSize)},
				{"MaximumRetryAttempts", p["MaximumRetryAttempts"], float64(streamRetries)},
				{"BisectBatchOnFunctionError", p["BisectBatchOnFunctionError"], true},
				{"FunctionResponseTypes", p["FunctionResponseTypes"], []any{"ReportBatchItemFailures"}},
				{"FilterCriteria", p["FilterCriteria"], map[string]any{"Filters": []any{map[string]any{"Pattern": `{"eventName":["INSERT"]}`}}}},
			}
			for _, c := range checks {
				if !equalJSON(c.got, c.want) {
					t.Errorf("%s stream mapping %s: got %v, want %v", tbl.Table, c.field, c.got, c.want)
				}
			}
		}
		if !found {
			t.Errorf("no event source mapping reads the %s stream", tbl.Table)
		}
	}

	// S3 notification: objects created under snapshots/ ending in /current.json.
	bucketID := logicalID(t, "SnapshotBucket")
	for _, n := range resourcesOfType("Custom::S3BucketNotifications") {
		if !equalJSON(n.Properties["BucketName"], ref(bucketID)) {
			t.Errorf("notifications on %v, want the snapshot bucket", n.Properties["BucketName"])
		}
		cfg, _ := n.Properties["NotificationConfiguration"].(map[string]any)
		want := []any{map[string]any{
			"Events":            []any{"s3:ObjectCreated:*"},
			"LambdaFunctionArn": getAttArn(fnID),
			"Filter": map[string]any{"Key": map[string]any{"FilterRules": []any{
				map[string]any{"Name": "suffix", "Value": pointerSuffix},
				map[string]any{"Name": "prefix", "Value": snapshotsPrefix},
			}}},
		}}
		if !equalJSON(cfg["LambdaFunctionConfigurations"], want) {
			t.Errorf("notifications:\n got %v\nwant %v", cfg["LambdaFunctionConfigurations"], want)
		}
	}

	// Policy: the grants of shared/indexer, and reading the streams.
	got := roleActions(t, fnID)
	want := map[string][]string{}
	for _, g := range indexer.Grants {
		key := ""
		switch g.Kind {
		case family.ObjectGrant:
			key = fmt.Sprintf(`{"Fn::Join":["",[{"Fn::GetAtt":["%s","Arn"]},"/%s*"]]}`, bucketID, g.Prefix)
		case family.ListGrant:
			key = fmt.Sprintf(`{"Fn::GetAtt":["%s","Arn"]}`, bucketID)
		case family.ModelGrant:
			for res := range got {
				if strings.Contains(res, "foundation-model/"+g.Model) {
					key = res
				}
			}
		}
		if key == "" {
			t.Errorf("no statement for grant %+v", g)
			continue
		}
		want[key] = append(want[key], g.Actions...)
	}
	for _, tbl := range dynamostore.Schemas {
		if tbl.Stream {
			key, _ := json.Marshal(streamArn(tbl.Table))
			want[string(key)] = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"}
		}
	}
	want[`"*"`] = []string{"dynamodb:ListStreams"} // Lambda's stream reader needs it; it has no resource type
	// Sending what failed to the failure queue, sending batches to the
	// index queue and embed messages to the embed queue, and reading the
	// secret.
	failures, _ := json.Marshal(getAttArn(logicalID(t, "IndexerFailureQueue")))
	want[string(failures)] = []string{"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"}
	batches, _ := json.Marshal(getAttArn(logicalID(t, "IndexQueue")))
	embeds, _ := json.Marshal(getAttArn(logicalID(t, "EmbedQueue")))
	for _, q := range []string{string(batches), string(embeds)} {
		want[q] = []string{"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"}
	}
	want[parameterArnJSON(testKeyParameter)] = []string{"ssm:GetParameter"}
	for k := range want {
		slices.Sort(want[k])
	}
	if !equalJSON(got, want) {
		t.Errorf("indexer policy:\n got %v\nwant %v", got, want)
	}

	// The worker: the same grants, and taking messages from both queues
	// (no stream, no failure queue: a message that failed every receive
	// goes to its queue's dead-letter queue).
	for k := range want {
		if strings.Contains(k, "StreamArn") || k == string(failures) || k == `"*"` {
			delete(want, k)
		}
	}
	for _, q := range []string{string(batches), string(embeds)} {
		want[q] = slices.Sorted(slices.Values([]string{ // sending (as the indexer), and the mapping's consuming
			"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage",
			"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}))
	}
	if got := roleActions(t, functionID(t, indexWorkerName)); !equalJSON(got, want) {
		t.Errorf("index worker policy:\n got %v\nwant %v", got, want)
	}
}

// TestIndexQueue: the index worker takes the index queue's batches and
// the embed queue's messages one at a time, through a mapping each,
// capped at its share of the worker's reserved concurrency (so that
// batches never wait behind embedding), reporting each failed message; a
// message comes back after twice the worker's timeout and goes to its
// queue's dead-letter queue, watched by an alarm, after
// indexQueueReceives receives.
func TestIndexQueue(t *testing.T) {
	if deploy.IndexBuildConcurrency+deploy.EmbedConcurrency != deploy.IndexWorkerConcurrency || deploy.EmbedConcurrency != embedding.IndexWorkers {
		t.Error("the worker's reserved concurrency is its mappings' shares; the embed queue's is embedding.IndexWorkers")
	}
	for _, tt := range []struct {
		queue, dead, alarm string
		share              int
	}{
		{"IndexQueue", "IndexDeadLetterQueue", "IndexDeadLettersAlarm", deploy.IndexBuildConcurrency},
		{"EmbedQueue", "EmbedDeadLetterQueue", "EmbedDeadLettersAlarm", deploy.EmbedConcurrency},
	} {
		queueID, deadID := logicalID(t, tt.queue), logicalID(t, tt.dead)
		q := synth.Resources[queueID].Properties
		redrive := map[string]any{"deadLetterTargetArn": getAttArn(deadID), "maxReceiveCount": float64(indexQueueReceives)}
		if q["VisibilityTimeout"] != float64(2*deploy.IndexWorkerTimeoutSeconds) || q["SqsManagedSseEnabled"] != true ||
			!equalJSON(q["RedrivePolicy"], redrive) || q["MessageRetentionPeriod"] != float64(indexQueueRetention*24*3600) {
			t.Errorf("%s %v", tt.queue, q)
		}
		if d := synth.Resources[deadID].Properties; d["MessageRetentionPeriod"] != float64(failureRetentionDays*24*3600) {
			t.Errorf("%s %v", tt.dead, d)
		}
		found := 0
		for _, m := range resourcesOfType("AWS::Lambda::EventSourceMapping") {
			p := m.Properties
			if !equalJSON(p["EventSourceArn"], getAttArn(queueID)) {
				continue
			}
			found++
			want := map[string]any{"EventSourceArn": getAttArn(queueID), "FunctionName": ref(functionID(t, indexWorkerName)), "BatchSize": 1.0,
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"}, "ScalingConfig": map[string]any{"MaximumConcurrency": float64(tt.share)}}
			if !equalJSON(p, want) {
				t.Errorf("%s mapping:\n got %v\nwant %v", tt.queue, p, want)
			}
		}
		if found != 1 {
			t.Errorf("%d mappings read %s, want 1", found, tt.queue)
		}
		checkAlarm(t, tt.alarm, "ApproximateNumberOfMessagesVisible", "GreaterThanOrEqualToThreshold", 1)
	}
	if deploy.IndexWorkerTimeoutSeconds > 2*deploy.IndexWorkerTimeoutSeconds || 2*deploy.IndexWorkerTimeoutSeconds > 12*3600 {
		t.Error("the visibility timeout must be at least the worker's timeout and at most SQS's 12 hours")
	}
}

// parameterArnJSON is the ARN of the SSM parameter name, as the template
// writes it.
func parameterArnJSON(name string) string {
	b, _ := json.Marshal(map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":ssm:", ref("AWS::Region"),
		":", ref("AWS::AccountId"), ":parameter/" + strings.TrimPrefix(name, "/")}}})
	return string(b)
}

// corsConfiguration returns the HTTP API's CorsConfiguration in a template.
func corsConfiguration(t *testing.T, tmpl cfnTemplate) map[string]any {
	t.Helper()
	for _, r := range tmpl.Resources {
		if r.Type == "AWS::ApiGatewayV2::Api" {
			cfg, _ := r.Properties["CorsConfiguration"].(map[string]any)
			return cfg
		}
	}
	t.Fatal("no AWS::ApiGatewayV2::Api in the template")
	return nil
}

// synthesized is a stack synthesized from a context of its own: its
// template as written, and decoded.
type synthesized struct {
	raw  any
	tmpl cfnTemplate
}

// synthesizeOnce returns a function that synthesizes a stack from ctx, in
// its own output folder, the first time it is called.
func synthesizeOnce(out string, ctx map[string]string) func() (synthesized, error) {
	return sync.OnceValues(func() (synthesized, error) {
		opts, err := readOptions(ctx)
		if err != nil {
			return synthesized{}, err
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(filepath.Join(buildDir, out))})
		tmpl := assertions.Template_FromStack(NewToolshedStack(app, stackName, &ToolshedStackProps{BuildDir: buildDir, Options: &opts}), nil)
		decoded, err := decode(tmpl)
		return synthesized{raw: tmpl.ToJSON(), tmpl: decoded}, err
	})
}

// variant is a second stack: a cursor key parameter, origins of its own,
// an alarm email, no reserved concurrency, a route throttle for hello.
var variant = synthesizeOnce("variant.out", map[string]string{
	"TOOLSHED_CURSOR_KEY": "ssm:" + variantCursorKeyParameter,
	"allowedOrigins":      "https://a.example, https://b.example:8443",
	"alarmEmail":          "ops@example.com",
	"reservedConcurrency": "off",
	"routeThrottles":      "hello=3:6",
})

// synthesizedOf returns a stack synthesized by one of the functions above.
func synthesizedOf(t *testing.T, of func() (synthesized, error)) synthesized {
	t.Helper()
	s, err := of()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// variantTemplate returns the variant stack's template.
func variantTemplate(t *testing.T) cfnTemplate {
	t.Helper()
	return synthesizedOf(t, variant).tmpl
}

// TestCORS: the HTTP API answers browsers with the policy the local server
// applies (shared/cors), for any origin unless the context allowedOrigins
// names them, and never with credentials.
func TestCORS(t *testing.T) {
	want := func(origins ...any) map[string]any {
		return map[string]any{
			"AllowCredentials": false,
			"AllowHeaders":     []any{"Authorization", "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID", "Accept"},
			"AllowMethods":     []any{"GET", "POST", "DELETE", "OPTIONS"},
			"AllowOrigins":     origins,
			"ExposeHeaders":    []any{"WWW-Authenticate", "Mcp-Session-Id", "X-Request-Id", "Retry-After"},
			"MaxAge":           float64(7200),
		}
	}
	if got := corsConfiguration(t, synth); !equalJSON(got, want("*")) {
		t.Errorf("default CorsConfiguration:\n got %v\nwant %v", got, want("*"))
	}
	// With -c allowedOrigins=…, exactly those origins.
	if got, w := corsConfiguration(t, variantTemplate(t)), want("https://a.example", "https://b.example:8443"); !equalJSON(got, w) {
		t.Errorf("CorsConfiguration with allowedOrigins:\n got %v\nwant %v", got, w)
	}
}

// TestOptions: the app's options come from the context; an unknown key or
// a value an option or a function would refuse stops the synthesis, with
// the key named.
func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		ctx     map[string]string
		check   func(options) bool // when there is no error
		wantErr string
	}{
		{"defaults", nil, func(o options) bool {
			return o.DefaultRepo == "" && o.SnapshotRetentionDays == 30 && slices.Equal(o.AllowedOrigins, []string{"*"}) &&
				o.AlarmEmail == "" && o.Throttle == throttle{100, 200} && len(o.RouteThrottles) == 0 &&
				!o.Concurrency.Off && len(o.Settings) == 0
		}, ""},
		{"every option", map[string]string{"defaultRepo": "acme", "snapshotRetentionDays": "7", "allowedOrigins": " https://a.example , http://localhost:6274,",
			"alarmEmail": "ops@example.com", "throttleRate": "10", "throttleBurst": "20", "routeThrottles": "grep_codebase=5:10, hello=1:2",
			"reservedConcurrency": "grep_codebase=3,gateway=0"}, func(o options) bool {
			return o.DefaultRepo == "acme" && o.SnapshotRetentionDays == 7 &&
				slices.Equal(o.AllowedOrigins, []string{"https://a.example", "http://localhost:6274"}) && o.AlarmEmail == "ops@example.com" &&
				o.Throttle == throttle{10, 20} && o.RouteThrottles["grep_codebase"] == throttle{5, 10} && o.RouteThrottles["hello"] == throttle{1, 2} &&
				o.Concurrency.of("grep_codebase", 10) == 3 && o.Concurrency.of("gateway", 20) == 0 && o.Concurrency.of("context_search", 10) == 10
		}, ""},
		{"settings by their names", map[string]string{"TOOLSHED_FETCH_ALLOWED_DOMAINS": "a.example", "TOOLSHED_LOG_LEVEL": "debug"}, func(o options) bool {
			return len(o.Settings) == 2 && o.Settings["TOOLSHED_FETCH_ALLOWED_DOMAINS"] == "a.example" && o.Settings["TOOLSHED_LOG_LEVEL"] == "debug"
		}, ""},
		{"no reservations", map[string]string{"reservedConcurrency": "off"}, func(o options) bool {
			return o.Concurrency.of("grep_codebase", 10) == 0 && o.Concurrency.of("gateway", 20) == 0
		}, ""},
		{"CDK's own keys are not the app's", map[string]string{"@aws-cdk/core:newStyleStackSynthesis": "true", "cli-telemetry": "false", "aws:cdk:enable-path-metadata": "true"}, nil, ""},
		{"unknown key", map[string]string{"alarmEmial": "ops@example.com"}, nil, `unknown context key "alarmEmial"`},
		{"unknown setting", map[string]string{"TOOLSHED_FETCH_ALLOWED_DOMAIN": "a.example"}, nil, `unknown context key "TOOLSHED_FETCH_ALLOWED_DOMAIN"`},
		{"a setting a function refuses", map[string]string{"TOOLSHED_WORKSPACE_QUOTA_FILES": "many"}, nil, "TOOLSHED_WORKSPACE_QUOTA_FILES"},
		{"a secret's value", map[string]string{"TOOLSHED_EMBED_KEY": "sk-live-123"}, nil, "TOOLSHED_EMBED_KEY is a secret"},
		{"rate limits", map[string]string{"TOOLSHED_RATE_LIMITS": "hello=lots"}, nil, "TOOLSHED_RATE_LIMITS"},
		{"default repository", map[string]string{"defaultRepo": "../x"}, nil, "defaultRepo"},
		{"retention", map[string]string{"snapshotRetentionDays": "0"}, nil, "snapshotRetentionDays"},
		{"origin with a path", map[string]string{"allowedOrigins": "https://a.example/app"}, nil, "is not an origin"},
		{"origin without a scheme", map[string]string{"allowedOrigins": "a.example"}, nil, "is not an origin"},
		{"origin with a user", map[string]string{"allowedOrigins": "https://user@a.example"}, nil, "is not an origin"},
		{"* with others", map[string]string{"allowedOrigins": "*,https://a.example"}, nil, "stands alone"},
		{"no origin", map[string]string{"allowedOrigins": " , "}, nil, "no origin named"},
		{"email", map[string]string{"alarmEmail": "ops at example"}, nil, "alarmEmail"},
		{"throttle", map[string]string{"throttleRate": "-1"}, nil, "throttleRate"},
		{"route throttle shape", map[string]string{"routeThrottles": "hello=5"}, nil, "use tool=rate:burst"},
		{"route throttle tool", map[string]string{"routeThrottles": "nope=5:10"}, nil, `no tool is named "nope"`},
		{"concurrency value", map[string]string{"reservedConcurrency": "gateway=-1"}, nil, "use off, or name=N"},
		{"concurrency name", map[string]string{"reservedConcurrency": "nope=1"}, nil, `no function is named "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readOptions(tt.ctx)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one about %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil && !tt.check(got) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

// TestContextValues: the app reads its keys from the CDK context as
// strings, whatever JSON type cdk.json gives them.
func TestContextValues(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{
		"snapshotRetentionDays": 7, "allowedOrigins": []any{"https://a.example", "https://b.example"},
		"TOOLSHED_METRICS": true, "@aws-cdk/x:flag": true,
	}})
	got, err := contextValues(app)
	want := map[string]string{"snapshotRetentionDays": "7", "allowedOrigins": "https://a.example,https://b.example", "TOOLSHED_METRICS": "true"}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	bad := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"defaultRepo": map[string]any{"a": 1}}})
	if _, err := contextValues(bad); err == nil || !strings.Contains(err.Error(), "context defaultRepo") {
		t.Errorf("an object: error %v", err)
	}
}

// TestDeclaredSettings: every setting a family declares is checked before
// synthesis, once, with the indexer's embedding settings.
func TestDeclaredSettings(t *testing.T) {
	var names []string
	for _, s := range declaredSettings(toolset.Families) {
		names = append(names, s.Name())
	}
	for _, want := range []string{"TOOLSHED_EMBEDDER", "TOOLSHED_EMBED_DIMENSIONS", "TOOLSHED_FETCH_ALLOWED_DOMAINS",
		"TOOLSHED_FETCH_REJECT_TYPES", "TOOLSHED_WORKSPACE_QUOTA_BYTES", "TOOLSHED_WORKSPACE_QUOTA_FILES"} {
		if n := countOf(names, want); n != 1 {
			t.Errorf("%s declared %d times in %v, want once", want, n, names)
		}
	}
	bad := map[string]string{"TOOLSHED_WORKSPACE_QUOTA_FILES": "many"}
	err := deploy.CheckSettings(declaredSettings(toolset.Families), func(k string) string { return bad[k] })
	if err == nil || !strings.Contains(err.Error(), "TOOLSHED_WORKSPACE_QUOTA_FILES") {
		t.Errorf("a bad quota: error %v, want one naming the setting", err)
	}
}

func countOf(names []string, name string) int {
	n := 0
	for _, s := range names {
		if s == name {
			n++
		}
	}
	return n
}
