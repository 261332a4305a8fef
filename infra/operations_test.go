package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolset"
)

// declaredConcurrency is each function's reserved concurrency as declared:
// a tool's family's, and the other functions' constants.
func declaredConcurrency() map[string]int {
	want := map[string]int{gatewayName: deploy.GatewayConcurrency, authorizerDir: deploy.AuthorizerConcurrency, indexerDir: deploy.IndexerConcurrency,
		indexWorkerName: deploy.IndexWorkerConcurrency}
	for _, fn := range toolFunctions {
		want[fn.Name] = fn.Family.Concurrency
	}
	return want
}

// TestReservedConcurrency: the heavy tools' functions and the indexer are
// capped, the authorizer and gateway have a floor, the rest share what is
// left; -c reservedConcurrency=off reserves none.
func TestReservedConcurrency(t *testing.T) {
	want := declaredConcurrency()
	for name, n := range map[string]int{"grep_codebase": 10, "context_search": 10, "indexer": 2, "index-worker": 14, "authorizer": 20, "gateway": 20, "hello": 0} {
		if want[name] != n { // anchors, apart from the derivation
			t.Errorf("%s: declared %d, want %d", name, want[name], n)
		}
	}
	for name, n := range want {
		got := synth.Resources[functionID(t, name)].Properties["ReservedConcurrentExecutions"]
		if n == 0 && got != nil || n > 0 && got != float64(n) {
			t.Errorf("%s: ReservedConcurrentExecutions %v, want %d", name, got, n)
		}
	}
	for id, r := range variantTemplate(t).Resources {
		if r.Type == "AWS::Lambda::Function" && r.Properties["ReservedConcurrentExecutions"] != nil {
			t.Errorf("with reservedConcurrency=off, %s reserves %v", id, r.Properties["ReservedConcurrentExecutions"])
		}
	}
}

// TestEmbedWorkers: the index worker's reserved concurrency is split
// between its index queue's and embed queue's mappings, and the
// embedding quota over as many workers as the embed queue's may run at
// once.
func TestEmbedWorkers(t *testing.T) {
	for _, tt := range []struct {
		name        string
		c           concurrency
		build, want int
	}{
		{"declared", concurrency{}, deploy.IndexBuildConcurrency, embedding.IndexWorkers},
		{"overridden: the embed queue's share is what builds leave", concurrency{Overrides: map[string]int{indexWorkerName: 25}}, deploy.IndexBuildConcurrency, 25 - deploy.IndexBuildConcurrency},
		{"a small reservation: builds take at most half", concurrency{Overrides: map[string]int{indexWorkerName: 4}}, 2, 2},
		{"another function overridden", concurrency{Overrides: map[string]int{"gateway": 50}}, deploy.IndexBuildConcurrency, embedding.IndexWorkers},
		{"none reserved: the declared shares are assumed", concurrency{Off: true}, deploy.IndexBuildConcurrency, embedding.IndexWorkers},
		{"index-worker=0: likewise", concurrency{Overrides: map[string]int{indexWorkerName: 0}}, deploy.IndexBuildConcurrency, embedding.IndexWorkers},
	} {
		build, embed := tt.c.workerShares()
		if build != tt.build || embed != tt.want || tt.c.embedWorkers() != embed {
			t.Errorf("%s: %d building, %d embedding (%d workers), want %d and %d", tt.name, build, embed, tt.c.embedWorkers(), tt.build, tt.want)
		}
	}
}

// stage returns the HTTP API's stage in a template.
func stage(t *testing.T, tmpl cfnTemplate) cfnResource {
	t.Helper()
	for _, r := range tmpl.Resources {
		if r.Type == "AWS::ApiGatewayV2::Stage" {
			return r
		}
	}
	t.Fatal("no stage")
	return cfnResource{}
}

