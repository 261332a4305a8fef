package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/envelope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// client calls one server on every route.
type client struct {
	base    string
	timeout time.Duration
	http    *http.Client
	session *mcp.ClientSession
}

// answer is a tool's answer taken out of its route's envelope: a result,
// or an error code (in the route's names) with its message.
type answer struct {
	result  json.RawMessage
	code    string
	message string
}

// call calls a tool on a route and takes its answer out of the envelope;
// an error means the envelope is not what the route promises.
func (c *client) call(ctx context.Context, tool, route string, args json.RawMessage) (answer, error) {
	switch route {
	case RouteMCP:
		return c.callMCP(ctx, tool, args)
	case RouteV1:
		body, err := json.Marshal(map[string]json.RawMessage{"args": args})
		if err != nil {
			return answer{}, err
		}
		return c.callV1(ctx, tool, body)
	default:
		return c.callTaskAPI(ctx, tool, args)
	}
}

// callMCP calls a tool with tools/call: a success has the result as
// structuredContent and as its one text block; a failure is an isError
// result whose text is {"error","code",...}.
func (c *client) callMCP(ctx context.Context, tool string, args json.RawMessage) (answer, error) {
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return answer{}, fmt.Errorf("tools/call: %w", err)
	}
	if len(res.Content) != 1 {
		return answer{}, fmt.Errorf("tools/call: %d content blocks, want 1", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return answer{}, fmt.Errorf("tools/call: a %T content block, want text", res.Content[0])
	}
	if res.IsError {
		var e envelope.ToolError
		if err := strictDecode([]byte(text.Text), &e); err != nil || e.Code == "" || e.Error == "" {
			return answer{}, fmt.Errorf("tools/call: an isError text that is not {\"error\",\"code\",...}: %s", clip(text.Text))
		}
		return answer{code: string(e.Code), message: e.Error}, nil
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		return answer{}, fmt.Errorf("tools/call: a success without structuredContent")
	}
	if !SameJSON(structured, []byte(text.Text)) {
		return answer{}, fmt.Errorf("tools/call: the text block %s is not the structuredContent %s", clip(text.Text), clip(string(structured)))
	}
	return answer{result: structured}, nil
}

// callV1 calls POST /v1/tools/{name}: {"tool","ok":true,"result"} or
// {"tool","ok":false,"error","code",...}, with the code's HTTP status.
func (c *client) callV1(ctx context.Context, tool string, body []byte) (answer, error) {
	var env envelope.V1
	status, err := c.post(ctx, "/v1/tools/"+tool, body, &env)
	if err != nil {
		return answer{}, err
	}
	switch {
	case env.Tool != tool:
		return answer{}, fmt.Errorf("the envelope names tool %q, want %q", env.Tool, tool)
	case env.OK && (status != http.StatusOK || env.Result == nil):
		return answer{}, fmt.Errorf("ok with status %d and result %v", status, env.Result)
	case !env.OK && (env.Code == "" || env.Error == "" || status != toolerr.Lookup(env.Code).HTTPStatus):
		return answer{}, fmt.Errorf("a failure with status %d, code %q, error %q", status, env.Code, env.Error)
	case !env.OK:
		return answer{code: string(env.Code), message: env.Error}, nil
	}
	result, err := json.Marshal(env.Result)
	return answer{result: result}, err
}

// callTaskAPI calls POST /mcp/tool/{name} with the arguments as the body:
// {"success":true,"data","message"} or {"success":false,"error","code"}.
func (c *client) callTaskAPI(ctx context.Context, tool string, args json.RawMessage) (answer, error) {
	var env envelope.TaskAPI
	status, err := c.post(ctx, "/mcp/tool/"+tool, args, &env)
	if err != nil {
		return answer{}, err
	}
	switch {
	case env.Success && (status != http.StatusOK || env.Data == nil):
		return answer{}, fmt.Errorf("success with status %d and data %v", status, env.Data)
	case !env.Success && (env.Code == "" || env.Error == "" || status < 400):
		return answer{}, fmt.Errorf("a failure with status %d, code %q, error %q", status, env.Code, env.Error)
	case !env.Success:
		return answer{code: env.Code, message: env.Error}, nil
	}
	result, err := json.Marshal(env.Data)
	return answer{result: result}, err
}

// setup runs one of an example's setup calls on /v1 and returns its result.
func (c *client) setup(ctx context.Context, call schema.Call) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]json.RawMessage{"args": call.Args})
	if err != nil {
		return nil, err
	}
	a, err := c.callV1(ctx, call.Tool, body)
	if err == nil && a.code != "" {
		err = fmt.Errorf("%s: %s", a.code, a.message)
	}
	return a.result, err
}

// post sends body to path and decodes the JSON answer into env, strictly
// (a field the envelope does not have is an error). Every answer carries
// an X-Request-Id.
func (c *client) post(ctx context.Context, path string, body []byte, env any) (status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return 0, err
	case resp.Header.Get("Content-Type") != "application/json":
		return 0, fmt.Errorf("%d with Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), clip(string(raw)))
	case resp.Header.Get("X-Request-Id") == "":
		return 0, fmt.Errorf("%d without X-Request-Id", resp.StatusCode)
	}
	if err := strictDecode(raw, env); err != nil {
		return 0, fmt.Errorf("%d, not the route's envelope: %v: %s", resp.StatusCode, err, clip(string(raw)))
	}
	return resp.StatusCode, nil
}

// strictDecode decodes one JSON value into v, refusing fields v lacks and
// anything after the value; numbers stay as written.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// SameJSON reports whether two JSON documents hold the same value.
func SameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
