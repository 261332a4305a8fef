// Package telemetry turns each finished tool call into one structured log
// line (log/slog, JSON) and, when enabled, one CloudWatch Embedded Metric
// Format record with Invocations, Errors (server-side failures only, so bad
// input from agents does not page anyone), RateLimited and Duration per tool.
package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Namespace is the CloudWatch metrics namespace.
const Namespace = "Toolshed"

// The metrics of each call, in Namespace with the dimension ToolDimension
// (and Via for the calls the gateway forwards), and the events of its log
// lines; the deployment's alarms, dashboard and saved queries read them.
const (
	ToolDimension      = "Tool"
	MetricInvocations  = "Invocations"
	MetricErrors       = "Errors" // server-side failures only (5xx codes)
	MetricRateLimited  = "RateLimited"
	MetricDuration     = "Duration" // milliseconds
	CallEvent          = "tool_call"
	ForwardedCallEvent = "tool_forward"
)

// NewLogger returns the JSON slog logger every binary uses.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Record describes one finished call (toolkit.Observe makes it).
type Record struct {
	Tool      string
	Tenant    string
	RequestID string
	Duration  time.Duration
	Code      toolerr.Code // empty on success
	Cause     error        // the underlying error, for logs only
	// Notes are what went wrong without failing the call (the rate
	// limiter's storage, say), for logs only.
	Notes []string
}

// Observer logs every call and optionally writes EMF metrics.
type Observer struct {
	log   *slog.Logger
	emf   io.Writer // nil: no metrics
	event string    // the log line's event
	via   string    // "" for the tool itself; "gateway" for forwarded calls
	mu    sync.Mutex
	now   func() time.Time
}

// NewObserver logs to log and, when emf is not nil, writes one EMF JSON
// line per call to it (in Lambda: stdout, which CloudWatch Logs ingests).
func NewObserver(log *slog.Logger, emf io.Writer) *Observer {
	return &Observer{log: log, emf: emf, event: CallEvent, now: time.Now}
}

// NewGatewayObserver observes the calls the deployed gateway forwards to
// tool functions: log lines have event "tool_forward", and EMF records
// carry the dimensions Tool and Via=gateway, so they are not counted again
// with the tool functions' own metrics.
func NewGatewayObserver(log *slog.Logger, emf io.Writer) *Observer {
	return &Observer{log: log, emf: emf, event: ForwardedCallEvent, via: "gateway", now: time.Now}
}

// Observe implements toolkit.Observer.
func (o *Observer) Observe(ctx context.Context, r Record) {
	ms := float64(r.Duration.Microseconds()) / 1000
	attrs := []slog.Attr{
		slog.String("event", o.event),
		slog.String("tool", r.Tool),
		slog.String("tenant", r.Tenant),
		slog.String("request_id", r.RequestID),
		slog.Float64("duration_ms", ms),
	}
	level := slog.LevelInfo
	if r.Code == "" {
		attrs = append(attrs, slog.String("outcome", "ok"))
	} else {
		attrs = append(attrs, slog.String("outcome", "error"), slog.String("code", string(r.Code)))
		if r.Cause != nil {
			attrs = append(attrs, slog.String("cause", r.Cause.Error()))
		}
		if r.Code == toolerr.Internal || r.Code == toolerr.StorageError {
			level = slog.LevelError
		}
	}
	if len(r.Notes) > 0 {
		attrs = append(attrs, slog.Any("notes", r.Notes))
		level = max(level, slog.LevelWarn)
	}
	o.log.LogAttrs(ctx, level, "tool call", attrs...)
	if o.emf != nil {
		o.writeEMF(r, ms)
	}
}

func (o *Observer) writeEMF(r Record, ms float64) {
	boolNum := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	dims := map[string]string{ToolDimension: r.Tool}
	if o.via != "" {
		dims["Via"] = o.via
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	WriteMetrics(o.emf, o.now(), dims, []Metric{
		{MetricInvocations, "Count", 1},
		{MetricErrors, "Count", boolNum(r.Code != "" && toolerr.Lookup(r.Code).HTTPStatus >= 500)},
		{MetricRateLimited, "Count", boolNum(r.Code == toolerr.RateLimited)},
		{MetricDuration, "Milliseconds", ms},
	})
}

// Metric is one value of an EMF record.
type Metric struct {
	Name  string
	Unit  string // a CloudWatch unit: Count, Milliseconds, Seconds…
	Value float64
}

// WriteMetrics writes one CloudWatch Embedded Metric Format record to w,
// as one line: metrics in Namespace with the dimensions dims (their
// names sorted; none when empty), at time at.
func WriteMetrics(w io.Writer, at time.Time, dims map[string]string, metrics []Metric) {
	names := slices.Sorted(maps.Keys(dims))
	defs := make([]map[string]string, len(metrics))
	rec := map[string]any{}
	for i, m := range metrics {
		defs[i] = map[string]string{"Name": m.Name, "Unit": m.Unit}
		rec[m.Name] = m.Value
	}
	for k, v := range dims {
		rec[k] = v
	}
	rec["_aws"] = map[string]any{
		"Timestamp": at.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{names},
			"Metrics":    defs,
		}},
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	w.Write(append(line, '\n'))
}