// TestThrottling: every route gets the stage's rate and burst; a tool
// whose function has reserved concurrency N gets N:2N on each of its
// routes, unless -c routeThrottles says otherwise.
func TestThrottling(t *testing.T) {
	settings := func(rate, burst int) map[string]any {
		return map[string]any{"ThrottlingRateLimit": float64(rate), "ThrottlingBurstLimit": float64(burst)}
	}
	routesOf := func(tool string, rate, burst int) map[string]any {
		out := map[string]any{}
		for _, prefix := range toolRoutePrefixes {
			out["POST "+prefix+tool] = settings(rate, burst)
		}
		return out
	}
	want := map[string]any{}
	for _, tool := range tools {
		if n := declaredConcurrency()[tool.Name]; n > 0 {
			for k, v := range routesOf(tool.Name, n, 2*n) {
				want[k] = v
			}
		}
	}
	p := stage(t, synth).Properties
	if !equalJSON(p["DefaultRouteSettings"], settings(100, 200)) {
		t.Errorf("DefaultRouteSettings %v, want 100/s, burst 200", p["DefaultRouteSettings"])
	}
	if !equalJSON(p["RouteSettings"], want) || len(want) != 4 {
		t.Errorf("RouteSettings:\n got %v\nwant %v", p["RouteSettings"], want)
	}
	// Without reservations, only the routes the context names.
	if got := stage(t, variantTemplate(t)).Properties["RouteSettings"]; !equalJSON(got, routesOf("hello", 3, 6)) {
		t.Errorf("variant RouteSettings %v, want hello's at 3/s, burst 6", got)
	}
}

// TestAccessLog: the stage writes a JSON line per request to a log group
// of its own, kept as long as the functions'.
func TestAccessLog(t *testing.T) {
	settings, _ := stage(t, synth).Properties["AccessLogSettings"].(map[string]any)
	if want := getAttArn(logicalID(t, "ApiAccessLogs")); !equalJSON(settings["DestinationArn"], want) {
		t.Errorf("DestinationArn %v, want %v", settings["DestinationArn"], want)
	}
	var line map[string]string
	if err := json.Unmarshal([]byte(fmt.Sprint(settings["Format"])), &line); err != nil {
		t.Fatalf("Format %v is not a JSON object: %v", settings["Format"], err)
	}
	for _, field := range []string{"requestId", "routeKey", "status", "latencyMs", "tenant", "ip"} {
		if !strings.HasPrefix(line[field], "$context.") {
			t.Errorf("the access log has no %s: %v", field, line)
		}
	}
	lg := synth.Resources[logicalID(t, "ApiAccessLogs")]
	if lg.Properties["RetentionInDays"] != float64(deploy.LogRetentionDays) || lg.Properties["LogGroupName"] != "/Toolshed/api-access" {
		t.Errorf("access log group %v", lg.Properties)
	}
}

// TestIndexerFailures: a snapshot event that fails every retry and a
// stream batch that does both land in the failure queue, kept 14 days;
// alarms watch the queue and how far behind the stream the indexer is.
func TestIndexerFailures(t *testing.T) {
	queueID := logicalID(t, "IndexerFailureQueue")
	onFailure := map[string]any{"OnFailure": map[string]any{"Destination": getAttArn(queueID)}}
	q := synth.Resources[queueID].Properties
	if q["MessageRetentionPeriod"] != float64(failureRetentionDays*24*3600) || q["SqsManagedSseEnabled"] != true {
		t.Errorf("queue %v", q)
	}
	for _, c := range resourcesOfType("AWS::Lambda::EventInvokeConfig") {
		p := c.Properties
		if !equalJSON(p["FunctionName"], ref(functionID(t, indexerDir))) || !equalJSON(p["DestinationConfig"], onFailure) ||
			p["MaximumRetryAttempts"] != float64(asyncRetries) || p["MaximumEventAgeInSeconds"] != float64(asyncEventAgeHours*3600) {
			t.Errorf("EventInvokeConfig %v", p)
		}
	}
	for _, m := range resourcesOfType("AWS::Lambda::EventSourceMapping") {
		if m.Properties["StartingPosition"] != nil && !equalJSON(m.Properties["DestinationConfig"], onFailure) { // a stream's
			t.Errorf("stream mapping DestinationConfig %v, want the failure queue", m.Properties["DestinationConfig"])
		}
	}
	checkAlarm(t, "IndexerFailuresAlarm", "ApproximateNumberOfMessagesVisible", "GreaterThanOrEqualToThreshold", 1)
	checkAlarm(t, "IndexerIteratorAgeAlarm", "IteratorAge", "GreaterThanThreshold", iteratorAgeMinutes*60*1000)
}

// alarmOf returns the alarm resource of the construct id.
func alarmOf(t *testing.T, id string) map[string]any {
	t.Helper()
	return synth.Resources[logicalID(t, id)].Properties
}

