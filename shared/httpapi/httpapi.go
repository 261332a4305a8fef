// Package httpapi is Toolshed's HTTP surface: POST /v1/tools/{name} (the
// /v1 envelope), POST /mcp/tool/{name} (the task-API envelope), POST /mcp
// (the MCP server of shared/mcpserver) and GET /healthz ("ok" to anyone,
// the details only to an accepted credential, of its repositories); with
// OAuth, the protected resource metadata at GET
// /.well-known/oauth-protected-resource (metadata.go), open to anyone; and
// the MCP Server Card at servercard.Path, open to anyone too.
//
// Every response carries X-Request-Id, and every failure — including 401,
// 403, 404, 405, 413 and 415 — is written in the envelope of the route the
// request was aimed at: the /v1 envelope under /v1/, the task-API envelope
// under /mcp/tool/, a JSON-RPC error on /mcp, and {"error","code",
// "requestId"} elsewhere. The HTTP rules are applied here, once, for every
// route: the method (else 405), the Content-Type (else 415: application/json
// on /mcp, application/json or none on the tool routes) and a body of at
// most MaxBody bytes (else 413 SIZE_LIMIT_EXCEEDED), read once. Paths are
// matched as sent: one that is not canonical is a 404, never a redirect
// (edges.go); requests net/http refuses itself are answered in JSON too
// when the server listens through Listener (malformed.go).
//
// A client may narrow the tools of its requests (toolselect.go): a subset
// (X-MCP-Tools, ?tools=) or the read-only ones (X-MCP-Readonly,
// /mcp/readonly), as request-scoped tool filters (caller.WithToolFilter).
//
// On the local server an origin guard (guard.go) refuses foreign Hosts and
// Origins with 403, and pages from allowed origins get CORS (cors.go):
// preflights answer 204, every other answer carries
// Access-Control-Allow-Origin and the exposed headers.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/envelope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/servercard"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// DefaultMaxBody bounds request bodies on every route (file-io writes up
// to 1 MiB of content, which JSON escaping can grow).
const DefaultMaxBody = 4 << 20

// MCP answers POST /mcp: one request whose body has been read and checked
// against the HTTP rules. *mcpserver.Server is one.
type MCP interface {
	Serve(w http.ResponseWriter, r *http.Request, body []byte)
}

// Authenticator resolves who is calling. A *toolerr.Error with
// UNAUTHORIZED is answered with 401 (and its Challenge in
// WWW-Authenticate).
type Authenticator interface {
	Authenticate(r *http.Request) (caller.Grant, error)
}

// Config wires a Handler.
type Config struct {
	Invoker toolkit.Catalog
	Auth    Authenticator
	MCP     MCP // nil: /mcp is not served (tool functions)
	// RequestID returns the id of a request; nil generates a random one.
	RequestID func(r *http.Request) string
	// Guard rejects requests whose Host or Origin are not allowed, and
	// requests from allowed browser origins get CORS (local server); nil
	// allows every request and adds no CORS headers (API Gateway does its
	// own checks and answers CORS itself).
	Guard   *OriginGuard
	MaxBody int64 // 0: DefaultMaxBody
	// MaxResponse bounds a response body as the Lambda runtime will encode
	// it (see EncodedLen); a larger one becomes SIZE_LIMIT_EXCEEDED. 0 means
	// no bound (the local server).
	MaxResponse int
	// Status adds the details to GET /healthz's {"status":"ok"} for a
	// caller whose credential is accepted (nil: there are none): what a
	// caller limited to the repositories repos (nil: every one) may see,
	// e.g. how far the local code indexes of those repositories are.
	Status func(repos []string) map[string]any
	// ProtectedResource is served, to anyone, at the well-known URLs of
	// OAuth protected resource metadata (RFC 9728; metadata.go) when the
	// server takes OAuth access tokens; nil: it takes none.
	ProtectedResource *oauthex.ProtectedResourceMetadata
	// ServerCard, when set, is answered, to anyone, at servercard.Path:
	// the card of the server whose MCP endpoint is mcpURL.
	ServerCard func(mcpURL string) any
	// PublicURL is the origin clients reach the server at, for the server
	// card; "" takes it from each request (its Host, https when it came
	// over TLS or through a proxy that says so in X-Forwarded-Proto).
	PublicURL string
	Log       *slog.Logger
}

