// Package tooltest runs tool tests the way users reach the tools: through
// the pipeline family.Pipeline builds (rate limiter, input and output
// schema validation, envelope), on both storage backends.
//
//	for _, be := range tooltest.Backends(t) {
//		t.Run(be.Name, func(t *testing.T) {
//			st := be.NewStores(t)
//			h := tooltest.New(t, st, mytools.Tools(st.X, clock.Now))
//			var out result
//			h.OK(t, "alice", "my_tool", `{"a":1}`, &out)
//		})
//	}
package tooltest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/smoke"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Backend makes fresh, empty stores of one kind.
type Backend struct {
	Name      string
	NewStores func(tb testing.TB) store.Stores
}

// Backends returns the embedded bolt store ("bolt": a file in a temporary
// directory) and DynamoDB ("dynamodb": fresh tables on one dynalite process,
// started now and stopped when tb ends; dynalite must be installed with
// `npm ci`, it is never skipped).
func Backends(tb testing.TB) []Backend {
	tb.Helper()
	srv := dynamotest.Start(tb)
	return []Backend{
		{Name: "bolt", NewStores: BoltStores},
		{Name: "dynamodb", NewStores: func(tb testing.TB) store.Stores { return srv.Stores(tb) }},
	}
}

// BoltStores opens fresh embedded stores in a temporary directory, closed
// when tb ends.
func BoltStores(tb testing.TB) store.Stores {
	tb.Helper()
	db, err := boltstore.Open(filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatalf("open bolt store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db.Stores()
}

// unlimited is a rate limit no test reaches, so tests can make many calls
// while the limiter still runs on every one.
const unlimited = 1 << 30

// Harness calls tools through a real pipeline.
type Harness struct {
	p *toolkit.Pipeline
}

// New builds the pipeline serving tools over st, with rate limits raised
// out of reach.
func New(tb testing.TB, st store.Stores, tools []toolkit.Tool) *Harness {
	tb.Helper()
	limits := map[string]int{}
	for _, t := range tools {
		limits[t.Name] = unlimited
	}
	p, err := wiring.Pipeline(tools, wiring.PipelineOptions{
		Limiter:    ratelimit.New(st.Counters, nil),
		RateLimits: limits,
		Log:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		tb.Fatalf("build pipeline: %v", err)
	}
	return &Harness{p: p}
}

// Call invokes a tool for tenant. args is the raw JSON arguments.
func (h *Harness) Call(tenant, tool, args string) toolkit.Outcome {
	return h.CallContext(context.Background(), tenant, tool, args)
}

// CallContext is Call under ctx (a deadline shorter than the contract's,
// say).
func (h *Harness) CallContext(ctx context.Context, tenant, tool, args string) toolkit.Outcome {
	return h.CallLimited(ctx, tenant, nil, tool, args)
}

// CallLimited is CallContext by a caller limited to the repositories
// repos (nil: every one).
func (h *Harness) CallLimited(ctx context.Context, tenant string, repos []string, tool, args string) toolkit.Outcome {
	return h.p.Invoke(ctx, toolkit.Request{
		Tool: tool, Args: json.RawMessage(args), Tenant: tenant, RequestID: "test", Repos: repos,
	})
}

// OK calls a tool, fails the test unless it succeeds, decodes the result
// into out (when not nil) and returns the outcome.
func (h *Harness) OK(tb testing.TB, tenant, tool, args string, out any) toolkit.Outcome {
	tb.Helper()
	o := h.Call(tenant, tool, args)
	if !o.OK {
		tb.Fatalf("%s %s as %s: want success, got %+v", tool, short(args), tenant, o.Error)
	}
	if out != nil {
		if err := json.Unmarshal(o.Result, out); err != nil {
			tb.Fatalf("%s: decode result %s: %v", tool, o.Result, err)
		}
	}
	return o
}

// Fail calls a tool, fails the test unless it fails with code, and returns
// the error.
func (h *Harness) Fail(tb testing.TB, tenant, tool, args string, code toolerr.Code) *toolkit.ErrorBody {
	tb.Helper()
	o := h.Call(tenant, tool, args)
	if o.OK || o.Error.Code != code {
		tb.Fatalf("%s %s as %s: want %s, got result %s error %+v", tool, short(args), tenant, code, o.Result, o.Error)
	}
	return o.Error
}

// short abbreviates long arguments for messages.
func short(s string) string {
	if len(s) <= 120 {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:100], len(s))
}

// Clock is a deterministic clock: each Now is one second after the last.
type Clock struct {
	mu   sync.Mutex
	next time.Time
}

// Start is the first time a new Clock returns.
var Start = time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)

// NewClock returns a clock whose first reading is Start.
func NewClock() *Clock { return &Clock{next: Start} }

// Now returns the next reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.next
	c.next = c.next.Add(time.Second)
	return t
}

// Reading returns a new Clock's n-th reading (0 is the first) in RFC 3339,
// as tools show times.
func Reading(n int) string {
	return Start.Add(time.Duration(n) * time.Second).Format(time.RFC3339)
}

// Contains reports whether got contains want, as a contract example's
// output must be contained in the tool's result: every key of a want
// object, with a value that contains the wanted one; an array of as many
// elements, each containing the wanted one; an equal scalar. On a
// mismatch it returns the path (from root) where they differ.
func Contains(got, want any, root string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return root, false
		}
		for k, wv := range w {
			if p, ok := Contains(g[k], wv, root+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return root, false
		}
		for i := range w {
			if p, ok := Contains(g[i], w[i], fmt.Sprintf("%s[%d]", root, i)); !ok {
				return p, false
			}
		}
		return "", true
	default:
		g, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		return root, string(g) == string(wb)
	}
}

// InternetReachable reports whether example.com answers on port 443.
// Examples that need the internet must succeed where it does, and fail
// with UPSTREAM_ERROR where it does not.
func InternetReachable() bool {
	conn, err := net.DialTimeout("tcp", "example.com:443", 3*time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// CheckSmoke logs a smoke test's table (what names the server checked)
// and fails tb for every problem it found, and for an example that needs
// the internet answered UPSTREAM_ERROR where this machine reaches it.
func CheckSmoke(tb testing.TB, what string, r smoke.Report) {
	tb.Helper()
	var table strings.Builder
	r.WriteTable(&table)
	tb.Logf("smoke test of %s:\n%s", what, table.String())
	if !r.OK() {
		tb.Error("the smoke test found problems (above)")
	}
	online := InternetReachable()
	for _, c := range r.Calls {
		if online && strings.HasPrefix(c.Outcome, string(toolerr.UpstreamError)) {
			tb.Errorf("%s on %s: %s, yet this machine reaches the internet", c.Tool, c.Route, c.Outcome)
		}
	}
}
