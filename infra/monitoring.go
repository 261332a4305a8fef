package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// logRetention is deploy.LogRetentionDays as CDK names it.
var logRetention = map[int]awslogs.RetentionDays{
	7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS,
	30: awslogs.RetentionDays_ONE_MONTH, 90: awslogs.RetentionDays_THREE_MONTHS,
}[deploy.LogRetentionDays]

// Every alarm looks at one period of alarmPeriodMinutes, and notifies the
// alarm topic when it goes off and when it recovers.
const alarmPeriodMinutes = 5

// What the alarms call trouble.
const (
	durationShare         = 0.8 // p99 duration above this share of the timeout
	toolErrorPercent      = 5   // tool calls failing on the server's side (5xx codes)
	rateLimitedPercent    = 20  // tool calls refused RATE_LIMITED
	apiServerErrorPercent = 5   // HTTP API answers that are 5xx
	apiLatencyMs          = 10000
	iteratorAgeMinutes    = 15 // the oldest Memory stream record not yet indexed
	one                   = 1  // a count alarm's threshold: any at all
)

// savedQuery is a CloudWatch Logs Insights query over the tool functions'
// logs (one JSON line per call, shared/telemetry), saved in the account
// and shown on the dashboard.
type savedQuery struct {
	Name, Query string
}

// savedQueries read the fields of a telemetry call line (queryFields).
var savedQueries = []savedQuery{
	{"slowest calls", fmt.Sprintf(`fields @timestamp, tool, tenant, duration_ms, outcome, code, request_id
| filter event = %q
| sort duration_ms desc
| limit 50`, telemetry.CallEvent)},
	{"errors by code", fmt.Sprintf(`filter event = %q and outcome = "error"
| stats count(*) as calls by tool, code
| sort calls desc`, telemetry.CallEvent)},
	{"calls by tenant", fmt.Sprintf(`filter event = %q
| stats count(*) as calls, avg(duration_ms) as avg_ms, max(duration_ms) as max_ms by tenant, tool
| sort calls desc`, telemetry.CallEvent)},
}

// queryFields are the log fields the saved queries read.
var queryFields = []string{"event", "tool", "tenant", "duration_ms", "outcome", "code", "request_id"}

// addMonitoring adds the alarm topic, the alarms, the saved queries and
// the dashboard that shows what the alarms watch.
func (d *deployment) addMonitoring() {
	d.alarms = awssns.NewTopic(d.stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String(*d.stack.StackName() + " alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	if d.opts.AlarmEmail != "" {
		d.alarms.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(d.opts.AlarmEmail), nil))
	}
	rows := []*[]awscloudwatch.IWidget{d.apiRow(), d.toolsRow(), d.storageRow(), d.indexerRow(), d.queriesRow()}
	for _, w := range d.watched {
		rows = append(rows, d.functionRow(w))
	}
	d.dashboard = awscloudwatch.NewDashboard(d.stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: d.stack.StackName(),
		Widgets:       &rows,
	})
}

// alarm creates an alarm on metric over one period that notifies the
// alarm topic. Missing data (no calls) is not trouble.
func (d *deployment) alarm(id string, metric awscloudwatch.IMetric, op awscloudwatch.ComparisonOperator, threshold float64, description string) {
	a := awscloudwatch.NewAlarm(d.stack, jsii.String(id), &awscloudwatch.AlarmProps{
		Metric:             metric,
		AlarmDescription:   jsii.String(description),
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: op,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	a.AddAlarmAction(awscloudwatchactions.NewSnsAction(d.alarms))
	a.AddOkAction(awscloudwatchactions.NewSnsAction(d.alarms))
}

var (
	atLeast = awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	above   = awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD
)

// stat is a metric statistic over the alarm period.
func stat(s string) *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Period: period(), Statistic: jsii.String(s)}
}

func period() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(alarmPeriodMinutes)) }

// combine is the sum (op "+") or the percentage (op "%": 100 × a / b, 0
// when b is 0) of two metrics. Its metrics' ids start with key, which
// must differ from that of every expression on the same graph.
func combine(key, label string, a awscloudwatch.IMetric, op string, b awscloudwatch.IMetric) awscloudwatch.MathExpression {
	ka, kb := key+"A", key+"B"
	expr := ka + " + " + kb
	if op == "%" {
		expr = fmt.Sprintf("IF(%s > 0, 100 * %s / %s, 0)", kb, ka, kb)
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String(expr),
		UsingMetrics: &map[string]awscloudwatch.IMetric{ka: a, kb: b},
		Label:        jsii.String(label),
		Period:       period(),
	})
}

