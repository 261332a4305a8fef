// Package httpapi is Toolshed's HTTP surface: POST /v1/tools/{name} (seed
// 003 envelope), POST /mcp/tool/{name} (seed 002 envelope), /mcp (the MCP
// handler, mounted from shared/mcpserver) and GET /healthz. It reads and
// bounds request bodies, authenticates the caller, guards against DNS
// rebinding and hostile origins, and renders outcomes with the right status.
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/envelope"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// DefaultMaxBody bounds request bodies (file-io writes up to 1 MiB of
// content, which JSON escaping can grow).
const DefaultMaxBody = 4 << 20

// Authenticator resolves the tenant of a request. A *toolerr.Error with
// UNAUTHORIZED is answered with 401.
type Authenticator interface {
	Authenticate(r *http.Request) (tenant string, err error)
}

// Config wires a Handler.
type Config struct {
	Invoker toolkit.Invoker
	Auth    Authenticator
	MCP     http.Handler // nil: /mcp is not served (tool functions)
	// RequestID returns the id of a request; nil generates a random one.
	RequestID func(r *http.Request) string
	// Guard rejects requests whose Host or Origin are not allowed (local
	// server); nil allows every request (API Gateway does its own checks).
	Guard   *OriginGuard
	MaxBody int64 // 0: DefaultMaxBody
	Log     *slog.Logger
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
	s := &server{cfg: cfg}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tools/{name}", s.authed(s.v1))
	mux.HandleFunc("/v1/tools/{name}", methodNotAllowed)
	mux.HandleFunc("POST /mcp/tool/{name}", s.authed(s.legacy))
	mux.HandleFunc("/mcp/tool/{name}", methodNotAllowed)
	if cfg.MCP != nil {
		mux.Handle("/mcp", s.authed(cfg.MCP.ServeHTTP))
	}
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("/", s.notFound)
	var h http.Handler = mux
	if cfg.Guard != nil {
		h = cfg.Guard.Wrap(h)
	}
	return h
}

type server struct{ cfg Config }

func (s *server) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"error": fmt.Sprintf("no route for %s %s; use POST /mcp, POST /v1/tools/{name} or POST /mcp/tool/{name}", r.Method, r.URL.Path),
		"code":  toolerr.ResourceNotFound,
	})
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]any{
		"error": fmt.Sprintf("method %s is not allowed; use POST", r.Method),
		"code":  toolerr.InvalidInput,
	})
}

// authed resolves the caller and puts the identity in the request context.
func (s *server) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := caller.Identity{RequestID: s.cfg.RequestID(r)}
		w.Header().Set("X-Request-Id", id.RequestID)
		tenant, err := s.cfg.Auth.Authenticate(r)
		if err != nil {
			te := toolerr.From(err)
			if te.Code == toolerr.Internal || te.Code == toolerr.StorageError {
				s.cfg.Log.Error("authentication failed", "request_id", id.RequestID, "cause", err)
			}
			if te.Code == toolerr.Unauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolshed"`)
			}
			writeJSON(w, toolerr.Lookup(te.Code).HTTPStatus, map[string]any{
				"error": te.Message, "code": te.Code, "requestId": id.RequestID,
			})
			return
		}
		id.Tenant = tenant
		next(w, r.WithContext(caller.With(r.Context(), id)))
	}
}

// v1 serves POST /v1/tools/{name} with body {"args":{...}}.
func (s *server) v1(w http.ResponseWriter, r *http.Request) {
	out := s.invoke(r, func(body []byte) (json.RawMessage, error) {
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, nil
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, badJSON(err)
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
	})
	writeOutcome(w, out, envelope.ToV1(out))
}

// legacy serves POST /mcp/tool/{name} whose body is the arguments object.
func (s *server) legacy(w http.ResponseWriter, r *http.Request) {
	out := s.invoke(r, func(body []byte) (json.RawMessage, error) { return body, nil })
	writeOutcome(w, out, envelope.ToLegacy(out))
}

// invoke reads the body, extracts the arguments and runs the tool.
func (s *server) invoke(r *http.Request, args func([]byte) (json.RawMessage, error)) toolkit.Outcome {
	id := caller.From(r.Context())
	name := r.PathValue("name")
	if canonical, ok := s.cfg.Invoker.Has(name); ok {
		name = canonical
	}
	fail := func(err error) toolkit.Outcome { return toolkit.Fail(name, id.RequestID, err) }
	if err := checkContentType(r); err != nil {
		return fail(err)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fail(toolerr.New(toolerr.InvalidInput, "request body: larger than the %d-byte limit", mbe.Limit).
				With("limitBytes", mbe.Limit))
		}
		return fail(toolerr.New(toolerr.InvalidInput, "request body: could not be read: %v", err))
	}
	a, err := args(body)
	if err != nil {
		return fail(err)
	}
	if len(bytes.TrimSpace(a)) > 0 && !json.Valid(a) {
		var v any
		return fail(badJSON(json.Unmarshal(a, &v)))
	}
	return s.cfg.Invoker.Invoke(r.Context(), toolkit.Request{
		Tool: name, Args: a, Tenant: id.Tenant, RequestID: id.RequestID,
	})
}

func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return toolerr.New(toolerr.InvalidInput, "Content-Type: must be application/json, got %q", ct)
	}
	return nil
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
	if out.Error != nil && out.Error.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(out.Error.RetryAfter))
	}
	writeJSON(w, envelope.Status(out), body)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(body)
}