// checkAlarm checks an alarm on one metric (or on an expression of
// metrics named metric) against threshold with op.
func checkAlarm(t *testing.T, id, metric, op string, threshold float64) {
	t.Helper()
	p := alarmOf(t, id)
	body, _ := json.Marshal(p)
	if !strings.Contains(string(body), `"`+metric+`"`) || p["ComparisonOperator"] != op || p["Threshold"] != threshold {
		t.Errorf("%s: %s", id, body)
	}
}

// TestToolAlarms: each tool's calls as users see them (the EMF metrics,
// failures answered as envelopes included) are watched: server-side error
// rate, p99 against the contract's timeout, share of calls RATE_LIMITED.
func TestToolAlarms(t *testing.T) {
	for _, tool := range tools {
		id := constructID(tool.Name)
		dims := fmt.Sprintf(`"Dimensions":[{"Name":%q,"Value":%q}]`, telemetry.ToolDimension, tool.Name)
		for alarm, want := range map[string]struct {
			metrics   []string
			threshold float64
		}{
			id + "ToolErrorRateAlarm": {[]string{telemetry.MetricErrors, telemetry.MetricInvocations}, toolErrorPercent},
			id + "ToolDurationAlarm":  {[]string{telemetry.MetricDuration}, tool.DeadlineMs * durationShare},
			id + "RateLimitedAlarm":   {[]string{telemetry.MetricRateLimited, telemetry.MetricInvocations}, rateLimitedPercent},
		} {
			p := alarmOf(t, alarm)
			body, _ := json.Marshal(p)
			for _, m := range want.metrics {
				if !strings.Contains(string(body), `"MetricName":"`+m+`"`) {
					t.Errorf("%s does not read %s: %s", alarm, m, body)
				}
			}
			if !strings.Contains(string(body), dims) || !strings.Contains(string(body), `"Namespace":"`+telemetry.Namespace+`"`) ||
				p["Threshold"] != want.threshold || p["ComparisonOperator"] != "GreaterThanThreshold" {
				t.Errorf("%s: %s", alarm, body)
			}
		}
	}
	if got := alarmOf(t, "HelloToolDurationAlarm")["Threshold"]; got != 1600.0 { // hello's contract: 2 s
		t.Errorf("hello's p99 alarm at %v ms, want 1600", got)
	}
}

// TestAPIAndTableAlarms: the HTTP API's 5xx share and p99 latency, and
// each table's throttled requests.
func TestAPIAndTableAlarms(t *testing.T) {
	checkAlarm(t, "ApiServerErrorsAlarm", "5xx", "GreaterThanThreshold", apiServerErrorPercent)
	checkAlarm(t, "ApiLatencyAlarm", "Latency", "GreaterThanThreshold", apiLatencyMs)
	for _, schema := range dynamostore.Schemas {
		id := string(schema.Table) + "TableThrottlesAlarm"
		checkAlarm(t, id, "ReadThrottleEvents", "GreaterThanOrEqualToThreshold", 1)
		checkAlarm(t, id, "WriteThrottleEvents", "GreaterThanOrEqualToThreshold", 1)
		if body, _ := json.Marshal(alarmOf(t, id)); !strings.Contains(string(body), logicalID(t, string(schema.Table)+"Table")) {
			t.Errorf("%s does not watch its table: %s", id, body)
		}
	}
}

// TestAlarmsNotify: every alarm notifies the alarm topic when it goes off
// and when it recovers; -c alarmEmail subscribes an address to it.
func TestAlarmsNotify(t *testing.T) {
	topic := []any{ref(logicalID(t, "AlarmTopic"))}
	for id, a := range resourcesOfType("AWS::CloudWatch::Alarm") {
		if !equalJSON(a.Properties["AlarmActions"], topic) || !equalJSON(a.Properties["OKActions"], topic) {
			t.Errorf("alarm %s: actions %v, OK actions %v; want the topic", id, a.Properties["AlarmActions"], a.Properties["OKActions"])
		}
	}
	var subs []map[string]any
	for _, r := range variantTemplate(t).Resources {
		if r.Type == "AWS::SNS::Subscription" {
			subs = append(subs, r.Properties)
		}
	}
	if len(subs) != 1 || subs[0]["Protocol"] != "email" || subs[0]["Endpoint"] != "ops@example.com" {
		t.Errorf("with alarmEmail: subscriptions %v, want one email to ops@example.com", subs)
	}
}

