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
// Beyond tools it serves resources (the repository's files and the memory
// files), prompts and completions (features.go), each by calling tools
// through the same catalog.
//
// A stateless deployment cannot deliver notifications outside the response
// to the request they belong to, so the server advertises none: no
// listChanged, no resource subscriptions, no logging. A 2026-07-28
// client that opens subscriptions/listen anyway is acknowledged with an
// empty filter and the listen completes at once (see New).
package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
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
	"github.com/toolshed/toolshed/shared/servercard"
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
	version  string          // the server's version
	versions []string        // protocol versions served, newest first
	tools    toolkit.Catalog // for the credential's refusals (strict.go)
}

// Instructions tell agents how to use the server.
const Instructions = "Toolshed serves tools to agents. Each tool validates its arguments against " +
	"the inputSchema shown in tools/list; failures come back as isError results whose text is " +
	`{"error":"...","code":"CODE"}. RATE_LIMITED results carry retryAfter seconds. ` +
	"Repository files are also resources (" + RepoTemplate + ", read as read_file reads them), " +
	"and so are the memory files (memory://decisions.jsonl, ...)."

// Title is the server's display name.
const Title = "Toolshed"

// icons are the server's icon, also shown beside its prompts and resources:
// a shed, as an SVG data URI (no request leaves the client to show it).
var icons = []mcp.Icon{{
	Source: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">`+
			`<path d="M4 14 16 4l12 10v14H4z" fill="#8a5a2b"/><path d="M11 28V18h10v10z" fill="#f2d29b"/>`+
			`<path d="M2 15 16 3l14 12" fill="none" stroke="#4a2f14" stroke-width="2"/></svg>`)),
	MIMEType: "image/svg+xml",
	Sizes:    []string{"any"},
}}

// Card returns the server card of this server when its MCP endpoint is
// mcpURL (httpapi.Config.ServerCard).
func (s *Server) Card(mcpURL string) any {
	var cardIcons []servercard.Icon
	for _, i := range icons {
		cardIcons = append(cardIcons, servercard.Icon{Source: i.Source, MIMEType: i.MIMEType, Sizes: i.Sizes})
	}
	return servercard.New(s.version, mcpURL, s.versions, cardIcons)
}

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
	f := &features{tools: cfg.Tools, log: log}
	srv := mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Title: Title, Version: cfg.Version, Icons: icons},
		&mcp.ServerOptions{
			Instructions: Instructions,
			Logger:       sdkLog,
			Capabilities: &mcp.ServerCapabilities{
				Tools:       &mcp.ToolCapabilities{ListChanged: false},
				Resources:   &mcp.ResourceCapabilities{ListChanged: false, Subscribe: false},
				Prompts:     &mcp.PromptCapabilities{ListChanged: false},
				Completions: &mcp.CompletionCapabilities{},
			},
			CompletionHandler: f.complete,
			SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
				*c = cacheHint(methodOf(req))
			},
		})
	for _, c := range cfg.Tools.Served() {
		srv.AddTool(toolFor(c), handlerFor(c.Name, cfg.Tools))
	}
	f.addResources(srv)
	f.addPrompts(srv)
	srv.AddReceivingMiddleware(checkCall(cfg.Tools), f.lists, validLogLevel)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{
			Stateless:                  true,
			JSONResponse:               true,
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        -1,
			Logger:                     sdkLog,
		})
	return &Server{sdk: sdk, version: cfg.Version, versions: mcp.SupportedProtocolVersions(), tools: cfg.Tools}
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
		return Result(inv.Invoke(ctx, request(ctx, name, req.Params.Arguments))), nil
	}
}

// request is the call of tool with args on behalf of the caller in ctx:
// its tenant, request id and repository limit. Every call this server
// makes goes through it (tools/call, and the tools resources, prompts and
// completions compose), so none can read beyond the caller's limits.
func request(ctx context.Context, tool string, args json.RawMessage) toolkit.Request {
	id := caller.From(ctx)
	return toolkit.Request{Tool: tool, Args: args, Tenant: id.Tenant, RequestID: id.RequestID, Repos: id.Repos}
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

// methodOf names the method of a request the SDK has typed.
func methodOf(req mcp.Request) string {
	switch req.(type) {
	case *mcp.ListToolsRequest:
		return "tools/list"
	case *mcp.ListPromptsRequest:
		return "prompts/list"
	case *mcp.ListResourceTemplatesRequest:
		return "resources/templates/list"
	case *mcp.ListResourcesRequest:
		return "resources/list"
	case *mcp.ReadResourceRequest:
		return "resources/read"
	}
	return ""
}

// lists shows each request what it may use (caller.CheckTool: the client's
// selection, its token's scopes): tools/list leaves out the tools it may
// not see, prompts/list the prompts needing such a tool, and
// resources/templates/list the repository template unless it may call
// read_file. resources/list is answered here (features.listResources):
// the SDK lists only resources registered in advance.
func (f *features) lists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/list" {
			var cursor string
			if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
				cursor = p.Cursor
			}
			return f.listResources(ctx, cursor)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch list := res.(type) {
		case *mcp.ListToolsResult:
			list.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return caller.CheckTool(ctx, t.Name) != nil })
		case *mcp.ListPromptsResult:
			list.Prompts = slices.DeleteFunc(slices.Clone(list.Prompts), func(p *mcp.Prompt) bool { return !f.visible(ctx, promptNeeds(p.Name)...) })
		case *mcp.ListResourceTemplatesResult:
			if !f.visible(ctx, readFileTool) {
				list.ResourceTemplates = []*mcp.ResourceTemplate{}
			}
		}
		return res, nil
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
