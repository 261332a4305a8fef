package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// OriginGuard protects a server bound to loopback against DNS rebinding and
// cross-site requests from browsers: the Host must be a loopback name, and
// an Origin header, when present, must be a loopback origin or one of the
// configured extra origins.
type OriginGuard struct {
	// Origins are extra allowed origins, e.g. "https://inspector.example".
	Origins []string
}

// Wrap returns h behind the guard.
func (g *OriginGuard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			deny(w, fmt.Sprintf("Host %q is not allowed; the local server only answers loopback names", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !g.allowedOrigin(o) {
			deny(w, fmt.Sprintf("Origin %q is not allowed", o))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (g *OriginGuard) allowedOrigin(origin string) bool {
	if slices.Contains(g.Origins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Host)
}

func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func deny(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusForbidden, map[string]any{"error": msg, "code": toolerr.AccessDenied})
}
