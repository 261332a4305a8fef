package httpapi

import (
	"net/http"
	"slices"
)

// MetadataPath is where an OAuth client finds the protected resource
// metadata of <public URL>/mcp (RFC 9728 §3.1: the well-known path
// inserted before the resource's path); clients that do not derive it
// try the root form, metadataRoot, which answers the same document.
const (
	MetadataPath = metadataRoot + "/mcp"
	metadataRoot = "/.well-known/oauth-protected-resource"
)

// MetadataPaths are the two paths that answer the metadata (the deployed
// HTTP API routes them to the gateway without an authorizer).
var MetadataPaths = []string{metadataRoot, MetadataPath}

func isMetadataPath(path string) bool { return slices.Contains(MetadataPaths, path) }

// resourceMetadata answers the protected resource metadata without
// credentials and to any origin: it is public, and browser-based MCP
// clients read it from pages on other origins (with an MCP-Protocol-Version
// header, so they send a preflight first).
func (s *server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.Set("Cache-Control", "public, max-age=3600")
		writeJSON(w, http.StatusOK, s.cfg.ProtectedResource)
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
	default:
		s.methodNotAllowed(http.MethodGet)(w, r)
	}
}
