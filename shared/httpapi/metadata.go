package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/toolshed/toolshed/shared/servercard"
	"github.com/toolshed/toolshed/shared/toolerr"
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
	s.publicDocument(w, r, "application/json", s.cfg.ProtectedResource)
}

// publicDocument answers a public discovery document, body encoded as JSON
// and sent as contentType, to anyone and any origin: GET and HEAD get it,
// cacheable for an hour; OPTIONS is the preflight of a page on another
// origin; other methods are 405.
func (s *server) publicDocument(w http.ResponseWriter, r *http.Request, contentType string, body any) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(body); err != nil {
			e := toolerr.New(toolerr.Internal, "internal error")
			e.Cause = fmt.Errorf("encode %s: %w", r.URL.Path, err)
			s.fail(w, r, http.StatusInternalServerError, e)
			return
		}
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("Content-Type", contentType)
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		w.WriteHeader(http.StatusOK)
		w.Write(buf.Bytes())
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
	default:
		s.methodNotAllowed(http.MethodGet)(w, r)
	}
}

// serverCard answers the server card of the MCP endpoint at this server's
// public URL.
func (s *server) serverCard(w http.ResponseWriter, r *http.Request) {
	origin := s.cfg.PublicURL
	if origin == "" {
		scheme := "http"
		if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	s.publicDocument(w, r, servercard.MediaType, s.cfg.ServerCard(origin+"/mcp"))
}
