package lambdaentry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
)

// TestBootstraps runs the real bootstraps (functions/tool, gateway and
// authorizer, built for the host) as processes under the Lambda Runtime
// API, on DynamoDB (dynalite), with the environment the CDK app gives them,
// and feeds them the API Gateway events of shared/lambdaevent/testdata and
// direct invocations.
func TestBootstraps(t *testing.T) {
	d := newDeployment(t)
	t.Run("tool function/API Gateway events", func(t *testing.T) { testToolAPIGatewayEvents(t, d) })
	t.Run("tool function/direct invocations", func(t *testing.T) { testToolDirectInvocations(t, d) })
	t.Run("tool function/contract examples", func(t *testing.T) { testContractExamples(t, d) })
	t.Run("authorizer", func(t *testing.T) { testAuthorizer(t, d) })
	t.Run("init errors", func(t *testing.T) { testInitErrors(t, d) })
	t.Run("gateway to tool", func(t *testing.T) { testGatewayToTool(t, d) })
	t.Run("smoke test through an HTTP API", func(t *testing.T) { testSmoke(t, d) })
	t.Run("warm calls leave no work", func(t *testing.T) { testWarmCallsLeaveNoWork(t, d) })
}

func testToolAPIGatewayEvents(t *testing.T, d *deployment) {
	tests := []struct {
		name   string
		tool   string // whose function gets the event
		event  []byte
		status int
		fields string // JSON object the body must contain
	}{
		{"v1 success", "hello", fixture(t, "v1-hello.json"), 200,
			`{"tool":"hello","ok":true,"result":{"greeting":"Hello, World!"}}`},
		{"legacy route, base64 body", "hello", fixture(t, "legacy-hello-base64.json"), 200,
			`{"success":true,"data":{"greeting":"Hello, World!"},"message":"Greeting created"}`},
		{"invalid input", "hello", fixture(t, "v1-hello-invalid.json"), 400,
			`{"tool":"hello","ok":false,"code":"INVALID_INPUT","requestId":"FkLmnoPqrStuVwA="}`},
		{"unknown key", "hello", fixture(t, "v1-hello-unknown-key.json"), 401,
			`{"code":"UNAUTHORIZED","error":"unknown API key","requestId":"EkLmnoPqrStuVwZ="}`},
		{"another tool's route", "hello", withRoute(t, "v1-hello.json", "/v1/tools/add_task", `{"args":{"title":"x"}}`, ""), 404,
			`{"code":"TOOL_NOT_FOUND"}`},
		{"a route no function serves", "hello", withRoute(t, "v1-hello.json", "/v2/nothing", `{}`, ""), 404, `{}`},
		{"tasks on DynamoDB", "add_task", withRoute(t, "v1-hello.json", "/v1/tools/add_task", `{"args":{"title":"From API Gateway"}}`, "apigw-tenant"), 200,
			`{"tool":"add_task","ok":true,"result":{"id":1,"title":"From API Gateway","status":"pending"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := d.Tool(t, tt.tool)
			resp := invoke(t, fn, tt.event)
			status, headers, body := apiResponse(t, resp)
			if status != tt.status {
				t.Errorf("status %d, want %d; body %s", status, tt.status, body)
			}
			if headers["Content-Type"] != "application/json" {
				t.Errorf("Content-Type %q", headers["Content-Type"])
			}
			hasFields(t, body, tt.fields)
		})
	}
}

func testToolDirectInvocations(t *testing.T, d *deployment) {
	tests := []struct {
		name   string
		tool   string
		event  string
		fields string
	}{
		{"success", "hello", string(directEvent("hello", `{"name":"World"}`, "acme", "r1")),
			`{"tool":"hello","ok":true,"result":{"greeting":"Hello, World!"},"message":"Greeting created","requestId":"r1"}`},
		{"invalid input", "hello", string(directEvent("hello", `{"name":7}`, "acme", "r2")),
			`{"tool":"hello","ok":false,"error":{"code":"INVALID_INPUT","details":{"errors":[{"field":"name","message":"must be of type string, but got number"}]}},"requestId":"r2"}`},
		{"no tenant", "hello", string(directEvent("hello", `{"name":"World"}`, "", "r3")),
			`{"ok":false,"error":{"code":"ACCESS_DENIED"},"requestId":"r3"}`},
		{"another function's tool", "hello", string(directEvent("add_task", `{"title":"x"}`, "acme", "r4")),
			`{"ok":false,"error":{"code":"TOOL_NOT_FOUND"},"requestId":"r4"}`},
		{"write, tenant one", "add_task", string(directEvent("add_task", `{"title":"mine"}`, "direct-one", "r5")),
			`{"ok":true,"result":{"id":1,"title":"mine"}}`},
		{"read, tenant one", "list_tasks", string(directEvent("list_tasks", `{}`, "direct-one", "r6")),
			`{"ok":true,"result":{"tasks":[{"id":1,"title":"mine"}]}}`},
		{"read, tenant two sees nothing", "list_tasks", string(directEvent("list_tasks", `{}`, "direct-two", "r7")),
			`{"ok":true,"result":{"tasks":[]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := invoke(t, d.Tool(t, tt.tool), []byte(tt.event))
			if resp.FunctionError != "" {
				t.Fatalf("function error %s: %s", resp.ErrorType, resp.Payload)
			}
			hasFields(t, string(resp.Payload), tt.fields)
		})
	}

	// Events that are neither shape fail the invocation, with the reason.
	for _, event := range []string{`{"something":"else"}`, `[1,2]`, `"hello"`} {
		t.Run("unrecognised "+event, func(t *testing.T) {
			resp := invoke(t, d.Tool(t, "hello"), []byte(event))
			var doc struct{ ErrorMessage, ErrorType string }
			if err := json.Unmarshal(resp.Payload, &doc); err != nil || resp.FunctionError != "Unhandled" || doc.ErrorMessage == "" {
				t.Errorf("got %+v (payload %s), want an Unhandled function error with a message", resp, resp.Payload)
			}
		})
	}
}

// exampleTools are the tools whose contract examples run here, each in its
// own function: those that need nothing but DynamoDB, S3 (moto) and the
// host.
var exampleTools = []string{"hello", "add_task", "list_tasks", "update_task", "complete_task", "delete_task",
	"write_memory_entry", "read_memory", "sys-audit", "web-fetch", "file-io"}

// testContractExamples runs every example of those tools through the
// deployed path: each call (setup calls included) is a direct invocation of
// that tool's own function, each example for a fresh tenant. A tool that
// touches a table it is not granted fails here, as it would in AWS.
func testContractExamples(t *testing.T, d *deployment) {
	for _, tool := range exampleTools {
		c, _ := d.Contracts.Get(tool)
		for i, ex := range c.Examples {
			t.Run(tool+"/"+ex.Name, func(t *testing.T) {
				tenant := fmt.Sprintf("ex-%s-%d", strings.ReplaceAll(tool, "_", "-"), i)
				for j, s := range ex.Setup {
					resp := invoke(t, d.Tool(t, s.Tool), directEvent(s.Tool, string(s.Args), tenant, fmt.Sprint("setup-", j)))
					if !outcomeOK(t, resp) {
						t.Fatalf("setup %d (%s %s) failed: %s", j, s.Tool, s.Args, resp.Payload)
					}
				}
				resp := invoke(t, d.Tool(t, tool), directEvent(tool, string(ex.Input), tenant, "example"))
				switch {
				case ex.Internet && !outcomeOK(t, resp):
					// Offline, an example that needs the internet fails upstream.
					hasFields(t, string(resp.Payload), `{"ok":false,"error":{"code":"UPSTREAM_ERROR"}}`)
				case ex.Error != "":
					hasFields(t, string(resp.Payload), fmt.Sprintf(`{"ok":false,"error":{"code":%q}}`, ex.Error))
				case !outcomeOK(t, resp):
					t.Errorf("input %s failed: %s", ex.Input, resp.Payload)
				case ex.Output != nil:
					hasFields(t, string(resp.Payload), fmt.Sprintf(`{"ok":true,"result":%s}`, ex.Output))
				}
			})
		}
	}
}

func testAuthorizer(t *testing.T, d *deployment) {
	good, revoked := keys(t, d)
	fn := d.Start(t, d.AuthorizerConfig())

	tests := []struct {
		name, header string
		want         string // the whole simple response
	}{
		{"known key", "Bearer " + good, `{"isAuthorized":true,"context":{"tenant":"acme"}}`},
		{"unknown key", "Bearer tsk_unknown", `{"isAuthorized":false}`},
		{"revoked key", "Bearer " + revoked, `{"isAuthorized":false}`},
		{"not a bearer token", "Basic dXNlcjpwYXNz", `{"isAuthorized":false}`},
		{"on /mcp: unknown key", "Bearer tsk_unknown", refusal("unknown API key")},
		{"on /mcp: revoked key", "Bearer " + revoked, refusal(`API key "old" was revoked`)},
		{"on /mcp: not a bearer token", "Basic dXNlcjpwYXNz", refusal("malformed Authorization header: expected Bearer <key>")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			event := strings.ReplaceAll(string(fixture(t, "authorizer-request.json")), "Bearer KEY_PLACEHOLDER", tt.header)
			if strings.HasPrefix(tt.name, "on /mcp") {
				event = strings.ReplaceAll(event, "POST /v1/tools/hello", "POST /mcp")
			}
			resp := invoke(t, fn, []byte(event))
			if resp.FunctionError != "" || string(resp.Payload) != tt.want {
				t.Errorf("got %s %s, want %s", resp.FunctionError, resp.Payload, tt.want)
			}
		})
	}

	t.Run("key table unreachable", func(t *testing.T) {
		cfg := d.AuthorizerConfig()
		cfg.Name = "toolshed-authorizer-no-table"
		cfg.Env["TOOLSHED_APIKEYS_TABLE"] = "no-such-table"
		fn := d.Start(t, cfg)
		event := strings.ReplaceAll(string(fixture(t, "authorizer-request.json")), "KEY_PLACEHOLDER", good)
		resp := invoke(t, fn, []byte(event))
		// A function error: API Gateway answers 500 and never guesses a tenant.
		if resp.FunctionError != "Unhandled" || strings.Contains(string(resp.Payload), "acme") {
			t.Errorf("got %q %s, want an Unhandled function error", resp.FunctionError, resp.Payload)
		}
	})
}

