package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// The edges of HTTP that a router answers in its own way unless told:
// paths that are not canonical, bodies over the limit, and the refusals
// every client causes in passing.

// canonicalPath is p as http.ServeMux would route it: rooted, without
// empty, "." or ".." segments, a trailing slash kept. The mux redirects a
// request whose path is not canonical (307, text/html); this server
// answers it with the route's JSON error instead (see nonCanonical).
func canonicalPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// nonCanonical answers a request whose path is not canonical: 404 in the
// envelope of the route its canonical path names, saying which path that
// is. Paths are matched as sent, so a client learns its mistake instead
// of being redirected (which would turn a POST into a GET for some
// clients, and bypass nothing here).
func (s *server) nonCanonical(w http.ResponseWriter, r *http.Request, canonical string) {
	sent := r.URL.Path
	aimed := r.Clone(r.Context())
	aimed.URL.Path, aimed.URL.RawPath = canonical, ""
	s.fail(w, aimed, http.StatusNotFound, toolerr.New(toolerr.ResourceNotFound,
		"no route for %s %s: paths are matched as sent, without empty, '.' or '..' segments (did you mean %s?)",
		r.Method, sent, canonical).With("path", sent))
}

// A refusal answered before the body is read (413 for a declared length,
// 415, 401, 403, 404, 405, ...) or partway through it (413 past the limit)
// leaves the client sending a body nobody will read. HTTP/1.1 lets a
// client stop sending once an answer arrives, and most clients write the
// whole body before they read. So the answer is complete when sent — its
// length known, flushed at once — and only then is the rest of the body
// read and dropped, within drainLimit bytes and drainTime, so that a client
// still writing it gets to read the answer instead of a reset connection;
// then the connection closes.
const (
	drainLimit = 16 << 20
	drainTime  = 5 * time.Second
)

// trackedBody is a request body that records whether it was read to its
// end (ServeHTTP wraps every request's).
type trackedBody struct {
	io.ReadCloser
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.done = true
	}
	return n, err
}

// closeUnread prepares the answer to a refusal of r whose body is not read
// to its end and comes over a connection (w can set its read deadline; an
// API Gateway event's body is in memory and needs nothing): the body's
// remaining reads end at drainTime (at once when the client waits for
// "100 Continue" and has sent nothing), and the answer carries
// "Connection: close", which also keeps net/http from reading the body
// before it sends the answer. It reports whether drain is to follow.
func closeUnread(w http.ResponseWriter, r *http.Request) bool {
	body, tracked := r.Body.(*trackedBody)
	if r.ContentLength == 0 || (tracked && body.done) {
		return false
	}
	deadline := time.Now().Add(drainTime)
	if expectsContinue(r) {
		deadline = time.Now()
	}
	if err := http.NewResponseController(w).SetReadDeadline(deadline); err != nil {
		return false // not a connection of this server's
	}
	w.Header().Set("Connection", "close")
	return true
}

// drain sends the answer written so far and then reads and drops what is
// left of r's body, within drainLimit bytes and the deadline closeUnread
// set.
func drain(w http.ResponseWriter, r *http.Request) {
	http.NewResponseController(w).Flush() // an error means the answer goes when the handler returns
	if expectsContinue(r) {
		return // the client sends nothing until told to
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, drainLimit))
}

func expectsContinue(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// refusalLevel is the level of a refusal's log line: WARN for 401 and 403,
// DEBUG for what clients send in passing (probes), INFO otherwise.
func refusalLevel(r *http.Request, status int) slog.Level {
	switch {
	case isProbe(r):
		return slog.LevelDebug
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// isProbe reports whether r is one of the requests MCP clients make in
// passing, whose refusal is normal: GET (an SSE stream) and DELETE (the
// end of a session) on /mcp, and the OAuth discovery documents a client
// looks up before it decides how to authenticate.
func isProbe(r *http.Request) bool {
	p := r.URL.Path
	if p == "/mcp" || p == ReadonlyPath {
		return r.Method == http.MethodGet || r.Method == http.MethodDelete
	}
	return r.Method == http.MethodGet &&
		(strings.Contains(p, "/.well-known/oauth-") || strings.Contains(p, "/.well-known/openid-configuration"))
}
