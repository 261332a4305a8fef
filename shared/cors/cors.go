// Package cors declares the CORS policy Toolshed answers browser clients
// with, once for the two places that apply it: the local server
// (shared/httpapi, cors.go) and the deployed HTTP API's CORS configuration
// (the CDK app in infra/). It imports nothing, so that the CDK app can use
// it without pulling in the MCP SDK. Read the lists; never change them.
package cors

// AllowMethods are the methods a browser may use. MCP clients may send GET
// (to open an SSE stream) and DELETE (to end a session) to /mcp, which
// then answer 405 with Allow: POST.
var AllowMethods = []string{"GET", "POST", "DELETE", "OPTIONS"}

// AllowHeaders are the request headers a browser may send: the bearer
// credential, the JSON content type, and the Streamable HTTP transport's
// own headers.
var AllowHeaders = []string{"Authorization", "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID", "Accept"}

// ExposeHeaders are the response headers a page may read: the 401's
// WWW-Authenticate (where an MCP client starts authorization), the
// session id, the request id, and a 429's Retry-After.
var ExposeHeaders = []string{"WWW-Authenticate", "Mcp-Session-Id", "X-Request-Id", "Retry-After"}

// MaxAgeSeconds is how long a browser may cache a preflight answer (two
// hours, the most Chromium keeps one).
const MaxAgeSeconds = 7200
