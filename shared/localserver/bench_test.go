package localserver_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
)

// latencies collects per-request durations and reports p50/p99 and req/s.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d...)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, elapsed time.Duration) {
	slices.Sort(l.all)
	q := func(p float64) float64 { return float64(l.all[int(p*float64(len(l.all)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(len(l.all))/elapsed.Seconds(), "req/s")
}

var benchEnv = map[string]string{config.RateLimits.Name(): localrun.UnlimitedRates("hello")}

// BenchmarkV1Hello: POST /v1/tools/hello over real HTTP on loopback, with
// rate limiting (embedded store) and validation, 8 concurrent clients.
func BenchmarkV1Hello(b *testing.B) {
	base := startServer(b, benchEnv)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var lat latencies
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			resp, err := client.Post(base+"/v1/tools/hello", "application/json", strings.NewReader(`{"args":{"name":"World"}}`))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		lat.add(mine)
	})
	lat.report(b, time.Since(start))
}

// BenchmarkMCPHello: tools/call hello with the official go-sdk client over
// real HTTP on loopback, one session per goroutine.
func BenchmarkMCPHello(b *testing.B) {
	base := startServer(b, benchEnv)
	var lat latencies
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
		if err != nil {
			b.Error(err)
			return
		}
		defer cs.Close()
		var mine []time.Duration
		params := &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{"name": "World"}}
		for pb.Next() {
			t0 := time.Now()
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Errorf("call: %v %+v", err, res)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		lat.add(mine)
	})
	lat.report(b, time.Since(start))
}