// TestSavedQueries: the Logs Insights queries are saved over every tool
// function's log group, shown on the dashboard, and read fields a call's
// log line has.
func TestSavedQueries(t *testing.T) {
	var groups []any
	for _, fn := range toolFunctions {
		groups = append(groups, "/Toolshed/"+fn.Name)
	}
	defs := resourcesOfType("AWS::Logs::QueryDefinition")
	dashboard, _ := json.Marshal(resourcesOfType("AWS::CloudWatch::Dashboard"))
	for _, q := range savedQueries {
		found := false
		for _, d := range defs {
			if d.Properties["Name"] == "Toolshed/"+q.Name {
				found = d.Properties["QueryString"] == q.Query && equalJSON(d.Properties["LogGroupNames"], groups)
			}
		}
		if !found {
			t.Errorf("query %q not saved over the tool log groups", q.Name)
		}
		if !strings.Contains(string(dashboard), `\"title\":\"`+q.Name+`\"`) {
			t.Errorf("the dashboard does not show %q", q.Name)
		}
	}
	// A call's log line, as a tool function writes it.
	var buf bytes.Buffer
	telemetry.NewObserver(telemetry.NewLogger(&buf, 0), nil).Observe(context.Background(),
		telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r1", Duration: time.Millisecond, Code: toolerr.InvalidInput})
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	for _, field := range queryFields {
		if _, ok := line[field]; !ok {
			t.Errorf("the queries read %s; a call's log line has none: %s", field, buf.Bytes())
		}
	}
}

// TestNoSecretInTemplate: a secret setting reaches only the functions that
// read it, as the name of its parameter, which their roles may read; no
// environment holds a secret setting; and the environment the app
// synthesizes in (every declared setting set, TestMain) reaches nothing.
func TestNoSecretInTemplate(t *testing.T) {
	raw, err := json.Marshal(template.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(shellValue)) {
		t.Errorf("a value from the synthesizing shell is in the template")
	}
	for id, fn := range ourFunctions() {
		env, _ := fn.Properties["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for _, s := range declaredSettings(toolset.Families) {
			if _, ok := vars[s.Name()]; ok && s.IsSecret() {
				t.Errorf("function %s has the secret %s in its environment", id, s.Name())
			}
		}
	}
	wantParams := fmt.Sprintf(`{%q:%q}`, embedding.Key.Name(), testKeyParameter)
	for _, name := range []string{"context_search", indexerDir} {
		fnID := functionID(t, name)
		env, _ := synth.Resources[fnID].Properties["Environment"].(map[string]any)
		if got := env["Variables"].(map[string]any)[secrets.EnvVar]; got != wantParams {
			t.Errorf("%s: %s = %v, want %s", name, secrets.EnvVar, got, wantParams)
		}
		if got := roleActions(t, fnID)[parameterArnJSON(testKeyParameter)]; !slices.Equal(got, []string{"ssm:GetParameter"}) {
			t.Errorf("%s may %v on the parameter, want ssm:GetParameter", name, got)
		}
	}
}

// TestLogPermissions: each function's role is its own, has no managed
// policy (AWSLambdaBasicExecutionRole would allow logs on "*"), and may
// write to its own log group only.
func TestLogPermissions(t *testing.T) {
	for id, fn := range ourFunctions() {
		roleID := fn.Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		if mp := synth.Resources[roleID].Properties["ManagedPolicyArns"]; mp != nil {
			t.Errorf("%s: role %s has managed policies %v", id, roleID, mp)
		}
		found := 0
		for _, p := range resourcesOfType("AWS::IAM::Policy") {
			if !slices.ContainsFunc(asList(p.Properties["Roles"]), func(r any) bool { return equalJSON(r, ref(roleID)) }) {
				continue
			}
			for _, s := range asList(p.Properties["PolicyDocument"].(map[string]any)["Statement"]) {
				stmt := s.(map[string]any)
				if slices.ContainsFunc(actionsOf(stmt), func(a string) bool { return strings.HasPrefix(a, "logs:") }) {
					if !equalJSON(stmt, logWriting(synth, id)) {
						t.Errorf("%s: a logs statement other than writing its own group: %v", id, stmt)
					}
					found++
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: %d statements write logs, want 1", id, found)
		}
	}
}

// TestOutputs: the stack outputs what a user or a script needs, under the
// names shared/stackoutputs gives them.
func TestOutputs(t *testing.T) {
	apiID := logicalID(t, "HttpApi")
	want := map[string]string{ // output → what its value must mention
		stackoutputs.APIURL:           apiID,
		stackoutputs.MCPURL:           "/mcp",
		stackoutputs.ToolsURL:         "/v1/tools/",
		stackoutputs.Bucket:           logicalID(t, "SnapshotBucket"),
		stackoutputs.DashboardURL:     "#dashboards:name=",
		stackoutputs.LogGroups:        "/Toolshed/",
		stackoutputs.AccessLogs:       logicalID(t, "ApiAccessLogs"),
		stackoutputs.Indexer:          functionID(t, indexerDir),
		stackoutputs.IndexerFailed:    logicalID(t, "IndexerFailureQueue"),
		stackoutputs.AlarmTopic:       logicalID(t, "AlarmTopic"),
		stackoutputs.IndexQueue:       logicalID(t, "IndexQueue"),
		stackoutputs.IndexDeadLetters: logicalID(t, "IndexDeadLetterQueue"),
		stackoutputs.EmbedQueue:       logicalID(t, "EmbedQueue"),
		stackoutputs.EmbedDeadLetters: logicalID(t, "EmbedDeadLetterQueue"),
	}
	for _, schema := range dynamostore.Schemas {
		want[stackoutputs.Table(schema.Table)] = logicalID(t, string(schema.Table)+"Table")
	}
	if want[stackoutputs.Table(config.APIKeysTable)] == "" || stackoutputs.Table(config.APIKeysTable) != "ApiKeysTable" {
		t.Error("no ApiKeysTable output") // anchor: the name the README gives
	}
	if len(synth.Outputs) != len(want) {
		t.Errorf("%d outputs, want %d", len(synth.Outputs), len(want))
	}
	for name, mention := range want {
		out, ok := synth.Outputs[name]
		value, _ := json.Marshal(out.Value)
		if !ok || !strings.Contains(string(value), mention) {
			t.Errorf("output %s = %s, want it to mention %s", name, value, mention)
		}
	}
	if got := synth.Outputs[stackoutputs.MCPURL].Value.(map[string]any)["Fn::Join"].([]any)[1].([]any); !equalJSON(got[len(got)-1], "/mcp") ||
		!slices.ContainsFunc(got, func(p any) bool { return equalJSON(p, ref(apiID)) }) {
		t.Errorf("McpUrl is not the API's URL and /mcp: %v", got)
	}
}

// TestDocsListOptions: docs/deploy.md has each option's row as its
// declaration renders it, docs/configuration.md each indexer setting's.
func TestDocsListOptions(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	configuration, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range appOptions {
		if !bytes.Contains(readme, []byte(o.Row()+"\n")) {
			t.Errorf("docs/deploy.md lacks the row of option %s:\n%s", o.Name(), o.Row())
		}
	}
	// The indexer's settings are in its configuration table.
	for _, s := range append([]settings.Setting{indexer.QueueURL}, indexer.Settings...) {
		if !bytes.Contains(configuration, []byte(s.Row()+"\n")) {
			t.Errorf("docs/configuration.md lacks the row of setting %s:\n%s", s.Name(), s.Row())
		}
	}
}

// TestAlarmMetrics: deploy.AlarmMetrics, which the cost model reads,
// counts the metrics of the stack's alarms: an alarm on one metric names
// it, a metric math alarm lists its metrics.
func TestAlarmMetrics(t *testing.T) {
	got := 0
	for _, a := range resourcesOfType("AWS::CloudWatch::Alarm") {
		if a.Properties["MetricName"] != nil {
			got++
			continue
		}
		metrics, _ := a.Properties["Metrics"].([]any)
		for _, m := range metrics {
			if m.(map[string]any)["MetricStat"] != nil {
				got++
			}
		}
	}
	want := deploy.AlarmMetrics(len(toolFunctions)+len(otherFunctionNames), len(tools), len(dynamostore.Schemas))
	if got != want {
		t.Errorf("the alarms read %d metrics; deploy.AlarmMetrics says %d", got, want)
	}
}
