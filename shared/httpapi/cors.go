package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/cors"
)

// The CORS header values, from the one policy in shared/cors.
var (
	corsAllowMethods  = strings.Join(cors.AllowMethods, ", ")
	corsAllowHeaders  = strings.Join(cors.AllowHeaders, ", ")
	corsExposeHeaders = strings.Join(cors.ExposeHeaders, ", ")
	corsMaxAge        = strconv.Itoa(cors.MaxAgeSeconds)
)

// answerCORS lets a browser page call the local server. It runs after the
// origin guard accepted r, so an Origin header on r is an allowed one.
//
// A request with an Origin gets Access-Control-Allow-Origin (that origin)
// and the exposed headers, whatever its answer turns out to be. A
// preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered here, on any path: 204 with the allowed methods and headers,
// and no authentication, since browsers never send credentials on one.
// The allowed headers are the fixed list, never an echo of what was asked;
// the browser refuses a request that needs more.
//
// answerCORS reports whether it answered r. A request without an Origin
// (curl, an MCP client outside a browser) gets no CORS headers.
func answerCORS(w http.ResponseWriter, r *http.Request) (answered bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
	return true
}
