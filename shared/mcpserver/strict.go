package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Serve answers one POST to /mcp whose body httpapi has read, within its
// size limit and with its Content-Type checked. It checks that the body is
// exactly one JSON-RPC 2.0 message this server can accept and only then
// hands it to the SDK, whose registered handlers answer it (every
// tools/call included). Every refusal is a JSON-RPC error object sent as
// application/json; it echoes the request's id when the message has a
// valid one, and is null otherwise.
//
// The answers, in the order the checks run:
//
//	Accept lacks JSON or SSE        406 -32600
//	not one well-formed JSON value  400 -32700 (also: invalid UTF-8,
//	                                 duplicate keys, trailing data)
//	batch, not an object, bad       400 -32600
//	 jsonrpc/id/method/params, keys
//	 differing only in case
//	a response (result or error)    400 -32600, id null: this server
//	                                 sends no requests to answer
//	unsupported MCP-Protocol-Version 400 -32022 with data.supported
//	unknown method                  -32601: 404 from 2026-07-28, 200
//	                                 before (see callStatus); 400 with
//	                                 id null for a notification
//	params an array, or missing     -32602 (status as for -32601)
//	 where the method needs them,
//	 or with keys differing only
//	 in case
//	tools/call of a tool the        403 -32000 ACCESS_DENIED with the
//	 credential's scopes do not      refusal's WWW-Authenticate (see
//	 reach                           credentialRefusal)
//
// Valid notifications go on to the SDK, which answers 202. Under
// 2026-07-28 the SDK refuses a request whose params lack the per-request
// _meta the spec requires (protocol version, client capabilities): -32602,
// 400, subscriptions/listen included.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if !acceptsJSONAndSSE(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, nil, jsonrpc.CodeInvalidRequest,
			"Accept must list both application/json and text/event-stream", nil)
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	msg, rej := parseMessage(body)
	if rej != nil {
		writeError(w, rej.status(version), rej.id, rej.code, rej.message, nil)
		return
	}
	if version != "" && !slices.Contains(s.versions, version) {
		writeError(w, http.StatusBadRequest, msg.id, mcp.CodeUnsupportedProtocolVersion,
			fmt.Sprintf("protocol version %q is not supported", version),
			map[string]any{"supported": s.versions, "requested": version})
		return
	}
	if rej := checkMethod(msg, version); rej != nil {
		writeError(w, rej.status(version), rej.id, rej.code, rej.message, nil)
		return
	}
	if e := s.credentialRefusal(r, msg); e != nil {
		w.Header().Set("WWW-Authenticate", e.Challenge)
		data := map[string]any{"code": e.Code}
		for k, v := range e.Details {
			data[k] = v
		}
		writeError(w, http.StatusForbidden, msg.id, int64(toolerr.Lookup(e.Code).JSONRPCCode), e.Message, data)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	pw := &plainErrors{w: w, id: msg.id}
	s.sdk.ServeHTTP(pw, r)
	pw.finish()
}

