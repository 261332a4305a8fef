package envelope

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// JSON-RPC 2.0 error codes the HTTP layer answers with (the same values as
// the MCP SDK's jsonrpc package, which this package does not link).
const (
	RPCInvalidRequest int64 = -32600
	RPCInternalError  int64 = -32603
)

// WriteRPCError writes a JSON-RPC 2.0 error response,
// {"jsonrpc":"2.0","id":…,"error":{"code","message","data"}}, as
// application/json with the given HTTP status. id is the request's id as
// it appeared on the wire, or nil for null: a request to /mcp that failed
// before any JSON-RPC message was read from it (authentication 401, the
// origin guard's 403, an unknown path under /mcp), so that every answer on
// /mcp is a JSON-RPC error object an MCP client can read. The Streamable
// HTTP spec allows exactly this: an HTTP error status whose body is a
// JSON-RPC error without an id.
//
// code is a JSON-RPC error code (RPCInvalidRequest fits most HTTP-level
// refusals); the error vocabulary's code goes in data, e.g.
// {"code": "UNAUTHORIZED"}. data may be nil.
func WriteRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string, data map[string]any) {
	type rpcError struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data,omitempty"`
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message, data}})
	if err != nil {
		// data holds something JSON cannot encode: a bug in the caller.
		// Still answer with a JSON-RPC error, without the data.
		body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
		status = http.StatusInternalServerError
	}
	WriteJSON(w, status, append(body, '\n'))
}

// WriteJSON sends body, one whole JSON document, as application/json with
// status and its Content-Length, so that the answer is complete the moment
// it is sent: never chunked, never waiting on the handler to end.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
