package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// serve runs h on a real loopback server, with httpapi.Listener, as the
// local server does; it stops when the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(httpapi.Listener(ln, h))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// helloAPI serves hello (and the MCP stub on /mcp) with cfg.
func helloAPI(t *testing.T, cfg httpapi.Config) http.Handler {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Invoker, err = toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg.MCP = mcpOK
	return httpapi.New(cfg)
}

// rawExchange writes request as it is to addr and reads the answer.
func rawExchange(t *testing.T, addr, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// envelopeOf names the envelope a JSON error body is in.
func envelopeOf(body []byte) string {
	var b map[string]any
	if json.Unmarshal(body, &b) != nil {
		return "not JSON"
	}
	switch {
	case b["jsonrpc"] == "2.0" && b["error"] != nil:
		return "json-rpc"
	case b["ok"] == false:
		return "v1"
	case b["success"] == false:
		return "task-api"
	case b["code"] != nil:
		return "plain"
	}
	return "unknown"
}

// TestNonCanonicalPaths: a path with empty, "." or ".." segments is never
// redirected (http.ServeMux would answer 307): it is a 404 in the JSON
// envelope of the route its canonical form names, which it mentions.
func TestNonCanonicalPaths(t *testing.T) {
	addr := serve(t, helloAPI(t, httpapi.Config{Auth: auth.Fixed{Tenant: "t1"}}))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		path, envelope, canonical string
	}{
		{"//v1/tools/hello", "v1", "/v1/tools/hello"},
		{"/v1/./tools/hello", "v1", "/v1/tools/hello"},
		{"/v1/tools/hello/.", "v1", "/v1/tools/hello"},
		{"/v1/tools/..", "plain", "/v1"},
		{"/mcp/../mcp", "json-rpc", "/mcp"},
		{"/mcp/tool/../tool/hello", "task-api", "/mcp/tool/hello"},
		{"/mcp/tool/../hello", "json-rpc", "/mcp/hello"},
		{"/healthz/../healthz", "plain", "/healthz"},
	}
	for _, tt := range tests {
		for _, method := range []string{"GET", "POST"} {
			req, err := http.NewRequest(method, "http://"+addr+tt.path, strings.NewReader(`{"args":{"name":"x"}}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 404 || resp.Header.Get("Location") != "" || resp.Header.Get("Content-Type") != "application/json" ||
				envelopeOf(body) != tt.envelope || !strings.Contains(string(body), "did you mean "+tt.canonical) {
				t.Errorf("%s %s: %d (Location %q, %s) %s; want 404 in the %s envelope naming %s", method, tt.path, resp.StatusCode,
					resp.Header.Get("Location"), resp.Header.Get("Content-Type"), body, tt.envelope, tt.canonical)
			}
		}
	}
}

// TestRequestsNetHTTPRefuses: what net/http refuses before any handler (a
// bad escape, a malformed request line or header, too many header bytes)
// is answered in JSON in the envelope of the route aimed at, with a
// request id, never in text/plain, and its message names the problem.
func TestRequestsNetHTTPRefuses(t *testing.T) {
	addr := serve(t, helloAPI(t, httpapi.Config{Auth: auth.Fixed{Tenant: "t1"}}))
	const post = "POST /v1/tools/hello HTTP/1.1\r\nHost: x\r\n"
	tests := []struct {
		name, request string
		status        int
		envelope      string
		names         string // what the message says is wrong
	}{
		{"bad escape, /v1", "POST /v1/tools/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "v1", `invalid URL escape "%zz"`},
		{"bad escape, task API", "POST /mcp/tool/he%llo HTTP/1.1\r\nHost: x\r\n\r\n", 400, "task-api", `invalid URL escape "%ll"`},
		{"bad escape, /mcp", "POST /mcp/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "json-rpc", `invalid URL escape "%zz"`},
		{"bad escape, elsewhere", "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "plain", `invalid URL escape "%zz"`},
		{"bad escape in the query", "GET /v1/tools/hello?x=%zz HTTP/1.1\r\nHost: x\r\n\r\n", 405, "v1", "method GET is not allowed"},
		{"control character in the path", "GET /v1/tools/he\x7fllo HTTP/1.1\r\nHost: x\r\n\r\n", 400, "v1", "invalid control character in URL"},
		{"header without a colon", post + "nonsense\r\n\r\n", 400, "v1", `missing colon: "nonsense"`},
		{"control character in a header", post + "X-Note: a\x01b\r\n\r\n", 400, "v1", "malformed MIME header line"},
		{"invalid header name", post + "Bad Name: v\r\n\r\n", 400, "v1", "invalid header name"},
		{"two Content-Lengths", post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "v1",
			`cannot contain multiple Content-Length headers; got ["2" "3"]`},
		{"Content-Length not a number", post + "Content-Length: two\r\n\r\n{}", 400, "v1", `bad Content-Length "two"`},
		{"negative Content-Length", post + "Content-Length: -2\r\n\r\n{}", 400, "v1", `bad Content-Length "-2"`},
		{"unsupported transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n", 501, "v1", `unsupported transfer encoding: "gzip"`},
		{"two transfer codings", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501, "v1", "too many transfer encodings"},
		{"no Host", "POST /mcp HTTP/1.1\r\n\r\n", 400, "json-rpc", "missing required Host header"},
		{"two Hosts", "POST /mcp HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "json-rpc", "too many Host headers"},
		{"malformed Host", "POST /mcp HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "json-rpc", "malformed Host header"},
		{"unknown HTTP version", "POST /mcp HTTP/9.9\r\nHost: x\r\n\r\n", 505, "json-rpc", "unsupported protocol version"},
		{"malformed HTTP version", "POST /mcp FOO/1.1\r\nHost: x\r\n\r\n", 400, "json-rpc", `malformed HTTP version "FOO/1.1"`},
		{"invalid method", "P@ST /mcp HTTP/1.1\r\nHost: x\r\n\r\n", 400, "json-rpc", `invalid method "P@ST"`},
		{"not HTTP", "HELLO\r\n\r\n", 400, "plain", `malformed HTTP request "HELLO"`},
		{"headers over the limit", "GET /v1/tools/hello HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", 431, "v1",
			"larger than the server accepts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawExchange(t, addr, tt.request)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" ||
				resp.Header.Get("X-Request-Id") == "" || envelopeOf(body) != tt.envelope {
				t.Errorf("%d %s (id %q) %s; want %d in the %s envelope", resp.StatusCode, resp.Header.Get("Content-Type"),
					resp.Header.Get("X-Request-Id"), body, tt.status, tt.envelope)
			}
			if msg := messageOf(body); !strings.Contains(msg, tt.names) {
				t.Errorf("message %q does not say %q", msg, tt.names)
			}
		})
	}
}

// messageOf reads the message of any route's failure envelope.
func messageOf(body []byte) string {
	var b struct {
		Error any `json:"error"`
	}
	json.Unmarshal(body, &b)
	if rpc, ok := b.Error.(map[string]any); ok {
		msg, _ := rpc["message"].(string)
		return msg
	}
	msg, _ := b.Error.(string)
	return msg
}

// TestProbesAreLoggedAtDebug: what clients send in passing (GET and DELETE
// on /mcp, OAuth discovery) is refused as always but logged at DEBUG;
// other refusals at INFO, 401 and 403 at WARN.
func TestProbesAreLoggedAtDebug(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := helloAPI(t, httpapi.Config{Auth: keyAuth{}, Log: log})
	tests := []struct {
		method, path, auth string
		level              string
	}{
		{"GET", "/mcp", "Bearer good", "DEBUG"},
		{"DELETE", "/mcp", "Bearer good", "DEBUG"},
		{"GET", "/mcp/readonly", "Bearer good", "DEBUG"},
		{"GET", "/.well-known/oauth-protected-resource", "", "DEBUG"},
		{"GET", "/.well-known/oauth-protected-resource/mcp", "", "DEBUG"},
		{"GET", "/.well-known/oauth-authorization-server", "", "DEBUG"},
		{"GET", "/.well-known/openid-configuration", "", "DEBUG"},
		{"GET", "/mcp/.well-known/openid-configuration", "", "DEBUG"},
		{"PUT", "/mcp", "Bearer good", "INFO"},
		{"POST", "/.well-known/oauth-authorization-server", "", "INFO"},
		{"GET", "/elsewhere", "", "INFO"},
		{"POST", "/mcp", "", "WARN"},
	}
	for _, tt := range tests {
		logs.Reset()
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", tt.auth)
		h.ServeHTTP(httptest.NewRecorder(), req)
		var line struct{ Level, Event string }
		if err := json.Unmarshal([]byte(logs.String()), &line); err != nil || line.Event != "http_error" || line.Level != tt.level {
			t.Errorf("%s %s: logged %q, want one http_error line at %s", tt.method, tt.path, logs.String(), tt.level)
		}
	}
}

// TestEarlyRefusalsAreCompleteAnswers: a refusal answered before the body
// is read (or partway through it) reaches a client that stops sending once
// the answer arrives, as HTTP/1.1 allows: the whole answer at once, its
// length known, and then the server closes the connection within bounds
// instead of waiting for the body it was promised.
func TestEarlyRefusalsAreCompleteAnswers(t *testing.T) {
	addr := serve(t, helloAPI(t, httpapi.Config{Auth: keyAuth{}}))
	const auth = "Authorization: Bearer good\r\n"
	overLimit := httpapi.DefaultMaxBody + 1<<10
	tests := []struct {
		name, head string
		sent       []byte // the part of the body sent before reading
		status     int
	}{
		{"413, 5 MiB announced", "POST /v1/tools/hello HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: application/json\r\nContent-Length: 5242880\r\n\r\n", []byte(`{"args":{"name":"`), 413},
		{"413, 5 MiB announced, waiting for 100 Continue", "POST /mcp HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: application/json\r\nContent-Length: 5242880\r\nExpect: 100-continue\r\n\r\n", nil, 413},
		{"413, chunked past the limit", "POST /mcp/tool/hello HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
			fmt.Appendf(nil, "%x\r\n%s\r\n", overLimit, strings.Repeat("a", overLimit)), 413},
		{"415", "POST /v1/tools/hello HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: text/plain\r\nContent-Length: 100000\r\n\r\n", []byte("hello"), 415},
		{"401", "POST /mcp HTTP/1.1\r\nHost: x\r\n" +
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n", []byte(`{"jsonrpc"`), 401},
		{"401, chunked", "POST /mcp HTTP/1.1\r\nHost: x\r\n" +
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", []byte("a\r\n{\"jsonrpc\""), 401},
		{"404", "POST /v2/nothing HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n", []byte(`{}`), 404},
		{"405", "PUT /v1/tools/hello HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n", []byte(`{}`), 405},
	}
	type answered struct {
		name string
		conn *bufio.Reader
	}
	var conns []answered
	closeAtEnd := func(c net.Conn) { t.Cleanup(func() { c.Close() }) } // of the whole test
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			closeAtEnd(conn)
			start := time.Now()
			conn.SetDeadline(start.Add(30 * time.Second))
			if _, err := conn.Write(append([]byte(tt.head), tt.sent...)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("reading the answer's body: %v (after %v)", err, time.Since(start))
			}
			// Generous: the answer must not wait for the body.
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("the whole answer took %v", took)
			}
			if resp.StatusCode != tt.status || len(resp.TransferEncoding) > 0 || resp.ContentLength != int64(len(body)) ||
				!resp.Close || !json.Valid(body) {
				t.Errorf("%d (Transfer-Encoding %v, Content-Length %d, close %v) %s; want a complete %d closing the connection",
					resp.StatusCode, resp.TransferEncoding, resp.ContentLength, resp.Close, body, tt.status)
			}
			conns = append(conns, answered{tt.name, br})
		})
	}
	// The server stops waiting for the rest of each body and closes the
	// connection, well before the client's deadline.
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			if _, err := c.conn.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("%s: %v; want the server to close the connection", c.name, err)
			}
		})
	}
	wg.Wait()
}