// acceptsJSONAndSSE reports whether an Accept header lists both
// application/json and text/event-stream (or wildcards covering them), as
// the Streamable HTTP transport requires of every POST. It matches the
// SDK's own check.
func acceptsJSONAndSSE(values []string) bool {
	var jsonOK, sseOK bool
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			media, _, _ := strings.Cut(item, ";")
			switch strings.ToLower(strings.TrimSpace(media)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK && sseOK
}

// message is what Serve needs to know of a JSON-RPC message.
type message struct {
	id        json.RawMessage // as sent: a JSON string or an int64 literal; nil if absent
	method    string
	hasParams bool
	params    json.RawMessage // as sent, when hasParams
}

// rejection is a message the server refuses: a JSON-RPC error code and
// message, and the id to echo (nil for null).
type rejection struct {
	id      json.RawMessage
	code    int64
	message string
}

// parseMessage checks that body is exactly one JSON-RPC 2.0 request,
// notification or response object, strictly: valid UTF-8, one JSON value
// and nothing after it, no duplicate keys at any depth and no keys that
// differ only in case in the message or its params (two parsers could read
// them differently: the SDK matches names exactly, encoding/json ignores
// case), "jsonrpc" exactly "2.0", an id that is a string
// or an integer within ±maxID (MCP forbids null ids; a fraction or a larger
// number would be answered under another id), a string method, and
// params that are an object when present. Responses are refused: this
// server sends no requests, so there is nothing they could answer.
func parseMessage(body []byte) (message, *rejection) {
	fields, rej := messageFields(body)
	if rej != nil {
		return message{}, rej
	}
	var msg message
	if raw, ok := fields["id"]; ok {
		id, problem := checkID(raw)
		if problem != "" {
			return message{}, &rejection{code: jsonrpc.CodeInvalidRequest, message: problem}
		}
		msg.id = id
	}
	if rej := msg.readRequest(fields); rej != nil {
		return message{}, rej
	}
	return msg, nil
}

// messageFields returns the members of the one JSON object body holds, or
// the rejection of a body that is not one: not strict JSON, a batch,
// another value, or an object with keys that differ only in case.
func messageFields(body []byte) (map[string]json.RawMessage, *rejection) {
	if err := checkJSON(body); err != nil {
		return nil, &rejection{code: jsonrpc.CodeParseError, message: "parse error: " + err.Error()}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if trimmed[0] == '[' {
		return nil, &rejection{code: jsonrpc.CodeInvalidRequest,
			message: "batches are not supported: send one JSON-RPC message per POST"}
	}
	if trimmed[0] != '{' {
		return nil, &rejection{code: jsonrpc.CodeInvalidRequest, message: "a JSON-RPC message must be a JSON object"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, &rejection{code: jsonrpc.CodeParseError, message: "parse error: " + err.Error()}
	}
	if a, b, ok := schema.FoldedKeys(fields); ok {
		return nil, &rejection{code: jsonrpc.CodeInvalidRequest, message: foldedKeys("the message", a, b)}
	}
	return fields, nil
}

// readRequest reads a request's members from fields into msg: "jsonrpc"
// "2.0", a string "method" (and neither "result" nor "error": responses
// are refused) and "params" (checkParams). A rejection echoes msg.id.
func (msg *message) readRequest(fields map[string]json.RawMessage) *rejection {
	var version string
	if err := json.Unmarshal(fields["jsonrpc"], &version); err != nil || version != "2.0" {
		return msg.invalid(`"jsonrpc" must be the string "2.0"`)
	}
	rawMethod, hasMethod := fields["method"]
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	switch {
	case !hasMethod && (hasResult || hasError):
		return &rejection{code: jsonrpc.CodeInvalidRequest,
			message: "this server sends no requests, so it accepts no responses"}
	case !hasMethod:
		return msg.invalid(`a request needs a "method"`)
	case hasResult || hasError:
		return msg.invalid(`a request must not carry "result" or "error"`)
	}
	if err := json.Unmarshal(rawMethod, &msg.method); err != nil || msg.method == "" {
		return msg.invalid(`"method" must be a non-empty string`)
	}
	msg.params, msg.hasParams = fields["params"]
	return msg.checkParams()
}

// checkParams refuses params that are present but not an object, or an
// object with keys that differ only in case.
func (msg *message) checkParams() *rejection {
	if !msg.hasParams {
		return nil
	}
	switch bytes.TrimLeft(msg.params, " \t\r\n")[0] {
	case '{':
		var params map[string]json.RawMessage
		json.Unmarshal(msg.params, &params) // a valid object: cannot fail
		if a, b, ok := schema.FoldedKeys(params); ok {
			return &rejection{id: msg.id, code: jsonrpc.CodeInvalidParams, message: foldedKeys(`"params"`, a, b)}
		}
	case '[':
		return &rejection{id: msg.id, code: jsonrpc.CodeInvalidParams,
			message: `"params" must be an object: MCP methods take named parameters`}
	default:
		return msg.invalid(`"params" must be an object when present`)
	}
	return nil
}

// invalid is the invalid-request rejection of msg, echoing its id.
func (msg *message) invalid(format string, args ...any) *rejection {
	return &rejection{id: msg.id, code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf(format, args...)}
}

// foldedKeys is the message refusing an object (where names it) with keys
// a and b that differ only in case.
func foldedKeys(where, a, b string) string {
	return fmt.Sprintf("%s has keys %q and %q, which differ only in case: names are case-sensitive, "+
		"and readers that ignore case would take them for one key", where, a, b)
}

// checkJSON reports why body is not exactly one JSON value with unique
// object keys, or nil.
func checkJSON(body []byte) error {
	if !utf8.Valid(body) {
		return errors.New("body is not valid UTF-8")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("body is empty")
	}
	if !json.Valid(body) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return err // says where, e.g. "invalid character 'x' after top-level value"
		}
		return errors.New("body is not one JSON value")
	}
	if key, ok := schema.DuplicateKey(body); ok {
		return fmt.Errorf("duplicate key %q", key)
	}
	return nil
}

// status is the HTTP status of the answer to rej: 400, except for method
// not found and invalid params answering a request with a valid id, whose
// status depends on the protocol version (see callStatus).
func (rej *rejection) status(version string) int {
	if rej.id == nil || rej.code == jsonrpc.CodeParseError || rej.code == jsonrpc.CodeInvalidRequest {
		return http.StatusBadRequest
	}
	return callStatus(rej.code, version)
}

// maxID bounds integer ids: 2^53-1, the largest integer a float64 (and a
// JavaScript number) holds exactly. The SDK decodes ids through float64, so
// it would answer a larger id under a neighbouring one (2^53+1 as 2^53,
// 2^64 as -2^63); such ids are refused rather than answered wrongly.
const maxID = 1<<53 - 1

// checkID returns a valid id as sent, or why it is not one.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	problem := fmt.Sprintf(`"id" must be a string or an integer from %d to %d`, -maxID, maxID)
	switch raw[0] {
	case '"':
		return raw, ""
	case 'n':
		return nil, `"id" must not be null`
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > maxID || n < -maxID {
			return nil, problem
		}
		return raw, ""
	}
	return nil, problem
}

