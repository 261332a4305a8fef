// Package smoke checks a running Toolshed from the outside, as its clients
// see it: it lists the tools over /mcp with the official MCP Go SDK client,
// calls each tool's first contract example on the three routes (/mcp
// tools/call, /v1/tools/{name}, /mcp/tool/{name}), checks that every answer
// is in its route's envelope and that every result fits the tool's
// outputSchema, and times each call.
//
// scripts/smoke runs it against any URL (a deployment, make run); the
// tests of shared/localserver and shared/lambdaentry run it against the
// local server and against the real bootstraps under the Lambda harness.
// It calls the tools for real: the examples add tasks, append memory
// entries and write a workspace file for the key's tenant.
package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Options say where the server is and how to reach it.
type Options struct {
	// URL is the server's base URL: http://127.0.0.1:8000, or a stack's
	// ApiUrl (the routes are URL + /mcp, /v1/tools/{name}, ...).
	URL string
	// Key is sent as "Authorization: Bearer <key>"; "" sends none.
	Key string
	// Timeout bounds each call (0: a minute).
	Timeout time.Duration
}

// The routes a tool is called on, as the table names them.
const (
	RouteMCP     = "/mcp tools/call"
	RouteV1      = "/v1/tools/{name}"
	RouteTaskAPI = "/mcp/tool/{name}"
)

// Routes are the routes every tool is called on, in the table's order.
var Routes = []string{RouteMCP, RouteV1, RouteTaskAPI}

// Call is one tool called on one route.
type Call struct {
	Tool, Route string
	Took        time.Duration
	// Outcome is what the answer was: "ok", the error code the example
	// expects, or UPSTREAM_ERROR for an example that needs the internet
	// where the server cannot reach it.
	Outcome string
	// Problem says what is wrong with the answer; "" when it is right.
	Problem string
}

// Report is what Run found.
type Report struct {
	URL    string
	Server string // serverInfo: name and version
	Tools  []string
	Calls  []Call
}

// OK reports whether every call was answered rightly.
func (r Report) OK() bool {
	return !slices.ContainsFunc(r.Calls, func(c Call) bool { return c.Problem != "" })
}

// Run checks the server at o.URL. An error means it could not start
// checking (no MCP session, no tool list); what a check finds is in the
// report.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	c := &client{base: strings.TrimSuffix(o.URL, "/"), timeout: o.Timeout,
		http: &http.Client{Transport: withKey{key: o.Key, next: http.DefaultTransport}}}
	set, err := schema.Load(contracts.FS)
	if err != nil {
		return Report{}, err
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "toolshed-smoke", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: c.base + "/mcp", HTTPClient: c.http, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return Report{}, fmt.Errorf("connect to %s/mcp: %w", c.base, err)
	}
	defer session.Close()
	c.session = session
	info := session.InitializeResult().ServerInfo
	report := Report{URL: c.base, Server: info.Name + " " + info.Version}
	list, err := session.ListTools(ctx, nil)
	if err != nil {
		return report, fmt.Errorf("tools/list: %w", err)
	}
	for _, tool := range list.Tools {
		report.Tools = append(report.Tools, tool.Name)
		contract, ok := set.Get(tool.Name)
		if !ok || len(contract.Examples) == 0 {
			report.Calls = append(report.Calls, Call{Tool: tool.Name, Route: RouteMCP,
				Problem: "listed, but no contract with an example here (is this smoke test older than the server?)"})
			continue
		}
		for _, route := range Routes {
			report.Calls = append(report.Calls, c.check(ctx, contract, route))
		}
	}
	return report, nil
}

// withKey sends the API key with every request.
type withKey struct {
	key  string
	next http.RoundTripper
}

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.key == "" {
		return k.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return k.next.RoundTrip(r)
}

// check calls a contract's first portable example on one route: its
// setup calls first (on /v1), then the example, and judges the answer.
func (c *client) check(ctx context.Context, contract *schema.Contract, route string) Call {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ex := portable(contract.Examples)
	call := Call{Tool: contract.Name, Route: route}
	var results []json.RawMessage
	for _, s := range ex.Setup {
		res, err := c.setup(ctx, s)
		if err != nil {
			call.Problem = fmt.Sprintf("setup %s: %v", s.Tool, err)
			return call
		}
		results = append(results, res)
	}
	input, err := ex.BoundInput(results)
	if err != nil {
		call.Problem = err.Error()
		return call
	}
	start := time.Now()
	a, err := c.call(ctx, contract.Name, route, input)
	call.Took = time.Since(start)
	if err != nil {
		call.Problem = err.Error()
		return call
	}
	call.Outcome, call.Problem = judge(contract, ex, route, a)
	return call
}

// judge says what an answer in its route's envelope was, and what is wrong
// with it: the error code the example expects (on the task API in its own
// names), or a result that fits the outputSchema; UPSTREAM_ERROR passes for
// an example that needs the internet.
func judge(contract *schema.Contract, ex schema.Example, route string, a answer) (outcome, problem string) {
	upstream := codeOn(route, toolerr.UpstreamError)
	switch {
	case a.code != "" && ex.Internet && a.code == upstream:
		return a.code + " (no internet)", ""
	case a.code != "" && a.code == codeOn(route, ex.Error):
		return a.code, ""
	case a.code != "":
		return a.code, fmt.Sprintf("answered %s (%s)", a.code, a.message)
	case ex.Error != "":
		return "ok", fmt.Sprintf("succeeded; the example expects %s", codeOn(route, ex.Error))
	}
	if err := contract.ValidateOutput(a.result); err != nil {
		return "ok", err.Error()
	}
	return "ok", ""
}

// portable is the first example that runs on any repository: not one
// made for an empty repository or for the tests' git history, which the
// server under test need not have.
func portable(examples []schema.Example) schema.Example {
	for _, ex := range examples {
		if !ex.EmptyRepository && !ex.HistoryRepository {
			return ex
		}
	}
	return examples[0]
}

// codeOn is how a route names an error code: the task API has names of its
// own (VALIDATION_ERROR for INVALID_INPUT, ...); "" stays "".
func codeOn(route string, code toolerr.Code) string {
	if code == "" || route != RouteTaskAPI {
		return string(code)
	}
	return toolerr.Lookup(code).TaskAPICode
}