// testInitErrors: a function that cannot start reports why on
// /runtime/init/error, exits non-zero, and its invocation fails with that
// reason.
func testInitErrors(t *testing.T, d *deployment) {
	tool := func(env map[string]string) lambdatest.Config {
		cfg := d.ToolConfig(t, "hello")
		for k, v := range env {
			if v == "" {
				delete(cfg.Env, k)
			} else {
				cfg.Env[k] = v
			}
		}
		return cfg
	}
	tests := []struct {
		name    string
		cfg     lambdatest.Config
		wantMsg string
	}{
		{"tool: TOOLSHED_TOOL unset", tool(map[string]string{"TOOLSHED_TOOL": ""}), "TOOLSHED_TOOL is not set"},
		{"tool: TOOLSHED_TOOL names no tool", tool(map[string]string{"TOOLSHED_TOOL": "nope"}), `no family serves a tool named "nope"`},
		{"tool: bad configuration", tool(map[string]string{"TOOLSHED_STORE": "postgres"}), `TOOLSHED_STORE="postgres"`},
		{"gateway: function map names no tool", d.GatewayConfig(t, map[string]string{"nope": "f"}), `function map names "nope"`},
		{"gateway: function map not JSON", func() lambdatest.Config {
			cfg := d.GatewayConfig(t, nil)
			cfg.Env["TOOLSHED_TOOL_FUNCTIONS"] = "hello=f"
			return cfg
		}(), "TOOLSHED_TOOL_FUNCTIONS"},
		{"tool: a secret setting's parameter cannot be read", func() lambdatest.Config {
			cfg := tool(map[string]string{secrets.EnvVar: secrets.Encode(map[string]string{embedding.Key.Name(): "/toolshed/missing"})})
			_, cfg.Env["AWS_ENDPOINT_URL_SSM"] = d.S3(t) // moto_server serves Parameter Store too
			return cfg
		}(), "read TOOLSHED_EMBED_KEY from parameter /toolshed/missing"},
		{"authorizer: secret settings named, which it does not read", func() lambdatest.Config {
			cfg := d.AuthorizerConfig()
			cfg.Env[secrets.EnvVar] = secrets.Encode(map[string]string{embedding.Key.Name(): "/toolshed/key"})
			return cfg
		}(), secrets.EnvVar + " is set, but this function reads no secret settings"},
		{"authorizer: bad configuration", func() lambdatest.Config {
			cfg := d.AuthorizerConfig()
			cfg.Env["TOOLSHED_RATE_LIMITS"] = "hello=lots"
			return cfg
		}(), "TOOLSHED_RATE_LIMITS"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Name = fmt.Sprintf("%s-init-%d", tt.cfg.Name, i)
			fn := d.Start(t, tt.cfg)
			if _, err := fn.InitDuration(context.Background()); err == nil {
				t.Fatalf("the function started; want an init error\noutput:\n%s", fn.Output())
			}
			resp := invoke(t, fn, []byte(`{}`))
			var doc struct{ ErrorMessage, ErrorType string }
			if err := json.Unmarshal(resp.Payload, &doc); err != nil {
				t.Fatalf("payload %s: %v", resp.Payload, err)
			}
			if resp.FunctionError != "Unhandled" || resp.ErrorType != "Runtime.InitError" || doc.ErrorType != "Runtime.InitError" ||
				!strings.Contains(doc.ErrorMessage, tt.wantMsg) {
				t.Errorf("got %s %s %s, want Runtime.InitError mentioning %q\noutput:\n%s",
					resp.FunctionError, resp.ErrorType, resp.Payload, tt.wantMsg, fn.Output())
			}
			<-fn.Exited()
			if fn.ExitCode() != 1 {
				t.Errorf("exit code %d, want 1", fn.ExitCode())
			}
			if !slices.ContainsFunc(logMessages(t, fn.Output()), func(m string) bool { return strings.Contains(m, tt.wantMsg) }) {
				t.Errorf("the log does not give the reason:\n%s", fn.Output())
			}
		})
	}
}

