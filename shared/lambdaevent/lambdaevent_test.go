package lambdaevent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/lambdaevent"
	"github.com/toolshed/toolshed/shared/lambdainvoke"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

func fixture(t testing.TB, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toolFunction builds the handler a deployed hello function runs.
func toolFunction(t *testing.T) (lambdaevent.Handler, *schema.Set) {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(httpapi.Config{Invoker: p, Auth: auth.Gateway{}, RequestID: lambdaevent.RequestID})
	return lambdaevent.ToolHandler(p, h), set
}

func TestToolFunctionAPIGatewayEvents(t *testing.T) {
	handle, _ := toolFunction(t)
	tests := []struct {
		fixture string
		status  int
		body    string
	}{
		{"v1-hello.json", 200, `{"tool":"hello","ok":true,"result":{"greeting":"Hello, World!"}}`},
		{"legacy-hello-base64.json", 200, `{"success":true,"data":{"greeting":"Hello, World!"},"message":"Greeting created"}`},
		{"v1-hello-invalid.json", 400, `{"tool":"hello","ok":false,"error":"name: must not be empty or only whitespace","code":"INVALID_INPUT","details":{"errors":[{"field":"name","message":"must not be empty or only whitespace"}]},"requestId":"FkLmnoPqrStuVwA="}`},
		{"v1-hello-unknown-key.json", 401, `{"tool":"hello","ok":false,"error":"unknown API key","code":"UNAUTHORIZED","requestId":"EkLmnoPqrStuVwZ="}`},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			out, err := handle(context.Background(), fixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			resp, ok := out.(events.APIGatewayV2HTTPResponse)
			if !ok {
				t.Fatalf("got %T, want an API Gateway response", out)
			}
			if resp.StatusCode != tt.status || strings.TrimSpace(resp.Body) != tt.body {
				t.Errorf("got %d %s\nwant %d %s", resp.StatusCode, resp.Body, tt.status, tt.body)
			}
			if resp.Headers["Content-Type"] != "application/json" {
				t.Errorf("Content-Type = %q", resp.Headers["Content-Type"])
			}
		})
	}
}

func TestToolFunctionDirectInvocation(t *testing.T) {
	handle, _ := toolFunction(t)
	tests := []struct {
		event string
		want  string
	}{
		{`{"tool":"hello","args":{"name":"World"},"tenant":"acme","requestId":"r1"}`,
			`{"tool":"hello","ok":true,"result":{"greeting":"Hello, World!"},"message":"Greeting created","requestId":"r1"}`},
		{`{"tool":"hello","args":{"name":"World"},"tenant":"","requestId":"r2"}`,
			`{"tool":"hello","ok":false,"error":{"code":"ACCESS_DENIED","message":"the request carries no valid tenant"},"requestId":"r2"}`},
		{`{"tool":"hello","args":{"name":7},"tenant":"acme","requestId":"r3"}`,
			`{"tool":"hello","ok":false,"error":{"code":"INVALID_INPUT","message":"name: must be of type string, but got number","details":{"errors":[{"field":"name","message":"must be of type string, but got number"}]}},"requestId":"r3"}`},
		// Keys are read exactly (as the gateway writes them): "Tenant" is
		// not the tenant.
		{`{"tool":"hello","args":{"name":"World"},"Tenant":"acme","requestId":"r4"}`,
			`{"tool":"hello","ok":false,"error":{"code":"ACCESS_DENIED","message":"the request carries no valid tenant"},"requestId":"r4"}`},
	}
	for _, tt := range tests {
		out, err := handle(context.Background(), json.RawMessage(tt.event))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(out)
		if string(got) != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.event, got, tt.want)
		}
	}
	for _, event := range []string{`{"something":"else"}`, `{"Tool":"hello","args":{"name":"World"},"tenant":"acme"}`} {
		if _, err := handle(context.Background(), json.RawMessage(event)); err == nil {
			t.Errorf("an unrecognised event was accepted: %s", event)
		}
	}
}

// fakeLambda stands in for the Lambda service: it hands the payload to a
// real tool function handler, as Lambda would.
type fakeLambda struct {
	functions map[string]lambdaevent.Handler
}

func (f fakeLambda) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	out, err := f.functions[*in.FunctionName](ctx, in.Payload)
	if err != nil {
		msg := "Unhandled"
		return &lambda.InvokeOutput{FunctionError: &msg, Payload: []byte(`{"errorMessage":"` + err.Error() + `"}`)}, nil
	}
	payload, _ := json.Marshal(out)
	return &lambda.InvokeOutput{StatusCode: 200, Payload: payload}, nil
}

