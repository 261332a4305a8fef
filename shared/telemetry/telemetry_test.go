package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// The Observer is the pipeline's.
var _ toolkit.Observer = (*telemetry.Observer)(nil)

func TestLogLineAndEMF(t *testing.T) {
	var logs, emf bytes.Buffer
	o := telemetry.NewObserver(telemetry.NewLogger(&logs, slog.LevelInfo), &emf)
	ctx := context.Background()
	o.Observe(ctx, telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r1", Duration: 1500 * time.Microsecond})
	o.Observe(ctx, telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r2", Code: toolerr.Internal, Cause: errors.New("db down")})
	o.Observe(ctx, telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r3", Code: toolerr.RateLimited})
	o.Observe(ctx, telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r4", Code: toolerr.InvalidInput})

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d log lines", len(lines))
	}
	var first, second map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	if first["event"] != "tool_call" || first["tool"] != "hello" || first["tenant"] != "acme" ||
		first["request_id"] != "r1" || first["duration_ms"] != 1.5 || first["outcome"] != "ok" {
		t.Errorf("log line %v", first)
	}
	if second["level"] != "ERROR" || second["code"] != "INTERNAL_ERROR" || second["cause"] != "db down" {
		t.Errorf("error log line %v", second)
	}

	var errs, limited []float64
	for _, l := range strings.Split(strings.TrimSpace(emf.String()), "\n") {
		var rec struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name, Unit string }
				}
			} `json:"_aws"`
			Tool                string
			Invocations         float64
			Errors, RateLimited float64
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		m := rec.AWS.CloudWatchMetrics[0]
		if m.Namespace != "Toolshed" || m.Dimensions[0][0] != "Tool" || len(m.Metrics) != 4 || rec.Tool != "hello" || rec.Invocations != 1 {
			t.Errorf("EMF record %s", l)
		}
		errs = append(errs, rec.Errors)
		limited = append(limited, rec.RateLimited)
	}
	// Only server faults count as Errors; bad input from agents does not.
	if want := []float64{0, 1, 0, 0}; !equal(errs, want) {
		t.Errorf("Errors = %v, want %v", errs, want)
	}
	if want := []float64{0, 0, 1, 0}; !equal(limited, want) {
		t.Errorf("RateLimited = %v, want %v", limited, want)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGatewayObserver: forwarded calls log as tool_forward and carry the
// Via dimension, so tool functions' own metrics are not counted twice.
func TestGatewayObserver(t *testing.T) {
	var logs, emf bytes.Buffer
	o := telemetry.NewGatewayObserver(telemetry.NewLogger(&logs, slog.LevelInfo), &emf)
	o.Observe(context.Background(), telemetry.Record{Tool: "hello", Tenant: "acme", RequestID: "r1",
		Code: toolerr.UpstreamError, Cause: errors.New("invoke fn-hello: connection refused")})
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["event"] != "tool_forward" || line["code"] != "UPSTREAM_ERROR" || line["cause"] != "invoke fn-hello: connection refused" {
		t.Errorf("log line %v", line)
	}
	var rec struct {
		AWS struct {
			CloudWatchMetrics []struct{ Dimensions [][]string }
		} `json:"_aws"`
		Via    string
		Errors float64
	}
	if err := json.Unmarshal(emf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if dims := rec.AWS.CloudWatchMetrics[0].Dimensions; len(dims) != 1 || strings.Join(dims[0], ",") != "Tool,Via" || rec.Via != "gateway" || rec.Errors != 1 {
		t.Errorf("EMF record %s", emf.String())
	}
}
