package lambdaentry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/toolset"
)

// benchRounds is how many times each function's workload runs in one cold
// start before its peak RSS is read.
const benchRounds = 10

// coldStart is a function to measure and the events one round sends it.
type coldStart struct {
	name   string
	cfg    lambdatest.Config
	events func(round int) [][]byte
}

// coldStartFigures are one function's measurements.
type coldStartFigures struct {
	memoryMB    int
	starts      int
	invocations int
	inits       []time.Duration
	peakRSS     int64
}

// BenchmarkColdStart starts each function (the gateway, the authorizer and
// every tool's) as a fresh process per iteration under the Runtime API,
// records its init time (process start to its first GET
// /runtime/invocation/next), runs benchRounds rounds of its workload and
// then reads its peak RSS (VmHWM). Workloads: the gateway gets tools/list,
// an MCP tools/call of hello and add_task and a /v1 call; the authorizer a
// known and an unknown key; a tool every input of its contract's examples as
// direct invocations plus one API Gateway event, for a fresh tenant each
// round. It prints a table at the end (run with `make bench-lambda`).
func BenchmarkColdStart(b *testing.B) {
	d := newDeployment(b)
	var starts []coldStart
	starts = append(starts, gatewayColdStart(b, d), authorizerColdStart(b, d))
	for _, tool := range toolset.Tools() {
		starts = append(starts, toolColdStart(b, d, tool))
	}

	figures := map[string]*coldStartFigures{}
	for _, cs := range starts {
		b.Run(cs.name, func(b *testing.B) {
			f := &coldStartFigures{memoryMB: cs.cfg.MemoryMB}
			for i := range b.N {
				measureColdStart(b, d, cs, i, f)
			}
			figures[cs.name] = f
			b.ReportMetric(median(f.inits).Seconds()*1000, "init-ms")
			b.ReportMetric(float64(f.peakRSS)/(1<<20), "peak-RSS-MiB")
		})
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "function\tmemory MB\tcold starts\tinit ms (median)\tinit ms (max)\tinvocations/start\tpeak RSS MiB (max)\t")
	for _, cs := range starts {
		f, ok := figures[cs.name]
		if !ok {
			continue // filtered out with -bench
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%.1f\t%.1f\t%d\t%.1f\t\n", cs.name, f.memoryMB, f.starts,
			median(f.inits).Seconds()*1000, slices.Max(f.inits).Seconds()*1000,
			f.invocations/f.starts, float64(f.peakRSS)/(1<<20))
	}
	w.Flush()
}

// measureColdStart runs one cold start of cs and adds its figures to f.
func measureColdStart(b *testing.B, d *deployment, cs coldStart, iteration int, f *coldStartFigures) {
	b.Helper()
	cfg := cs.cfg
	cfg.Name = fmt.Sprintf("%s-bench-%d", cs.cfg.Name, iteration)
	fn := d.Start(b, cfg)
	defer fn.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init, err := fn.InitDuration(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for round := range benchRounds {
		for _, event := range cs.events(iteration*benchRounds + round) {
			resp := invoke(b, fn, event)
			if resp.FunctionError != "" {
				b.Fatalf("%s: function error %s", cs.name, resp.Payload)
			}
			f.invocations++
		}
	}
	rss, err := fn.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	f.starts++
	f.inits = append(f.inits, init)
	f.peakRSS = max(f.peakRSS, rss)
}

func gatewayColdStart(b *testing.B, d *deployment) coldStart {
	functions := map[string]string{}
	for _, tool := range []string{"hello", "add_task"} {
		functions[tool] = d.Tool(b, tool).Name
	}
	call := func(id int, tool, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	}
	return coldStart{
		name: "gateway",
		cfg:  d.GatewayConfig(b, functions),
		events: func(round int) [][]byte {
			tenant := fmt.Sprint("bench-gateway-", round)
			return [][]byte{
				withRoute(b, "mcp-call-hello.json", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, tenant),
				withRoute(b, "mcp-call-hello.json", "", call(2, "hello", `{"name":"World"}`), tenant),
				withRoute(b, "mcp-call-hello.json", "", call(3, "add_task", `{"title":"Benchmark","description":"cold start"}`), tenant),
				withRoute(b, "v1-hello.json", "", `{"args":{"name":"World"}}`, tenant),
			}
		},
	}
}

func authorizerColdStart(b *testing.B, d *deployment) coldStart {
	key, _, err := auth.Create(context.Background(), d.Stores.APIKeys, "bench", "bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	request := string(fixture(b, "authorizer-request.json"))
	known := []byte(strings.ReplaceAll(request, "KEY_PLACEHOLDER", key))
	unknown := []byte(strings.ReplaceAll(request, "KEY_PLACEHOLDER", "tsk_unknown"))
	return coldStart{
		name:   "authorizer",
		cfg:    d.AuthorizerConfig(),
		events: func(int) [][]byte { return [][]byte{known, unknown} },
	}
}

func toolColdStart(b *testing.B, d *deployment, tool string) coldStart {
	c, _ := d.Contracts.Get(tool)
	return coldStart{
		name: tool,
		cfg:  d.ToolConfig(b, tool),
		events: func(round int) [][]byte {
			tenant := fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(tool, "_", "-"), round)
			var events [][]byte
			for i, ex := range c.Examples {
				events = append(events, directEvent(tool, string(ex.Input), tenant, fmt.Sprint("example-", i)))
			}
			if len(c.Examples) > 0 {
				body, err := json.Marshal(map[string]json.RawMessage{"args": c.Examples[0].Input})
				if err != nil {
					b.Fatal(err)
				}
				events = append(events, withRoute(b, "v1-hello.json", "/v1/tools/"+tool, string(body), tenant))
			}
			return events
		},
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