// functionRow is a function's row (invocations, errors and throttles,
// duration) and its alarms: any error, any throttle, p99 duration near the
// timeout.
func (d *deployment) functionRow(w monitored) *[]awscloudwatch.IWidget {
	id := constructID(w.Name)
	sum := stat("Sum")
	// An alarm's metric has no label: a labelled metric becomes a metric math alarm.
	p99 := w.Fn.MetricDuration(stat("p99"))
	d.alarm(id+"ErrorsAlarm", w.Fn.MetricErrors(sum), atLeast, one,
		fmt.Sprintf("%s: at least one error in %d minutes", w.Name, alarmPeriodMinutes))
	d.alarm(id+"ThrottlesAlarm", w.Fn.MetricThrottles(sum), atLeast, one,
		fmt.Sprintf("%s: at least one throttle in %d minutes", w.Name, alarmPeriodMinutes))
	d.alarm(id+"DurationAlarm", p99, above, w.TimeoutSeconds*1000*durationShare,
		fmt.Sprintf("%s: p99 duration above %g%% of the %gs timeout", w.Name, durationShare*100, w.TimeoutSeconds))
	labelled := func(s string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: period(), Statistic: jsii.String(s), Label: jsii.String(s)}
	}
	return &[]awscloudwatch.IWidget{
		graph(w.Name+" invocations", w.Fn.MetricInvocations(sum)),
		graph(w.Name+" errors", w.Fn.MetricErrors(sum), w.Fn.MetricThrottles(sum)),
		graph(w.Name+" duration (ms)", w.Fn.MetricDuration(labelled("Average")), w.Fn.MetricDuration(labelled("p99"))),
	}
}

// toolMetric is a tool's EMF metric (shared/telemetry) with statistic s.
func toolMetric(tool, name, s string) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(telemetry.Namespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{telemetry.ToolDimension: jsii.String(tool)},
		Statistic:     jsii.String(s),
		Period:        period(),
		Label:         jsii.String(tool),
	})
}

// toolsRow shows every tool's calls as users feel them (the EMF metrics:
// failures answered as envelopes included) and alarms on each tool's
// server-side error rate, p99 duration near its contract's timeout, and
// share of calls refused RATE_LIMITED.
func (d *deployment) toolsRow() *[]awscloudwatch.IWidget {
	var calls, errorRates, limited, p99s []awscloudwatch.IMetric
	for _, tool := range tools {
		id := constructID(tool.Name)
		invocations := toolMetric(tool.Name, telemetry.MetricInvocations, "Sum")
		key := strings.ToLower(id[:1]) + id[1:]
		errorRate := combine(key+"Errors", tool.Name, toolMetric(tool.Name, telemetry.MetricErrors, "Sum"), "%", invocations)
		limitedShare := combine(key+"Limited", tool.Name, toolMetric(tool.Name, telemetry.MetricRateLimited, "Sum"), "%", invocations)
		p99 := toolMetric(tool.Name, telemetry.MetricDuration, "p99")
		d.alarm(id+"ToolErrorRateAlarm", errorRate, above, toolErrorPercent,
			fmt.Sprintf("%s: over %d%% of calls failed on the server's side", tool.Name, toolErrorPercent))
		d.alarm(id+"ToolDurationAlarm", p99, above, tool.DeadlineMs*durationShare,
			fmt.Sprintf("%s: p99 call above %g%% of the contract's %gms", tool.Name, durationShare*100, tool.DeadlineMs))
		d.alarm(id+"RateLimitedAlarm", limitedShare, above, rateLimitedPercent,
			fmt.Sprintf("%s: over %d%% of calls refused RATE_LIMITED", tool.Name, rateLimitedPercent))
		calls, errorRates, limited, p99s = append(calls, invocations), append(errorRates, errorRate),
			append(limited, limitedShare), append(p99s, p99)
	}
	return &[]awscloudwatch.IWidget{
		graphOf("tool calls", 6, calls...),
		graphOf("tool server errors (%)", 6, errorRates...),
		graphOf("tool calls rate-limited (%)", 6, limited...),
		graphOf("tool p99 (ms)", 6, p99s...),
	}
}

// apiRow shows the HTTP API's requests and latency, and alarms on its
// share of 5xx answers and its p99 latency.
func (d *deployment) apiRow() *[]awscloudwatch.IWidget {
	serverErrors := combine("api", "5xx (%)", d.api.MetricServerError(stat("Sum")), "%", d.api.MetricCount(stat("Sum")))
	latency := d.api.MetricLatency(stat("p99"))
	d.alarm("ApiServerErrorsAlarm", serverErrors, above, apiServerErrorPercent,
		fmt.Sprintf("HTTP API: over %d%% of answers are 5xx", apiServerErrorPercent))
	d.alarm("ApiLatencyAlarm", latency, above, apiLatencyMs,
		fmt.Sprintf("HTTP API: p99 latency above %dms", apiLatencyMs))
	labelled := func(s, label string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Period: period(), Statistic: jsii.String(s), Label: jsii.String(label)}
	}
	return &[]awscloudwatch.IWidget{
		graph("API requests", d.api.MetricCount(labelled("Sum", "requests")),
			d.api.MetricClientError(labelled("Sum", "4xx")), d.api.MetricServerError(labelled("Sum", "5xx"))),
		graph("API 5xx (%)", serverErrors),
		graph("API latency (ms)", d.api.MetricLatency(labelled("p50", "p50")), d.api.MetricLatency(labelled("p99", "p99"))),
	}
}