// New returns the HTTP handler.
func New(cfg Config) http.Handler {
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.RequestID == nil {
		cfg.RequestID = func(*http.Request) string { return caller.NewRequestID() }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &server{cfg: cfg, selection: newToolSelection(cfg.Invoker)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tools/{name}", s.authed(s.withSelection(s.withBody(jsonOrNoType, s.v1))))
	mux.HandleFunc("/v1/tools/{name}", s.methodNotAllowed(http.MethodPost))
	mux.HandleFunc("POST /mcp/tool/{name}", s.authed(s.withSelection(s.withBody(jsonOrNoType, s.taskAPI))))
	mux.HandleFunc("/mcp/tool/{name}", s.methodNotAllowed(http.MethodPost))
	if cfg.MCP != nil {
		for _, path := range []string{"/mcp", ReadonlyPath} {
			mux.HandleFunc("POST "+path, s.authed(s.withSelection(s.withBody(jsonType, cfg.MCP.Serve))))
			mux.HandleFunc(path, s.methodNotAllowed(http.MethodPost))
		}
	}
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("/healthz", s.methodNotAllowed(http.MethodGet))
	mux.HandleFunc("/", s.notFound)
	s.mux = mux
	return s
}

type server struct {
	cfg       Config
	mux       *http.ServeMux
	selection toolSelection // the tools a request asks for (toolselect.go)
}

// ServeHTTP gives every request its id, then applies the origin guard and
// CORS (cors.go; both only on the local server) and the routes.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := caller.Identity{RequestID: s.cfg.RequestID(r), Accepted: time.Now()}
	w.Header().Set("X-Request-Id", id.RequestID)
	r = r.WithContext(caller.With(r.Context(), id))
	if bad, ok := r.Context().Value(malformedKey{}).(malformed); ok { // malformed.go
		s.fail(w, r, bad.status, bad.err)
		return
	}
	// A refusal needs to know whether the body was read (edges.go).
	r.Body = &trackedBody{ReadCloser: r.Body}
	if s.cfg.ProtectedResource != nil && isMetadataPath(r.URL.Path) {
		s.resourceMetadata(w, r) // open to every origin: no guard
		return
	}
	if s.cfg.ServerCard != nil && r.URL.Path == servercard.Path {
		s.serverCard(w, r) // open to every origin: no guard
		return
	}
	if s.cfg.Guard != nil {
		if msg, ok := s.cfg.Guard.Check(r); !ok {
			s.fail(w, r, http.StatusForbidden, toolerr.New(toolerr.AccessDenied, "%s", msg))
			return
		}
		if answerCORS(w, r) { // a preflight
			return
		}
	}
	if canonical := canonicalPath(r.URL.Path); canonical != r.URL.Path {
		s.nonCanonical(w, r, canonical)
		return
	}
	if s.cfg.MaxResponse > 0 {
		s.serveLimited(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// health answers GET /healthz: {"status":"ok"} to anyone (load
// balancers, probes), and with the details (Status) to a caller whose
// credential is accepted, only those of the repositories it may read. A
// request without credentials is answered as anyone; one whose credential
// is refused is refused, as on every other route. With auth off locally
// every caller is accepted.
func (s *server) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{}
	if s.cfg.Status != nil && s.cfg.Auth != nil {
		grant, err := s.authenticate(r)
		switch {
		case err == nil:
			out = s.cfg.Status(grant.Repos)
		case r.Header.Get("Authorization") != "":
			s.refuseAuth(w, r, err)
			return
		}
	}
	out["status"] = "ok"
	writeJSON(w, http.StatusOK, out)
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, toolerr.New(toolerr.ResourceNotFound,
		"no route for %s %s; %s", r.Method, r.URL.Path, s.routes()))
}

// routes describes what this handler serves, for 404 messages.
func (s *server) routes() string {
	names := s.cfg.Invoker.Names()
	if s.cfg.MCP == nil {
		var routes []string
		for _, n := range names {
			routes = append(routes, "POST /v1/tools/"+n, "POST /mcp/tool/"+n)
		}
		return "this function serves " + strings.Join(routes, ", ")
	}
	return fmt.Sprintf("Toolshed serves POST /mcp, POST %s, POST /v1/tools/{name}, POST /mcp/tool/{name} and GET /healthz; tools: %s",
		ReadonlyPath,
		strings.Join(names, ", "))
}

func (s *server) methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		s.fail(w, r, http.StatusMethodNotAllowed, toolerr.New(toolerr.InvalidInput,
			"method %s is not allowed on %s; use %s", r.Method, r.URL.Path, allow))
	}
}

// AuthTimeout bounds resolving the caller (a key lookup in the store), so
// that a store that hangs leaves the tool its deadline, which runs from
// when the request was accepted.
const AuthTimeout = time.Second

// authed resolves the caller and runs next with the tenant in the context.
func (s *server) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		grant, err := s.authenticate(r)
		if err != nil {
			s.refuseAuth(w, r, err)
			return
		}
		id := caller.From(r.Context())
		id.Tenant, id.Repos = grant.Tenant, grant.Repos
		ctx := caller.With(r.Context(), id)
		if grant.Tools != nil {
			ctx = caller.WithToolFilter(ctx, grant.Tools)
		}
		next(w, r.WithContext(ctx))
	}
}