// A methodSpec says how a method the server answers is called.
type methodSpec struct {
	notification bool // sent without an id
	needsParams  bool
	modernOnly   bool // added by 2026-07-28
}

// methods are the methods this server answers: the tools, resources,
// prompts and completions capabilities, the lifecycle and utilities of
// every protocol version it serves. Methods of capabilities it does not
// advertise (resource subscriptions, tasks) are "method not found", as is
// any unknown method. The methods 2026-07-28 added are not found under
// earlier versions either (the SDK would answer subscriptions/listen under
// any version); the methods it removed (initialize, ping,
// logging/setLevel, ...) are refused by the SDK under 2026-07-28, with the
// same -32601.
var methods = map[string]methodSpec{
	"initialize":                       {needsParams: true},
	"ping":                             {},
	"tools/list":                       {},
	"tools/call":                       {needsParams: true},
	"resources/list":                   {},
	"resources/templates/list":         {},
	"resources/read":                   {needsParams: true},
	"prompts/list":                     {},
	"prompts/get":                      {needsParams: true},
	"completion/complete":              {needsParams: true},
	"logging/setLevel":                 {needsParams: true},
	"server/discover":                  {modernOnly: true},
	"subscriptions/listen":             {needsParams: true, modernOnly: true},
	"notifications/initialized":        {notification: true},
	"notifications/cancelled":          {notification: true, needsParams: true},
	"notifications/progress":           {notification: true, needsParams: true},
	"notifications/roots/list_changed": {notification: true},
}

// checkMethod refuses a message whose method is unknown (under the
// protocol version of its MCP-Protocol-Version header) or is called the
// wrong way (a request without an id, a notification with one, missing
// params).
func checkMethod(msg message, version string) *rejection {
	spec, known := methods[msg.method]
	if spec.modernOnly && !modern(version) {
		known = false
	}
	switch {
	case !known && msg.id == nil:
		return &rejection{code: jsonrpc.CodeMethodNotFound, message: fmt.Sprintf("notification %q is not supported", msg.method)}
	case !known:
		return &rejection{id: msg.id, code: jsonrpc.CodeMethodNotFound, message: fmt.Sprintf("method %q not found", msg.method)}
	case spec.notification && msg.id != nil:
		return &rejection{id: msg.id, code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("%q is a notification and must not carry an id", msg.method)}
	case !spec.notification && msg.id == nil:
		return &rejection{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("%q is a request and needs an id", msg.method)}
	case spec.needsParams && !msg.hasParams:
		return &rejection{id: msg.id, code: jsonrpc.CodeInvalidParams, message: fmt.Sprintf("%q needs params", msg.method)}
	}
	return nil
}

// credentialRefusal is the refusal of a request whose tool the request's
// credential does not reach: a token lacking the scope a tool needs
// (caller.CheckTool's ACCESS_DENIED carrying a challenge), for a tools/call
// of that tool, a resources/read that would call it (read_file for a
// repository file, read_memory for a memory file) or a prompts/get of a
// prompt that needs it. It is answered here, before the SDK runs, with HTTP
// 403 and WWW-Authenticate, because an MCP client asks for more scope only
// on an HTTP 403; the SDK would answer 200. The filter's other refusals
// stay the SDK's (checkCall, the tool's isError result, the resource's or
// prompt's error). Nothing is run here.
func (s *Server) credentialRefusal(r *http.Request, msg message) *toolerr.Error {
	for _, tool := range s.toolsOf(msg) {
		canonical, served := s.tools.Has(tool)
		if !served {
			continue
		}
		if te := toolerr.From(caller.CheckTool(r.Context(), canonical)); te != nil && te.Challenge != "" {
			return te
		}
	}
	return nil
}

// toolsOf returns the tools msg would call, read from its params as the
// SDK reads them (checkCall); none when they cannot be read (the SDK
// refuses such params).
func (s *Server) toolsOf(msg message) []string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	switch msg.method {
	case "tools/call", "prompts/get", "resources/read":
		if schema.Unmarshal(msg.params, &p) != nil {
			return nil
		}
	}
	switch msg.method {
	case "tools/call":
		return []string{p.Name}
	case "prompts/get":
		return promptNeeds(p.Name)
	case "resources/read":
		return resourceTools(p.URI)
	}
	return nil
}