// refusal is the authorizer's simple response letting a request with a bad
// key through to the function, which answers 401 with why and how to get a
// key; encoded as the runtime client encodes it (no HTML escaping).
func refusal(why string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(events.APIGatewayV2CustomAuthorizerSimpleResponse{
		IsAuthorized: true, Context: map[string]any{auth.ContextError: why + "; " + auth.KeyHelp},
	}); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// testGatewayToTool: the gateway's Lambda client reaches the tool functions
// through the Invoke API (AWS_ENDPOINT_URL_LAMBDA), each of which runs its
// own bootstrap under its own Runtime API.
func testGatewayToTool(t *testing.T, d *deployment) {
	hello, addTask := d.Tool(t, "hello"), d.Tool(t, "add_task")
	broken := d.ToolConfig(t, "read_memory")
	broken.Name = "toolshed-read_memory-broken"
	delete(broken.Env, "TOOLSHED_TOOL")
	d.Start(t, broken)
	gw := d.Start(t, d.GatewayConfig(t, map[string]string{
		"hello":       hello.Name,
		"add_task":    addTask.Name,
		"read_memory": broken.Name,        // deployed, fails at init
		"list_tasks":  "toolshed-missing", // not deployed
	}))

	t.Run("tools/call from the fixture", func(t *testing.T) {
		before := len(hello.Runtime.Invocations())
		resp := invoke(t, gw, fixture(t, "mcp-call-hello.json"))
		rpc := mcpResult(t, resp)
		hasFields(t, string(rpc), `{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"greeting":"Hello, World!"}}}`)
		if code := toolErrorCode(t, rpc); code != "" {
			t.Errorf("tools/call failed with %s", code)
		}

		calls := hello.Runtime.Invocations()[before:]
		if len(calls) != 1 {
			t.Fatalf("the hello function ran %d times, want 1", len(calls))
		}
		hasFields(t, string(calls[0].Event), `{"tool":"hello","args":{"name":"World"},"tenant":"acme","requestId":"GkLmnoPqrStuVwB="}`)
		if calls[0].Response.TraceID != resp.TraceID {
			t.Errorf("trace id: the gateway ran under %q, the tool under %q", resp.TraceID, calls[0].Response.TraceID)
		}
	})
	t.Run("tools/list", func(t *testing.T) {
		resp := invoke(t, gw, withRoute(t, "mcp-call-hello.json", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, ""))
		var rpc struct {
			Result struct{ Tools []struct{ Name string } }
		}
		if err := json.Unmarshal(mcpResult(t, resp), &rpc); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range rpc.Result.Tools {
			names = append(names, tool.Name)
		}
		if want := []string{"add_task", "hello", "list_tasks", "read_memory"}; !slices.Equal(names, want) {
			t.Errorf("tools/list: %v, want %v", names, want)
		}
	})

	tests := []struct {
		name, call string
		wantCode   string // the tool error's code; "" for success
		fields     string // what the JSON-RPC response must contain
	}{
		{"tool on DynamoDB", `{"name":"add_task","arguments":{"title":"Via the gateway"}}`, "",
			`{"result":{"structuredContent":{"id":1,"title":"Via the gateway","status":"pending"}}}`},
		{"tool refuses the input", `{"name":"hello","arguments":{"name":""}}`, "INVALID_INPUT", `{}`},
		{"tool function fails at init", `{"name":"read_memory","arguments":{"file":"decisions.jsonl"}}`, "INTERNAL_ERROR", `{}`},
		{"tool function not deployed", `{"name":"list_tasks","arguments":{}}`, "UPSTREAM_ERROR", `{}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 10+i, tt.call)
			rpc := mcpResult(t, invoke(t, gw, withRoute(t, "mcp-call-hello.json", "", body, "gateway-tenant")))
			hasFields(t, string(rpc), tt.fields)
			if code := toolErrorCode(t, rpc); code != tt.wantCode {
				t.Errorf("tool error code %q, want %q: %s", code, tt.wantCode, rpc)
			}
		})
	}

	// The gateway observes every call it forwards: a tool_forward line per
	// call, with the cause of a failure that happened outside the tool.
	t.Run("forwarded calls are logged", func(t *testing.T) {
		// The process's output reaches the test through a pipe: give the
		// last lines a moment to arrive.
		var forwards []map[string]any
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			forwards = forwards[:0]
			for _, line := range strings.Split(gw.Output(), "\n") {
				var l map[string]any
				if json.Unmarshal([]byte(line), &l) == nil && l["event"] == "tool_forward" {
					forwards = append(forwards, l)
				}
			}
			if len(forwards) >= len(tests)+1 || time.Now().After(deadline) {
				break
			}
		}
		causes := map[string]string{}
		for _, l := range forwards {
			code, _ := l["code"].(string)
			cause, _ := l["cause"].(string)
			causes[code] = cause
		}
		if len(forwards) < len(tests)+1 {
			t.Errorf("%d tool_forward lines for %d forwarded calls:\n%s", len(forwards), len(tests)+1, gw.Output())
		}
		for code, want := range map[string]string{"UPSTREAM_ERROR": "toolshed-missing", "INTERNAL_ERROR": "TOOLSHED_TOOL is not set"} {
			if !strings.Contains(causes[code], want) {
				t.Errorf("%s forward logged cause %q, want it to mention %q", code, causes[code], want)
			}
		}
	})

	t.Run("GET /mcp", func(t *testing.T) {
		status, headers, _ := apiResponse(t, invoke(t, gw, fixture(t, "mcp-get.json")))
		if status != 405 || headers["Allow"] != "POST" {
			t.Errorf("got %d %v, want 405 with Allow: POST", status, headers)
		}
	})
}

// withRoute returns a fixture event sent to path (when not "") with body
// and, when tenant is not "", the tenant the authorizer found.
func withRoute(t testing.TB, name, path, body, tenant string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(fixture(t, name), &ev); err != nil {
		t.Fatal(err)
	}
	rc := ev["requestContext"].(map[string]any)
	if path != "" {
		method := rc["http"].(map[string]any)["method"].(string)
		ev["routeKey"], ev["rawPath"] = method+" "+path, path
		rc["routeKey"] = method + " " + path
		rc["http"].(map[string]any)["path"] = path
	}
	ev["body"], ev["isBase64Encoded"] = body, false
	if tenant != "" {
		rc["authorizer"] = map[string]any{"lambda": map[string]any{"tenant": tenant}}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apiResponse decodes a function's API Gateway v2 response.
func apiResponse(t *testing.T, resp lambdatest.Response) (int, map[string]string, string) {
	t.Helper()
	if resp.FunctionError != "" {
		t.Fatalf("function error %s: %s", resp.ErrorType, resp.Payload)
	}
	var r struct {
		StatusCode      int               `json:"statusCode"`
		Headers         map[string]string `json:"headers"`
		Body            string            `json:"body"`
		IsBase64Encoded bool              `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(resp.Payload, &r); err != nil {
		t.Fatalf("not an API Gateway response: %s: %v", resp.Payload, err)
	}
	if r.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		r.Body = string(b)
	}
	return r.StatusCode, r.Headers, r.Body
}

// mcpResult returns the JSON-RPC message of a 200 /mcp response.
func mcpResult(t *testing.T, resp lambdatest.Response) []byte {
	t.Helper()
	status, _, body := apiResponse(t, resp)
	if status != 200 {
		t.Fatalf("/mcp answered %d: %s", status, body)
	}
	return []byte(body)
}

// toolErrorCode returns the code of a tools/call result with isError set
// (its text block is {"error","code",...}), or "" for a success.
func toolErrorCode(t *testing.T, rpc []byte) string {
	t.Helper()
	var r struct {
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(rpc, &r); err != nil {
		t.Fatalf("not a JSON-RPC response: %s: %v", rpc, err)
	}
	if !r.Result.IsError {
		return ""
	}
	var e struct{ Code string }
	if len(r.Result.Content) == 0 || json.Unmarshal([]byte(r.Result.Content[0].Text), &e) != nil || e.Code == "" {
		t.Fatalf("a tool error without a code: %s", rpc)
	}
	return e.Code
}

// logMessages returns the msg of each JSON log line in a function's output.
func logMessages(t *testing.T, output string) []string {
	t.Helper()
	var msgs []string
	for _, line := range strings.Split(output, "\n") {
		var l struct{ Msg string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg != "" {
			msgs = append(msgs, l.Msg)
		}
	}
	return msgs
}

// outcomeOK reports whether a direct invocation returned a successful outcome.
func outcomeOK(t *testing.T, resp lambdatest.Response) bool {
	t.Helper()
	var o struct{ OK bool }
	return resp.FunctionError == "" && json.Unmarshal(resp.Payload, &o) == nil && o.OK
}

// hasFields fails the test unless the JSON document got contains want:
// every key of a want object, with a value that contains the wanted one;
// an array of as many elements, each containing the wanted one; an equal
// scalar.
func hasFields(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("not JSON: %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %s: %v", want, err)
	}
	if path, ok := tooltest.Contains(g, w, "$"); !ok {
		t.Errorf("%s\ndoes not contain\n%s\n(differs at %s)", got, want, path)
	}
}

// fixture is an API Gateway event the functions answer, kept beside the
// handlers that answer them (shared/lambdaevent).
func fixture(t testing.TB, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "lambdaevent", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
