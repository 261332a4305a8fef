// Package mcpserver serves the tools over the Model Context Protocol with the
// official Go SDK: a stateless Streamable HTTP handler that answers with
// plain JSON (no SSE, as API Gateway buffers responses). Every served tool is
// registered from its contract; tools/call goes through a toolkit.Invoker, so
// the same pipeline validates and runs the call as on the HTTP routes.
//
// In front of the SDK sits a strict pre-validation handler (strict.go): it
// reads the body once, refuses what JSON-RPC 2.0 and the Streamable HTTP
// transport refuse, and answers every failure with a JSON-RPC error object
// as application/json (errors.go). Only well-formed single messages reach
// the SDK.
//
// A stateless deployment cannot deliver notifications outside the response
// to the request they belong to, so the server advertises none: no
// tools.listChanged, no resource subscriptions, no logging. A 2026-07-28
// client that opens subscriptions/listen anyway is acknowledged with an
// empty filter and the listen completes at once (see NewServer).
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

// DefaultMaxBody bounds the body of a POST to /mcp when Config.MaxBody is
// zero (the SDK's default, and httpapi's for the tool routes).
const DefaultMaxBody = 4 << 20

// Config describes the server.
type Config struct {
	Name    string // server name reported at initialize
	Version string
	// Tools are the contracts of the served tools; tools/list keeps this
	// order, so pass them sorted for a deterministic listing.
	Tools   []*schema.Contract
	Invoker toolkit.Invoker
	// Log receives the server's own records. The SDK's records go to it
	// too, lowered to DEBUG (see debugOnly).
	Log *slog.Logger
	// MaxBody bounds a request body in bytes; 0 means DefaultMaxBody.
	// Larger bodies are answered 413 with data.code SIZE_LIMIT_EXCEEDED.
	MaxBody int64
}

// Server is the MCP server with every tool registered, ready to be served
// by Handler.
type Server struct {
	mcp      *mcp.Server
	versions []string // protocol versions served, newest first
	maxBody  int64
	log      *slog.Logger // the SDK's logger, already lowered to DEBUG
	inv      toolkit.Invoker
	maxArgs  map[string]int // tool → the most argument bytes it accepts
}

// Instructions tell agents how to use the server.
const Instructions = "Toolshed serves tools to agents. Each tool validates its arguments against " +
	"the inputSchema shown in tools/list; failures come back as isError results whose text is " +
	`{"error":"...","code":"CODE"}. RATE_LIMITED results carry retryAfter seconds.`

// NewServer returns the MCP server with every tool registered.
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
func NewServer(cfg Config) *Server {
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
	for _, c := range cfg.Tools {
		srv.AddTool(toolFor(c), handlerFor(c.Name, cfg.Invoker))
	}
	srv.AddReceivingMiddleware(checkCall(cfg.Invoker), validLogLevel)
	maxBody := cfg.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	maxArgs := map[string]int{}
	for _, c := range cfg.Tools {
		maxArgs[c.Name] = c.MaxInputBytes
	}
	return &Server{mcp: srv, versions: mcp.SupportedProtocolVersions(), maxBody: maxBody, log: sdkLog,
		inv: cfg.Invoker, maxArgs: maxArgs}
}

// Handler returns the /mcp handler for srv: the strict pre-validation of
// strict.go in front of the SDK's stateless JSON Streamable HTTP handler.
// GET and DELETE answer 405 with Allow: POST. Loopback Host checks are left
// to httpapi's guard so that deployed and local behave alike.
func Handler(srv *Server) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.mcp },
		&mcp.StreamableHTTPOptions{
			Stateless:                  true,
			JSONResponse:               true,
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        srv.maxBody,
			Logger:                     srv.log,
		})
	return &strictHandler{next: sdk, maxBody: srv.maxBody, versions: srv.versions, inv: srv.inv, maxArgs: srv.maxArgs}
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

// checkCall refuses tools/call params that name no tool or whose arguments
// are not an object (-32602, invalid params: the SDK passes both on), and
// answers a call of a tool that is not served with a JSON-RPC error
// carrying TOOL_NOT_FOUND in its data. The number is the MCP spec's -32602
// for unknown tools (contracts/errors.json explains why not seed 000's
// -32601). Arguments that are an object but do not fit the tool's
// inputSchema are the tool's to refuse, as an isError result.
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
			if _, served := inv.Has(p.Name); !served {
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
