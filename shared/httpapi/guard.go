package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// OriginGuard protects a server bound to loopback against DNS rebinding and
// cross-site requests from browsers: the Host must be a loopback name, and
// an Origin header, when present, must be a loopback origin or one of the
// configured extra origins.
type OriginGuard struct {
	// Origins are extra allowed origins, e.g. "https://inspector.example".
	Origins []string
}

// Check reports whether r may be served, and why not.
func (g *OriginGuard) Check(r *http.Request) (reason string, ok bool) {
	if !isLoopbackHost(r.Host) {
		return fmt.Sprintf("Host %q is not allowed; the local server only answers loopback names", r.Host), false
	}
	if o := r.Header.Get("Origin"); o != "" && !g.allowedOrigin(o) {
		return fmt.Sprintf("Origin %q is not allowed; add it to TOOLSHED_ALLOWED_ORIGINS to let that page call the server", o), false
	}
	return "", true
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