// storageRow shows each table's throttled requests and alarms on any.
func (d *deployment) storageRow() *[]awscloudwatch.IWidget {
	var throttles []awscloudwatch.IMetric
	for _, schema := range dynamostore.Schemas {
		t := d.tables[schema.Table]
		m := combine(strings.ToLower(string(schema.Table)), string(schema.Table),
			t.Metric(jsii.String("ReadThrottleEvents"), stat("Sum")), "+", t.Metric(jsii.String("WriteThrottleEvents"), stat("Sum")))
		d.alarm(string(schema.Table)+"TableThrottlesAlarm", m, atLeast, one,
			fmt.Sprintf("DynamoDB table %s: a request throttled", schema.Table))
		throttles = append(throttles, m)
	}
	return &[]awscloudwatch.IWidget{graphOf("DynamoDB throttled requests", 24, throttles...)}
}

// indexerRow shows the index events the indexer failed, how far behind
// the Memory stream it is, the index and embed queues (messages waiting,
// those that failed every receive) and the builds' metrics (texts
// embedded, requests throttled, texts refused, indexes published), and
// alarms on the failures and the stream's age.
func (d *deployment) indexerRow() *[]awscloudwatch.IWidget {
	failed := d.failures.MetricApproximateNumberOfMessagesVisible(stat("Maximum"))
	age := d.indexer.Metric(jsii.String("IteratorAge"), stat("Maximum"))
	dead := d.indexDeadLetters.MetricApproximateNumberOfMessagesVisible(stat("Maximum"))
	d.alarm("IndexerFailuresAlarm", failed, atLeast, one,
		"indexer: an index event failed every retry and waits in the failure queue (docs/deploy.md#replaying-failed-index-events)")
	d.alarm("IndexerIteratorAgeAlarm", age, above, iteratorAgeMinutes*60*1000,
		fmt.Sprintf("indexer: the Memory stream's oldest unindexed record is over %d minutes old", iteratorAgeMinutes))
	d.alarm("IndexDeadLettersAlarm", dead, atLeast, one,
		"index worker: a batch failed every receive and waits in the dead-letter queue; its build is stalled (docs/deploy.md#replaying-failed-index-events)")
	embedDead := d.embedDeadLetters.MetricApproximateNumberOfMessagesVisible(stat("Maximum"))
	d.alarm("EmbedDeadLettersAlarm", embedDead, atLeast, one,
		"index worker: an embed message failed every receive and waits in the embed dead-letter queue; its part's chunks are found by their words only (docs/deploy.md#replaying-failed-index-events)")
	build := func(name, s string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(telemetry.Namespace), MetricName: jsii.String(name),
			Period: period(), Statistic: jsii.String(s)})
	}
	return &[]awscloudwatch.IWidget{
		graphOf("indexer failed events (queue)", 4, failed),
		graphOf("indexer iterator age (ms)", 4, age),
		graphOf("index batches waiting, failed", 5, d.indexQueue.MetricApproximateNumberOfMessagesVisible(stat("Maximum")), dead),
		graphOf("embed messages waiting, failed", 5, d.embedQueue.MetricApproximateNumberOfMessagesVisible(stat("Maximum")), embedDead),
		graphOf("index builds", 6, build(indexer.MetricEmbedded, "Sum"), build(indexer.MetricThrottled, "Sum"),
			build(indexer.MetricEmbedFailed, "Sum"), build(indexer.MetricPublished, "Sum")),
	}
}

// queriesRow saves the Logs Insights queries over the tool functions' log
// groups and shows their answers.
func (d *deployment) queriesRow() *[]awscloudwatch.IWidget {
	var groups []*string
	for _, tf := range toolFunctions {
		groups = append(groups, jsii.String(d.logGroupName(tf.Name)))
	}
	var row []awscloudwatch.IWidget
	for _, q := range savedQueries {
		awslogs.NewCfnQueryDefinition(d.stack, jsii.String(constructID(q.Name)+"Query"), &awslogs.CfnQueryDefinitionProps{
			Name:          jsii.String(*d.stack.StackName() + "/" + q.Name),
			QueryString:   jsii.String(q.Query),
			LogGroupNames: &groups,
		})
		row = append(row, awscloudwatch.NewLogQueryWidget(&awscloudwatch.LogQueryWidgetProps{
			Title:         jsii.String(q.Name),
			LogGroupNames: &groups,
			QueryString:   jsii.String(q.Query),
			View:          awscloudwatch.LogQueryVisualizationType_TABLE,
			Width:         jsii.Number(8),
		}))
	}
	return &row
}

// graph is a third-of-a-row line graph of the given metrics.
func graph(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return graphOf(title, 8, metrics...)
}

// graphOf is a line graph width (of 24) wide.
func graphOf(title string, width float64, metrics ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title),
		Left:  &metrics,
		Width: jsii.Number(width),
	})
}
