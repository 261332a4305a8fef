// Package lambdaevent answers the events the AWS Lambda runtime hands a
// function (the start of a function is shared/lambdaentry's). A tool
// function accepts two event shapes and runs both through the same
// pipeline: an API Gateway HTTP API v2 proxy event (adapted to net/http) and
// a direct invocation {"tool","args","tenant","requestId"} from the gateway.
package lambdaevent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// MaxResponse is the largest answer a synchronously invoked Lambda
// function may give (6 MB), and MaxHTTPBody the largest response body that
// fits in an API Gateway proxy response within it, headers included.
const (
	MaxResponse = 6 << 20
	MaxHTTPBody = MaxResponse - 16<<10
)

// Handler is a Lambda handler over raw JSON events.
type Handler func(ctx context.Context, event json.RawMessage) (any, error)

// ToolHandler serves one tool function: API Gateway events go to httpHandler
// (the httpapi routes), direct invocations go straight to inv.
func ToolHandler(inv toolkit.Invoker, httpHandler http.Handler) Handler {
	proxy := HTTPHandler(httpHandler)
	return func(ctx context.Context, event json.RawMessage) (any, error) {
		kind, err := kindOf(event)
		if err != nil {
			return nil, err
		}
		if kind == apiGateway {
			return proxy(ctx, event)
		}
		var req toolkit.Request
		if err := schema.Unmarshal(event, &req); err != nil { // keys read as kindOf read them
			return nil, fmt.Errorf("decode direct invocation: %w", err)
		}
		return fitted(inv.Invoke(ctx, req))
	}
}

// fitted encodes an outcome for the Lambda runtime; one that would not fit
// in a Lambda response becomes SIZE_LIMIT_EXCEEDED.
func fitted(out toolkit.Outcome) (json.RawMessage, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode outcome of %s: %w", out.Tool, err)
	}
	if len(b) <= MaxResponse {
		return b, nil
	}
	e := toolerr.New(toolerr.SizeLimitExceeded, "the result would be %d bytes; a Lambda function answers at most %d: ask for less", len(b), MaxResponse).
		With("bytes", len(b)).With("limitBytes", MaxResponse)
	return json.Marshal(toolkit.Fail(out.Tool, out.RequestID, e))
}

// HTTPHandler serves API Gateway HTTP API v2 events with h.
func HTTPHandler(h http.Handler) Handler {
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, event json.RawMessage) (any, error) {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(event, &ev); err != nil {
			return nil, fmt.Errorf("decode API Gateway event: %w", err)
		}
		return adapter.ProxyWithContext(ctx, ev)
	}
}

// RequestID is the API Gateway request id of an adapted request, or "".
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
		return rc.RequestID
	}
	return ""
}

type eventKind int

const (
	apiGateway eventKind = iota
	direct
)

// kindOf tells an API Gateway v2 event (it has requestContext) from a
// direct invocation (it has tool). Keys are matched exactly, as the
// direct invocation is then decoded: "Tool" is not "tool".
func kindOf(event json.RawMessage) (eventKind, error) {
	var probe struct {
		RequestContext json.RawMessage `json:"requestContext"`
		Tool           string          `json:"tool"`
	}
	if err := schema.Unmarshal(event, &probe); err != nil {
		return 0, fmt.Errorf("event is not a JSON object: %w", err)
	}
	switch {
	case len(probe.RequestContext) > 0 && !bytes.Equal(probe.RequestContext, []byte("null")):
		return apiGateway, nil
	case probe.Tool != "":
		return direct, nil
	default:
		return 0, fmt.Errorf("unrecognised event: neither an API Gateway v2 event nor a direct invocation")
	}
}