// authenticate resolves the caller of r within AuthTimeout.
func (s *server) authenticate(r *http.Request) (caller.Grant, error) {
	ctx, cancel := context.WithTimeout(r.Context(), AuthTimeout)
	defer cancel()
	return s.cfg.Auth.Authenticate(r.WithContext(ctx))
}

// refuseAuth answers a request whose caller could not be resolved (err):
// 401 with a challenge, 403, or the failure of the store behind the keys.
func (s *server) refuseAuth(w http.ResponseWriter, r *http.Request, err error) {
	te := toolerr.From(err)
	if te.Code == toolerr.Internal || te.Code == toolerr.StorageError {
		s.cfg.Log.Error("authentication failed", "request_id", caller.From(r.Context()).RequestID, "cause", err)
	}
	if te.Code == toolerr.Unauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolshed"`)
	}
	s.fail(w, r, toolerr.Lookup(te.Code).HTTPStatus, te)
}

// typeRule says which Content-Type a route accepts for a POST body.
type typeRule int

const (
	// jsonOrNoType accepts application/json or no Content-Type at all
	// (the tool routes).
	jsonOrNoType typeRule = iota
	// jsonType accepts application/json only (/mcp: the Streamable HTTP
	// transport sends it, and the SDK requires it).
	jsonType
)

// formHint says where a form's Content-Type most likely came from: curl
// sends it with every -d that has no Content-Type of its own.
var formHint = map[string]string{"application/x-www-form-urlencoded": " (curl -d sends it: add -H 'Content-Type: application/json')"}

// withBody applies the rules every POST body follows — the Content-Type
// its route accepts (415 otherwise) and at most MaxBody bytes (413
// otherwise; a declared length is refused before reading) — and runs next
// with the body, read once. It answers a refusal itself.
func (s *server) withBody(rule typeRule, next func(w http.ResponseWriter, r *http.Request, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if ct != "" || rule == jsonType {
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				s.fail(w, r, http.StatusUnsupportedMediaType, toolerr.New(toolerr.InvalidInput,
					"Content-Type: must be application/json, got %q%s", ct, formHint[mt]))
				return
			}
		}
		if r.ContentLength > s.cfg.MaxBody {
			s.tooLarge(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.tooLarge(w, r)
				return
			}
			s.fail(w, r, http.StatusBadRequest, toolerr.New(toolerr.InvalidInput, "request body: could not be read: %v", err))
			return
		}
		next(w, r, body)
	}
}

// tooLarge answers 413; fail closes the connection after it.
func (s *server) tooLarge(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusRequestEntityTooLarge, toolerr.New(toolerr.SizeLimitExceeded,
		"request body: larger than the %d-byte limit", s.cfg.MaxBody).With("limitBytes", s.cfg.MaxBody))
}

// v1 serves POST /v1/tools/{name} with body {"args":{...}}.
func (s *server) v1(w http.ResponseWriter, r *http.Request, body []byte) {
	args, err := v1Args(body)
	out := s.invoke(r, args, err)
	writeOutcome(w, out, envelope.ToV1(out))
}

// v1Args takes the arguments out of a {"args":{...}} body. An empty body
// or null args mean no arguments.
func v1Args(body []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badJSON(err)
	}
	// The arguments are checked whole by the tool's input validation; here
	// only the envelope may not repeat "args".
	if key, dup := schema.DuplicateKey(body); dup && key == "args" {
		return nil, badJSON(fmt.Errorf("duplicate key %q in the object", key))
	}
	for k := range req {
		if k != "args" {
			return nil, toolerr.New(toolerr.InvalidInput,
				`%s: is not an accepted field; send tool arguments as {"args": {...}}`, k)
		}
	}
	if bytes.Equal(bytes.TrimSpace(req["args"]), []byte("null")) {
		return nil, nil
	}
	return req["args"], nil
}

// taskAPI serves POST /mcp/tool/{name} whose body is the arguments object,
// answered in the task-API envelope.
func (s *server) taskAPI(w http.ResponseWriter, r *http.Request, body []byte) {
	var err error
	if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
		var v any
		err = badJSON(json.Unmarshal(body, &v))
	}
	out := s.invoke(r, body, err)
	writeOutcome(w, out, envelope.ToTaskAPI(out))
}

