package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/deploy"
)

// fixture is a measured file with round figures.
var fixture = deploy.Measured{
	FirstBuild: deploy.BuildFigures{Files: 100, Chunks: 1000, S3PutBytes: 1 << 20, EmbedTokens: 100000, Metrics: 12},
	Build: deploy.BuildFigures{Files: 100, Chunks: 1000, IndexerMs: 100, WorkerMs: 1000, S3Gets: 10, S3Puts: 5,
		S3PutBytes: 1 << 10, SQSRequests: 4, SQSSends: 1, LogBytes: 1000},
	Tools: map[string]deploy.ToolFigures{
		"read_file":     {WarmMs: 10, InitMs: 50, ColdMs: 100, DynamoWrites: 1, LogBytes: 500, Metrics: 4},
		"grep_codebase": {WarmMs: 20, InitMs: 50, ColdMs: 120, DynamoWrites: 1, LogBytes: 500, Metrics: 4},
	},
	Authorizer: deploy.ToolFigures{WarmMs: 5, InitMs: 30, DynamoReads: 1, LogBytes: 200},
}

func sum(b bill, service string) float64 {
	var s float64
	for _, l := range b.Lines {
		if service == "" || l.Service == service {
			s += l.USD()
		}
	}
	return s
}

func TestCompute(t *testing.T) {
	md := newModel(fixture)
	base := Profile{Agents: 1, CallsPerAgentDay: 1000, Mix: map[string]float64{"read_file": 1}, PushesPerDay: 1,
		Files: 100, MB: 10, ChangedFiles: 1, ActiveHoursPerDay: 8}
	tests := []struct {
		name    string
		change  func(p *Profile)
		service string
		factor  float64 // the service's cost against base's
	}{
		{"twice the agents: twice the API Gateway", func(p *Profile) { p.Agents = 2 }, "API Gateway", 2},
		{"twice the calls: twice the DynamoDB writes", func(p *Profile) { p.CallsPerAgentDay = 2000; p.ActiveHoursPerDay = 0 }, "DynamoDB", 2},
		{"twice the pushes: twice the SQS", func(p *Profile) { p.PushesPerDay = 2 }, "SQS", 2},
		{"twice the files: twice the SQS", func(p *Profile) { p.Files = 200 }, "SQS", 2},
		{"more calls, same pushes: same SQS", func(p *Profile) { p.Agents = 7 }, "SQS", 1},
		{"ten changed files: ten times the Bedrock", func(p *Profile) { p.ChangedFiles = 10 }, "Bedrock", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			if tt.service == "DynamoDB" {
				p.ActiveHoursPerDay = 0 // no authorizer reads
			}
			before := sum(md.compute(p), tt.service)
			tt.change(&p)
			after := sum(md.compute(p), tt.service)
			if before == 0 || math.Abs(after/before-tt.factor) > 1e-9 {
				t.Errorf("%s: %g then %g, want a factor of %g", tt.service, before, after, tt.factor)
			}
		})
	}
}

// TestAuthorizerCache: an agent costs one authorizer invocation per cache
// TTL while it works, never more than its calls.
func TestAuthorizerCache(t *testing.T) {
	md := newModel(fixture)
	tests := []struct {
		calls, hours, want float64 // want: invocations a day
	}{
		{100, 8, 100},   // fewer calls than TTLs: every call
		{10000, 8, 960}, // 8 h of 30 s windows
		{10000, 0, 0},   // no work
		{10000, 24, 2880},
	}
	for _, tt := range tests {
		p := Profile{Agents: 1, CallsPerAgentDay: tt.calls, ActiveHoursPerDay: tt.hours}
		for _, l := range md.authorizerLines(p) {
			if l.Item == "authorizer requests" && math.Abs(l.Quantity-tt.want*daysPerMonth) > 1e-6 {
				t.Errorf("%g calls in %g h: %g invocations a month, want %g a day", tt.calls, tt.hours, l.Quantity, tt.want)
			}
		}
	}
}

// TestMetrics: the builds' metrics, and those of each tool called.
func TestMetrics(t *testing.T) {
	md := newModel(fixture)
	tests := []struct {
		mix  map[string]float64
		want int
	}{
		{map[string]float64{"read_file": 1}, 16},
		{map[string]float64{"read_file": 0.5, "grep_codebase": 0.5}, 20},
		{map[string]float64{"read_file": 1, "grep_codebase": 0}, 16},
	}
	for _, tt := range tests {
		if got := md.metrics(Profile{Mix: tt.mix}); got != tt.want {
			t.Errorf("%v: %d metrics, want %d", tt.mix, got, tt.want)
		}
	}
}

func TestParseMix(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]float64
		bad  bool
	}{
		{"a=1,b=3", map[string]float64{"a": 0.25, "b": 0.75}, false},
		{"a=2", map[string]float64{"a": 1}, false},
		{"a", nil, true},
		{"a=-1", nil, true},
		{"a=0", nil, true},
	}
	for _, tt := range tests {
		got, err := parseMix(tt.in)
		if (err != nil) != tt.bad || len(got) != len(tt.want) {
			t.Errorf("%q: %v, %v", tt.in, got, err)
		}
		for k, v := range tt.want {
			if math.Abs(got[k]-v) > 1e-12 {
				t.Errorf("%q: %s=%g, want %g", tt.in, k, got[k], v)
			}
		}
	}
}

func TestSizeContainer(t *testing.T) {
	tests := []struct{ mb, vcpu, gb float64 }{{156, 1, 2}, {780, 1, 2}, {4000, 1, 6}, {8000, 2, 10}}
	for _, tt := range tests {
		if c := sizeContainer(tt.mb); c.VCPU != tt.vcpu || c.GB != tt.gb {
			t.Errorf("%g MB: %+v, want %g vCPU %g GB", tt.mb, c, tt.vcpu, tt.gb)
		}
	}
}

// TestRun: the committed measurements load and the profiles print; a
// region without prices and a tool without figures are refused.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(nil, &out); err != nil || !strings.Contains(out.String(), "(b) 50 agents") || !strings.Contains(out.String(), "Fargate") {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, args := range [][]string{{"-region", "eu-west-1"}, {"-agents", "1", "-mix", "no_such_tool=1"}} {
		if err := run(args, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
