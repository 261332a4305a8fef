package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolshed/toolshed/shared/envelope"
)

// writeError writes one JSON-RPC error response (envelope.WriteRPCError).
// id is the request's id as it appeared on the wire (already validated as
// a string or an int64), or nil for null.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string, data map[string]any) {
	envelope.WriteRPCError(w, status, id, code, message, data)
}

// callStatus is the HTTP status for a JSON-RPC error answering a
// well-formed request (one with a valid id, reaching the method layer).
//
// From 2026-07-28 on, the Streamable HTTP spec (SEP-2575) prescribes the
// status: 404 for method not found, 400 for invalid params; the SDK maps
// its own in-band errors the same way. Earlier revisions answer such a
// request with an ordinary JSON-RPC response, so the status is 200: that is
// what the SDK does for errors from method handlers, and what clients of
// those revisions correlate with the call (the TypeScript SDK's 1.x client
// turns any non-2xx answer into a transport error instead of the JSON-RPC
// error it carries). Refusals of the message itself (parse errors, invalid
// requests, notifications and responses that cannot be accepted) are 400
// in every revision; see Server.Serve.
func callStatus(code int64, version string) int {
	if !modern(version) {
		return http.StatusOK
	}
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// modern reports whether version is 2026-07-28 or later: the sessionless
// protocol of SEP-2575. Protocol versions are dates, so they order as
// strings.
func modern(version string) bool { return version >= "2026-07-28" }

// plainErrors is a safety net around the SDK handler: should the SDK answer
// an error as text/plain (its http.Error paths that Server.Serve does not
// pre-empt, such as a Last-Event-ID header on a POST), the text becomes the
// message of a JSON-RPC error with the same HTTP status, echoing the
// request's id. Every other answer passes through untouched.
type plainErrors struct {
	w      http.ResponseWriter
	id     json.RawMessage
	status int          // non-zero once an error answer is being captured
	text   bytes.Buffer // its text
}

func (p *plainErrors) Header() http.Header { return p.w.Header() }

func (p *plainErrors) WriteHeader(status int) {
	if status >= 400 && !strings.HasPrefix(p.w.Header().Get("Content-Type"), "application/json") {
		p.status = status
		return
	}
	p.w.WriteHeader(status)
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status != 0 {
		return p.text.Write(b)
	}
	return p.w.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer's Flush.
func (p *plainErrors) Unwrap() http.ResponseWriter { return p.w }

// finish writes the captured error, if any, as JSON-RPC.
func (p *plainErrors) finish() {
	if p.status == 0 {
		return
	}
	code := int64(jsonrpc.CodeInvalidRequest)
	if p.status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	p.w.Header().Del("X-Content-Type-Options")
	writeError(p.w, p.status, p.id, code, strings.TrimSpace(p.text.String()), nil)
}
