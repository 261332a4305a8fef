package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// The tools the resources, prompts and completions compose. Each is called
// through the catalog's Invoker, never around it (see features).
const (
	readFileTool    = "read_file"
	listFilesTool   = "list_files"
	listReposTool   = "list_repos"
	findSymbolsTool = "find_symbols"
	readMemoryTool  = "read_memory"
	writeMemoryTool = "write_memory_entry"
	listTasksTool   = "list_tasks"
)

// composedTools are every tool the MCP features call.
var composedTools = []string{readFileTool, listFilesTool, listReposTool, findSymbolsTool, readMemoryTool, writeMemoryTool, listTasksTool}

// features serves MCP's other server features — resources (resources.go),
// prompts (prompts.go) and completions (completion.go) — by calling tools
// through the catalog, exactly as a tools/call of them would run: the same
// pipeline locally, the same Lambda invocation of the tool's function when
// deployed (the gateway holds no repository view and reads no store), the
// same tenant, request id, tool selection, scopes, rate limits, path
// policy, size limits, deadline and log line. So a resource is readable
// exactly when read_file may read its file for this request, and a
// refusal is read_file's refusal.
type features struct {
	tools toolkit.Catalog
	log   *slog.Logger
}

// failure is a tool call that failed: its outcome, whose error is in the
// vocabulary.
type failure struct{ out toolkit.Outcome }

func (e *failure) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.out.Tool, e.out.Error.Code, e.out.Error.Message)
}

// call runs tool with args for the request in ctx and decodes its result
// into out. A tool's refusal is a *failure.
func (f *features) call(ctx context.Context, tool string, args map[string]any, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encode %s arguments: %w", tool, err)
	}
	o := f.tools.Invoke(ctx, request(ctx, tool, raw))
	if o.Error != nil {
		return &failure{o}
	}
	if err := json.Unmarshal(o.Result, out); err != nil {
		return fmt.Errorf("decode %s result: %w", tool, err)
	}
	return nil
}

// refuse returns a failure of tool for the request in ctx with err (in
// the vocabulary), as if the tool had answered it.
func refuse(ctx context.Context, tool string, err *toolerr.Error) error {
	return &failure{toolkit.Fail(tool, caller.From(ctx).RequestID, err)}
}

// visible reports whether the request in ctx may call every one of tools
// (caller.CheckTool: the client's selection, its token's scopes) and each
// is served.
func (f *features) visible(ctx context.Context, tools ...string) bool {
	for _, t := range tools {
		if _, ok := f.tools.Has(t); !ok || caller.CheckTool(ctx, t) != nil {
			return false
		}
	}
	return true
}

// rpcError maps an error of a feature handler onto the JSON-RPC error it
// is answered with, once: a tool's refusal (wrapped or not) keeps its
// message, with the
// vocabulary's code, details and retryAfter in data (and about, the URI or
// prompt it concerns); RESOURCE_NOT_FOUND is the spec's resource-not-found
// error (-32602, SEP-2164), other codes take their jsonrpcCode from
// contracts/errors.json (INVALID_INPUT and TOOL_NOT_FOUND -32602,
// ACCESS_DENIED -32000, PATH_NOT_ALLOWED -32001, SIZE_LIMIT_EXCEEDED
// -32002), and the rest -32603, as does any other error, whose cause is
// logged and never sent.
func (f *features) rpcError(ctx context.Context, err error, about map[string]any) error {
	var fl *failure
	if !errors.As(err, &fl) {
		id := caller.From(ctx)
		f.log.ErrorContext(ctx, "MCP feature failed", "request_id", id.RequestID, "tenant", id.Tenant, "error", err)
		fl = &failure{toolkit.Fail("", id.RequestID, err)}
	}
	e := fl.out.Error
	data := map[string]any{"code": e.Code}
	for k, v := range e.Details {
		data[k] = v
	}
	for k, v := range about {
		data[k] = v
	}
	if e.RetryAfter > 0 {
		data["retryAfter"] = e.RetryAfter
	}
	if fl.out.RequestID != "" {
		data["requestId"] = fl.out.RequestID
	}
	raw, mErr := json.Marshal(data)
	if mErr != nil {
		raw = nil
	}
	code := int64(toolerr.Lookup(e.Code).JSONRPCCode)
	switch {
	case e.Code == toolerr.ResourceNotFound:
		code = mcp.CodeResourceNotFound
	case code == 0:
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: e.Message, Data: raw}
}

// invalidParams is a -32602 error with message.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