// invoke runs the tool named in the path with args, unless reading the
// arguments failed (argErr).
func (s *server) invoke(r *http.Request, args json.RawMessage, argErr error) toolkit.Outcome {
	id := caller.From(r.Context())
	name := s.toolName(r)
	if argErr != nil {
		return toolkit.Fail(name, id.RequestID, argErr)
	}
	return s.cfg.Invoker.Invoke(r.Context(), toolkit.Request{
		Tool: name, Args: args, Tenant: id.Tenant, RequestID: id.RequestID, Repos: id.Repos,
	})
}

// toolName is the tool named in the path, canonical when it is served.
func (s *server) toolName(r *http.Request) string {
	name := r.PathValue("name")
	if name == "" { // a failure before routing: take it from the path
		for _, prefix := range []string{"/v1/tools/", "/mcp/tool/"} {
			if rest, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
				name, _, _ = strings.Cut(rest, "/")
			}
		}
	}
	if canonical, ok := s.cfg.Invoker.Has(name); ok {
		return canonical
	}
	return name
}

// fail answers a request refused before (or instead of) running a tool, in
// the envelope of the route it was aimed at, and logs it. The answer is
// complete when sent (its length known); when the request's body is left
// unread on a connection, what is left of it is drained within bounds
// after the answer and the connection closed (edges.go).
func (s *server) fail(w http.ResponseWriter, r *http.Request, status int, e *toolerr.Error) {
	id := caller.From(r.Context())
	s.cfg.Log.Log(r.Context(), refusalLevel(r, status), "request refused", "event", "http_error", "status", status,
		"code", e.Code, "method", r.Method, "path", r.URL.Path, "request_id", id.RequestID,
		"remote", r.RemoteAddr, "error", e.Message)

	if closeUnread(w, r) {
		defer drain(w, r)
	}
	out := toolkit.Fail(s.toolName(r), id.RequestID, e)
	switch path := r.URL.Path; {
	case strings.HasPrefix(path, "/v1/"):
		writeStatus(w, status, out, envelope.ToV1(out))
	case strings.HasPrefix(path, "/mcp/tool/"):
		writeStatus(w, status, out, envelope.ToTaskAPI(out))
	case path == "/mcp" || strings.HasPrefix(path, "/mcp/"):
		rpcError(w, status, out)
	default:
		writeStatus(w, status, out, map[string]any{"error": e.Message, "code": e.Code, "requestId": id.RequestID})
	}
}

// rpcError answers a refusal on /mcp as a JSON-RPC error with id null:
// invalid request (-32600) for the client's faults, the vocabulary's code
// where it has one (413 is -32002), internal error for the server's; data
// carries the vocabulary code and the request id.
func rpcError(w http.ResponseWriter, status int, out toolkit.Outcome) {
	info := toolerr.Lookup(out.Error.Code)
	code := int64(info.JSONRPCCode)
	switch {
	case status >= 500:
		code = envelope.RPCInternalError
	case code == 0 || out.Error.Code == toolerr.InvalidInput:
		code = envelope.RPCInvalidRequest
	}
	data := map[string]any{"code": out.Error.Code, "requestId": out.RequestID}
	for k, v := range out.Error.Details {
		data[k] = v
	}
	setErrorHeaders(w, out)
	envelope.WriteRPCError(w, status, nil, code, out.Error.Message, data)
}

func badJSON(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return toolerr.New(toolerr.InvalidInput, "request body: malformed JSON at byte %d: %v", se.Offset, err)
	}
	var ue *json.UnmarshalTypeError
	if errors.As(err, &ue) {
		return toolerr.New(toolerr.InvalidInput, "request body: must be a JSON object")
	}
	return toolerr.New(toolerr.InvalidInput, "request body: malformed JSON: %v", err)
}

func writeOutcome(w http.ResponseWriter, out toolkit.Outcome, body any) {
	writeStatus(w, envelope.Status(out), out, body)
}

func writeStatus(w http.ResponseWriter, status int, out toolkit.Outcome, body any) {
	setErrorHeaders(w, out)
	writeJSON(w, status, body)
}

// setErrorHeaders gives the answer to a failure its Retry-After and
// WWW-Authenticate headers, when it has them.
func setErrorHeaders(w http.ResponseWriter, out toolkit.Outcome) {
	if out.Error == nil {
		return
	}
	if out.Error.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(out.Error.RetryAfter))
	}
	if out.Error.Challenge != "" {
		w.Header().Set("WWW-Authenticate", out.Error.Challenge)
	}
}

// writeJSON answers body as JSON with its length (envelope.WriteJSON).
// A body JSON cannot encode is a bug of the caller: the answer is then an
// internal error.
func writeJSON(w http.ResponseWriter, status int, body any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		envelope.WriteJSON(w, http.StatusInternalServerError, []byte(`{"error":"internal error","code":"INTERNAL_ERROR"}`+"\n"))
		return
	}
	envelope.WriteJSON(w, status, buf.Bytes())
}
