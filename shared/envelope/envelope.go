// Package envelope renders a toolkit.Outcome in the shapes Toolshed's routes
// promise: the /v1 envelope of POST /v1/tools/{name}, the task-API envelope
// of POST /mcp/tool/{name}, the JSON text of an MCP tools/call result
// with isError: true, and the JSON-RPC error of a refusal on /mcp.
package envelope

import (
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// V1 is the envelope of POST /v1/tools/{name}: {"tool","ok","result"} or
// {"tool","ok":false,"error","code","details","retryAfter","requestId"}.
type V1 struct {
	Tool       string         `json:"tool"`
	OK         bool           `json:"ok"`
	Result     any            `json:"result,omitempty"`
	Error      string         `json:"error,omitempty"`
	Code       toolerr.Code   `json:"code,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
	RetryAfter int            `json:"retryAfter,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
}

// TaskAPI is the task-API envelope of POST /mcp/tool/{name}:
// {"success":true,"data","message"} or {"success":false,"error","code",
// "details"}, with the task API's own code names (toolerr's TaskAPICode,
// e.g. VALIDATION_ERROR for INVALID_INPUT).
type TaskAPI struct {
	Success    bool           `json:"success"`
	Data       any            `json:"data,omitempty"`
	Message    string         `json:"message,omitempty"`
	Error      string         `json:"error,omitempty"`
	Code       string         `json:"code,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
	RetryAfter int            `json:"retryAfter,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
}

// ToolError is the JSON text of an MCP tools/call result with isError:
// true: {"error":"message","code":"CODE",...}.
type ToolError struct {
	Error      string         `json:"error"`
	Code       toolerr.Code   `json:"code"`
	Details    map[string]any `json:"details,omitempty"`
	RetryAfter int            `json:"retryAfter,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
}

// Status is the HTTP status for an outcome.
func Status(o toolkit.Outcome) int {
	if o.Error == nil {
		return 200
	}
	return toolerr.Lookup(o.Error.Code).HTTPStatus
}

// ToV1 renders the /v1 envelope.
func ToV1(o toolkit.Outcome) V1 {
	if o.Error == nil {
		return V1{Tool: o.Tool, OK: true, Result: o.Result}
	}
	return V1{Tool: o.Tool, Error: o.Error.Message, Code: o.Error.Code, Details: o.Error.Details,
		RetryAfter: o.Error.RetryAfter, RequestID: o.RequestID}
}

// ToTaskAPI renders the task-API envelope.
func ToTaskAPI(o toolkit.Outcome) TaskAPI {
	if o.Error == nil {
		return TaskAPI{Success: true, Data: o.Result, Message: o.Message}
	}
	return TaskAPI{Error: o.Error.Message, Code: toolerr.Lookup(o.Error.Code).TaskAPICode,
		Details: o.Error.Details, RetryAfter: o.Error.RetryAfter, RequestID: o.RequestID}
}

// ToToolError renders the text of an MCP isError result.
func ToToolError(o toolkit.Outcome) ToolError {
	return ToolError{Error: o.Error.Message, Code: o.Error.Code, Details: o.Error.Details,
		RetryAfter: o.Error.RetryAfter, RequestID: o.RequestID}
}
