// Package mcpserver serves the tools over the Model Context Protocol with the
// official Go SDK: a stateless Streamable HTTP handler that answers with
// plain JSON (no SSE, as API Gateway buffers responses). Every served tool is
// registered from its contract; tools/call goes through a toolkit.Invoker, so
// the same pipeline validates and runs the call as on the HTTP routes.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/envelope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// Config describes the server.
type Config struct {
	Name    string // server name reported at initialize
	Version string
	// Tools are the contracts of the served tools; tools/list keeps this
	// order, so pass them sorted for a deterministic listing.
	Tools   []*schema.Contract
	Invoker toolkit.Invoker
	Log     *slog.Logger
}

// Instructions tell agents how to use the server.
const Instructions = "Toolshed serves tools to agents. Each tool validates its arguments against " +
	"the inputSchema shown in tools/list; failures come back as isError results whose text is " +
	`{"error":"...","code":"CODE"}. RATE_LIMITED results carry retryAfter seconds.`

// NewServer returns the MCP server with every tool registered.
func NewServer(cfg Config) *mcp.Server {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Title: "Toolshed", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: Instructions, Logger: log})
	for _, c := range cfg.Tools {
		srv.AddTool(toolFor(c), handlerFor(c.Name, cfg.Invoker))
	}
	srv.AddReceivingMiddleware(unknownTool(cfg.Invoker))
	return srv
}

// Handler returns the stateless JSON Streamable HTTP handler for srv. The
// SDK answers GET and DELETE with 405 and Allow: POST. Loopback Host checks
// are left to httpapi's guard so that deployed and local behave alike.
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
}

func toolFor(c *schema.Contract) *mcp.Tool {
	a := c.Annotations
	return &mcp.Tool{
		Name:         c.Name,
		Title:        c.Title,
		Description:  c.Description,
		InputSchema:  c.InputSchema,
		OutputSchema: c.OutputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           c.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: &a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   &a.OpenWorldHint,
		},
	}
}

func handlerFor(name string, inv toolkit.Invoker) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := caller.From(ctx)
		out := inv.Invoke(ctx, toolkit.Request{
			Tool: name, Args: req.Params.Arguments, Tenant: id.Tenant, RequestID: id.RequestID,
		})
		return Result(out), nil
	}
}

// Result maps an outcome to a tools/call result: success carries the result
// as structuredContent and as one text block of JSON; failures (including
// invalid arguments, per the MCP spec) are isError results.
func Result(out toolkit.Outcome) *mcp.CallToolResult {
	if out.Error == nil {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(out.Result)}},
			StructuredContent: out.Result,
		}
	}
	text, err := json.Marshal(envelope.ToToolError(out))
	if err != nil {
		text = []byte(`{"error":"internal error","code":"INTERNAL_ERROR"}`)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// unknownTool answers tools/call for a tool that is not served with a
// JSON-RPC error carrying TOOL_NOT_FOUND in its data. The number is the
// MCP spec's -32602 for unknown tools (contracts/errors.json explains why
// not seed 000's -32601).
func unknownTool(inv toolkit.Invoker) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || p == nil {
				return next(ctx, method, req)
			}
			if _, served := inv.Has(p.Name); !served {
				info := toolerr.Lookup(toolerr.ToolNotFound)
				data, _ := json.Marshal(map[string]any{"code": toolerr.ToolNotFound, "tool": p.Name})
				return nil, &jsonrpc.Error{
					Code:    int64(info.JSONRPCCode),
					Message: fmt.Sprintf("tool %q not found", p.Name),
					Data:    data,
				}
			}
			return next(ctx, method, req)
		}
	}
}
