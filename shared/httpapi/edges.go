package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"

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

// drainLimit bounds how much of a refused body is read after the answer.
const drainLimit = 16 << 20

// drain reads and drops what is left of a body refused as too large, up
// to drainLimit bytes, so that a client writing the whole body before it
// reads (most do) gets to read the 413 instead of a reset connection. The
// connection is closed after the answer either way. A client that waits
// for "100 Continue" has sent nothing and is not asked to.
func drain(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	http.NewResponseController(w).Flush() // the answer first; an error means it waits until we return
	io.Copy(io.Discard, io.LimitReader(r.Body, drainLimit))
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