// gatewayFunction builds the handler the deployed gateway runs, forwarding
// to a hello tool function through fakeLambda.
func gatewayFunction(t *testing.T) lambdaevent.Handler {
	t.Helper()
	tool, set := toolFunction(t)
	inv, err := lambdainvoke.New(fakeLambda{map[string]lambdaevent.Handler{"toolshed-hello": tool}}, set,
		map[string]string{"hello": "toolshed-hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(mcpserver.Config{Name: "toolshed", Version: "test", Tools: inv})
	return lambdaevent.HTTPHandler(httpapi.New(httpapi.Config{Invoker: inv, Auth: auth.Gateway{}, MCP: srv, RequestID: lambdaevent.RequestID}))
}

func TestGatewayInvokesToolFunctions(t *testing.T) {
	gw := gatewayFunction(t)

	out, err := gw(context.Background(), fixture(t, "mcp-call-hello.json"))
	if err != nil {
		t.Fatal(err)
	}
	resp := out.(events.APIGatewayV2HTTPResponse)
	var rpc struct {
		Result struct {
			Content           []struct{ Text string }
			StructuredContent map[string]any
			IsError           bool
		}
		Error any
	}
	if err := json.Unmarshal([]byte(resp.Body), &rpc); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, resp.Body, err)
	}
	if resp.StatusCode != 200 || rpc.Result.IsError || rpc.Result.StructuredContent["greeting"] != "Hello, World!" {
		t.Errorf("tools/call via gateway: %d %s", resp.StatusCode, resp.Body)
	}

	out, _ = gw(context.Background(), fixture(t, "mcp-get.json"))
	resp = out.(events.APIGatewayV2HTTPResponse)
	if resp.StatusCode != 405 || resp.Headers["Allow"] != "POST" {
		t.Errorf("GET /mcp: %d %v", resp.StatusCode, resp.Headers)
	}
}

// bigInvoker answers every call with a result of n bytes of '<', which the
// Lambda runtime escapes to six bytes each.
type bigInvoker struct{ n int }

func (b bigInvoker) Invoke(_ context.Context, req toolkit.Request) toolkit.Outcome {
	res, _ := json.Marshal(map[string]string{"content": strings.Repeat("<", b.n)})
	return toolkit.Outcome{Tool: req.Tool, OK: true, Result: res, RequestID: req.RequestID}
}
func (bigInvoker) Has(name string) (string, bool) { return name, true }
func (bigInvoker) Names() []string                { return []string{"big"} }
func (bigInvoker) Served() []*schema.Contract     { return nil }

// TestResultsThatDoNotFitALambdaResponse: a direct invocation whose outcome
// would pass Lambda's 6 MB answers SIZE_LIMIT_EXCEEDED instead of failing
// in the runtime; so does an API Gateway request whose response would.
func TestResultsThatDoNotFitALambdaResponse(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		wantErr bool
	}{
		{"fits", 100 << 10, false},
		{"escaping pushes it over", 1100 << 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := bigInvoker{tt.n}
			h := lambdaevent.ToolHandler(inv, httpapi.New(httpapi.Config{Invoker: inv, Auth: auth.Gateway{},
				RequestID: lambdaevent.RequestID, MaxResponse: lambdaevent.MaxHTTPBody}))
			out, err := h(context.Background(), json.RawMessage(`{"tool":"big","args":{},"tenant":"acme","requestId":"r1"}`))
			if err != nil {
				t.Fatal(err)
			}
			raw := out.(json.RawMessage)
			var o toolkit.Outcome
			if err := json.Unmarshal(raw, &o); err != nil {
				t.Fatal(err)
			}
			if len(raw) > lambdaevent.MaxResponse {
				t.Errorf("answer of %d bytes passes the Lambda limit", len(raw))
			}
			if got := !o.OK && o.Error.Code == toolerr.SizeLimitExceeded; got != tt.wantErr {
				t.Errorf("outcome %v %+v, want size error %v", o.OK, o.Error, tt.wantErr)
			}

			resp, err := h(context.Background(), withBody(t, "v1-hello.json", "/v1/tools/big", `{"args":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			r := resp.(events.APIGatewayV2HTTPResponse)
			if wantStatus := map[bool]int{false: 200, true: 413}[tt.wantErr]; r.StatusCode != wantStatus {
				t.Errorf("API Gateway: %d, want %d", r.StatusCode, wantStatus)
			}
			if enc, _ := json.Marshal(r); len(enc) > lambdaevent.MaxResponse {
				t.Errorf("API Gateway response of %d bytes passes the Lambda limit", len(enc))
			}
		})
	}
}

// withBody returns a fixture event sent to path with body.
func withBody(t *testing.T, name, path, body string) json.RawMessage {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(fixture(t, name), &ev); err != nil {
		t.Fatal(err)
	}
	rc := ev["requestContext"].(map[string]any)
	ev["rawPath"], ev["body"], ev["isBase64Encoded"] = path, body, false
	rc["http"].(map[string]any)["path"] = path
	b, _ := json.Marshal(ev)
	return b
}
