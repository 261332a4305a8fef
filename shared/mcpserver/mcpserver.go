// Package mcpserver serves the tools over the Model Context Protocol with the
// official Go SDK: a stateless Streamable HTTP server that answers with
// plain JSON (no SSE, as API Gateway buffers responses). Every served tool is
// registered from its contract; tools/call goes through the catalog's
// Invoker, so the same pipeline validates and runs the call as on the other
// routes.
//
// The server answers POST /mcp behind shared/httpapi, which applies the HTTP
// rules of every route (method, Content-Type, body size) and reads the body
// once. What reaches Server.Serve is checked as JSON-RPC only (strict.go):
// one well-formed JSON-RPC 2.0 message with a valid id, a method this server
// answers and params of the right shape. Every refusal is a JSON-RPC error
// object sent as application/json (errors.go); only well-formed single
// messages reach the SDK, whose registered handlers answer them.
//
// A stateless deployment cannot deliver notifications outside the response
// to the request they belong to, so the server advertises none: no
// tools.listChanged, no resource subscriptions, no logging. A 2026-07-28
// client that opens subscriptions/listen anyway is acknowledged with an
// empty filter and the listen completes at once (see New).
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

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
	// Tools are the served tools: tools/list lists them in the order of
	// their Served contracts (sorted by name), tools/call calls them.
	Tools toolkit.Catalog
	// Log receives the server's own records. The SDK's records go to it
	// too, lowered to DEBUG (see debugOnly).
	Log *slog.Logger
}

// Server is the MCP server with every tool registered, ready to Serve.
type Server struct {
	sdk      http.Handler    // the SDK's stateless JSON Streamable HTTP handler
	versions []string        // protocol versions served, newest first
	tools    toolkit.Catalog // for the credential's refusals of a tools/call (strict.go)
}

// Instructions tell agents how to use the server.
const Instructions = "Toolshed serves tools to agents. Each tool validates its arguments against " +
	"the inputSchema shown in tools/list; failures come back as isError results whose text is " +
	`{"error":"...","code":"CODE"}. RATE_LIMITED results carry retryAfter seconds.`

// New returns the MCP server with every tool registered.
//
// Capabilities are set explicitly, because the SDK's defaults promise
// notifications a stateless server cannot deliver: it advertises logging
// and tools.listChanged, and a 2026-07-28 client that sees listChanged opens
// subscriptions/listen, which the SDK then holds open until the client
// gives up (in Lambda, until the function's timeout). With only "tools"
// advertised, the SDK acknowledges a listen with an empty filter and ends
// it at once with the spec's graceful-closure result (2026-07-28
// basic/patterns/subscriptions: the acknowledgement lists the subset the
// server agreed to honour, and a server ending a subscription SHOULD send a
// successful subscriptions/listen response), so the client learns that
// nothing will ever be streamed instead of waiting for it.
//
// The SDK's handler does not bound the body again (httpapi has read it
// within its limit) and leaves loopback Host checks to httpapi's origin
// guard, so that deployed and local behave alike.
func New(cfg Config) *Server {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sdkLog := slog.New(debugOnly{log.Handler()})
	srv := mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Title: "Toolshed", Version: cfg.Version},
		&mcp.ServerOptions{
			Instructions: Instructions,
			Logger:       sdkLog,
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}},
		})
	for _, c := range cfg.Tools.Served() {
		srv.AddTool(toolFor(c), handlerFor(c.Name, cfg.Tools))
	}
	srv.AddReceivingMiddleware(checkCall(cfg.Tools), listVisible, validLogLevel)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{
			Stateless:                  true,
			JSONResponse:               true,
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        -1,
			Logger:                     sdkLog,
		})
	return &Server{sdk: sdk, versions: mcp.SupportedProtocolVersions(), tools: cfg.Tools}
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
			Tool: name, Args: req.Params.Arguments, Tenant: id.Tenant, RequestID: id.RequestID, Repos: id.Repos,
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

// listVisible leaves out of tools/list the tools the request may not see
// (caller.CheckTool: the client's selection, its token's scopes).
func listVisible(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok {
			return res, err
		}
		list.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return caller.CheckTool(ctx, t.Name) != nil })
		return list, nil
	}
}

// checkCall refuses tools/call params that name no tool or whose arguments
// are not an object (-32602, invalid params: the SDK passes both on), and
// answers a call of a tool that is not served with a JSON-RPC error
// carrying TOOL_NOT_FOUND in its data. The number is the MCP spec's -32602
// for unknown tools, not -32601, which MCP clients read as tools/call
// itself being unsupported (contracts/errors.json). Arguments that are an
// object but do not fit the tool's inputSchema are the tool's to refuse, as
// an isError result.
//
// A call may name a tool by an alias (adam-sys-audit for sys-audit), as on
// the other routes: the SDK registers each tool under its canonical name
// only, so the call is passed on under that name. tools/list shows the
// canonical names.
func checkCall(inv toolkit.Invoker) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || p == nil {
				return next(ctx, method, req)
			}
			if p.Name == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `params.name: the name of the tool to call is required`}
			}
			if args := bytes.TrimSpace(p.Arguments); len(args) > 0 && args[0] != '{' && !bytes.Equal(args, []byte("null")) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `params.arguments: must be an object`}
			}
			canonical, served := inv.Has(p.Name)
			if e := toolerr.From(caller.CheckTool(ctx, canonical)); served && e != nil && e.Code == toolerr.ToolNotFound {
				served = false // not among the tools this request may see
			}
			if !served {
				info := toolerr.Lookup(toolerr.ToolNotFound)
				data, err := json.Marshal(map[string]any{"code": toolerr.ToolNotFound, "tool": p.Name})
				if err != nil {
					return nil, fmt.Errorf("encode TOOL_NOT_FOUND data: %w", err)
				}
				return nil, &jsonrpc.Error{
					Code:    int64(info.JSONRPCCode),
					Message: fmt.Sprintf("tool %q not found", p.Name),
					Data:    data,
				}
			}
			p.Name = canonical
			return next(ctx, method, req)
		}
	}
}

// logLevels are the eight syslog severities of the MCP logging utility.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// validLogLevel refuses logging/setLevel with a level outside logLevels
// (the SDK stores any string). The method itself is accepted as a no-op
// for the protocol versions that have it: the server advertises no logging
// capability and sends no log notifications, but a client that sets a
// level anyway is not failed for it. It runs as SDK middleware, after the
// SDK has refused the method for 2026-07-28, which removed it.
func validLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "logging/setLevel" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.SetLoggingLevelParams)
		if ok && p != nil && !slices.Contains(logLevels, p.Level) {
			return nil, &jsonrpc.Error{
				Code:    jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("level %q is not one of %v", p.Level, logLevels),
			}
		}
		return next(ctx, method, req)
	}
}
