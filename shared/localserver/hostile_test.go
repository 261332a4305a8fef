package localserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"
	"time"
)

// hostileBodies are request bodies an attacker or a broken client sends.
func hostileBodies() map[string]string {
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	var manyKeys strings.Builder
	manyKeys.WriteString(`{"name":"x"`)
	for i := range 50000 {
		fmt.Fprintf(&manyKeys, `,"k%d":1`, i)
	}
	manyKeys.WriteString("}")
	return map[string]string{
		"empty":               ``,
		"whitespace":          "  \n\t ",
		"garbage":             `not json at all`,
		"nul":                 "\x00\x00",
		"invalid utf8":        "{\"name\":\"\xff\xfe\"}",
		"truncated":           `{"name":"x"`,
		"trailing data":       `{"name":"x"}xyz`,
		"two objects":         `{"name":"x"}{"name":"y"}`,
		"array":               `[{"name":"x"}]`,
		"string":              `"x"`,
		"number":              `1e400`,
		"null":                `null`,
		"duplicate keys":      `{"name":"x","name":"y"}`,
		"deep nesting":        deep,
		"50k keys":            manyKeys.String(),
		"huge string":         `{"name":"` + strings.Repeat("a", 3<<20) + `"}`,
		"over the body limit": `{"name":"` + strings.Repeat("a", 5<<20) + `"}`,
		"long number":         `{"name":1` + strings.Repeat("0", 100000) + `}`,
		"unicode whitespace":  `{"name":"\u3000\u00a0"}`,
		"control characters":  `{"name":"a\u0000b\u001f"}`,
		"lone surrogate":      `{"name":"\ud800"}`,
		"prototype pollution": `{"__proto__":{"x":1},"constructor":{"prototype":{}}}`,
		"v1 envelope":         `{"args":{"name":"x"}}`,
		"v1 duplicate args":   `{"args":{"name":"x"},"args":{"name":"y"}}`,
		"v1 args not object":  `{"args":[1,2,3]}`,
	}
}

// hostileRPC are JSON-RPC messages that must be refused (or, for the few
// valid ones, answered) without a text/plain error.
func hostileRPC() map[string]string {
	return map[string]string{
		"no method":          `{"jsonrpc":"2.0","id":1}`,
		"fractional id":      `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		"huge id":            `{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}`,
		"object id":          `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		"bool id":            `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		"jsonrpc 1.0":        `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		"no jsonrpc":         `{"id":1,"method":"ping"}`,
		"batch":              `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		"empty batch":        `[]`,
		"unknown method":     `{"jsonrpc":"2.0","id":1,"method":"tools/destroy"}`,
		"params array":       `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`,
		"params string":      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`,
		"bad log level":      `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`,
		"response":           `{"jsonrpc":"2.0","id":1,"result":{}}`,
		"call no name":       `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
		"call unknown tool":  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm_rf"}}`,
		"call bad args":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":"x"}}`,
		"call dup args":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"a","name":"b"}}}`,
		"call huge args":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"` + strings.Repeat("a", 1<<20) + `"}}}`,
		"duplicate method":   `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`,
		"trailing after rpc": `{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		"valid ping":         `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"valid call":         `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`,
	}
}

// TestHostileRequests sends well over a thousand hostile requests to the
// real local server and checks the promises that hold for every one of
// them: JSON back (never text/plain), an X-Request-Id, no 5xx, no
// redirect (paths that are not canonical included), no malformed JSON-RPC
// answered with a result, no answer much larger than its question, and no
// call held past its deadline.
func TestHostileRequests(t *testing.T) {
	base := startServer(t, map[string]string{"TOOLSHED_RATE_LIMITS": "hello=1000000,add_task=1000000,sys-audit=1000000"})
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paths := []string{"/mcp", "/v1/tools/hello", "/mcp/tool/hello", "/v1/tools/add_task", "/mcp/tool/sys-audit",
		"/v1/tools/nope", "/mcp/tool/../hello", "/healthz", "/", "/mcp/extra", "/v1/tools/hello/x", "/mcp/readonly",
		"//v1/tools/hello", "/v1/./tools/hello", "/v1/tools/..", "/mcp/../mcp"}
	methods := []string{"POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS"}
	contentTypes := []string{"application/json", "", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8"}
	accepts := []string{"application/json, text/event-stream", "", "text/html"}
	protocols := []string{"", "2025-06-18", "2026-07-28", "1999-01-01"}

	type request struct {
		method, path, ctype, accept, protocol, body, name string
	}
	var reqs []request
	bodies := hostileBodies()
	for _, path := range paths {
		for name, body := range bodies {
			reqs = append(reqs, request{"POST", path, "application/json", accepts[0], "", body, name},
				request{"POST", path, "", accepts[0], "2026-07-28", body, name + " without Content-Type"})
		}
		for _, m := range methods {
			for _, ct := range contentTypes {
				reqs = append(reqs, request{m, path, ct, accepts[0], "", `{"name":"x"}`, m + " " + ct})
			}
		}
	}
	for name, body := range hostileRPC() {
		for _, a := range accepts {
			for _, p := range protocols {
				reqs = append(reqs, request{"POST", "/mcp", "application/json", a, p, body, name + " accept " + a + " protocol " + p})
			}
		}
	}
	if len(reqs) < 1000 {
		t.Fatalf("only %d hostile requests", len(reqs))
	}

	var sent, refused int
	for _, r := range reqs {
		req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		if r.ctype != "" {
			req.Header.Set("Content-Type", r.ctype)
		}
		if r.accept != "" {
			req.Header.Set("Accept", r.accept)
		}
		if r.protocol != "" {
			req.Header.Set("MCP-Protocol-Version", r.protocol)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("%s %s (%s): %v", r.method, r.path, r.name, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		sent++
		if resp.StatusCode >= 400 {
			refused++
		}
		where := fmt.Sprintf("%s %s [%s] → %d", r.method, r.path, r.name, resp.StatusCode)
		ct := resp.Header.Get("Content-Type")
		switch {
		case resp.StatusCode >= 500:
			t.Errorf("%s: server error %s", where, clip(body))
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			t.Errorf("%s: a redirect to %q", where, resp.Header.Get("Location"))
		case resp.Header.Get("X-Request-Id") == "":
			t.Errorf("%s: no X-Request-Id", where)
		case resp.StatusCode == http.StatusAccepted && len(body) == 0:
			// An accepted notification: nothing to read.
		case !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream"):
			t.Errorf("%s: Content-Type %q: %s", where, ct, clip(body))
		case strings.HasPrefix(ct, "application/json") && !json.Valid(body):
			t.Errorf("%s: invalid JSON %s", where, clip(body))
		case len(body) > 4*len(r.body)+16<<10:
			t.Errorf("%s: a %d-byte request got a %d-byte answer", where, len(r.body), len(body))
		case took > 6*time.Second: // the longest deadline here is 5 s
			t.Errorf("%s: took %s", where, took)
		}
		// Only the valid messages may get a result; a tool's in-band refusal
		// (isError) is not one.
		if r.path == "/mcp" && resp.StatusCode == 200 && bytes.Contains(body, []byte(`"result"`)) &&
			!bytes.Contains(body, []byte(`"isError":true`)) && !strings.HasPrefix(r.name, "valid") {
			t.Errorf("%s: malformed JSON-RPC was answered with a result: %s", where, clip(body))
		}
	}
	t.Logf("%d hostile requests, %d refused with 4xx", sent, refused)
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// TestHostileRawRequests: requests net/http itself refuses before any
// handler runs (a bad escape in the path, a malformed request line or
// header, an unknown transfer coding, headers over the limit) are answered
// in JSON with a request id on every route path, never in text/plain.
func TestHostileRawRequests(t *testing.T) {
	addr := strings.TrimPrefix(startServer(t, nil), "http://")
	var lines []string
	for _, path := range []string{"/mcp", "/mcp/readonly", "/v1/tools/hello", "/mcp/tool/hello", "/healthz", ""} {
		for _, bad := range []string{"/%zz", "%", "/%2", "/%zz?x=1", "/a b"} {
			lines = append(lines, "POST "+path+bad+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
		}
		lines = append(lines,
			"POST "+path+"/ HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n",
			"POST "+path+"/ HTTP/1.1\r\n\r\n",
			"POST "+path+"/ HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n",
			"POST "+path+"/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\n\r\n",
			"POST "+path+"/ HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n")
	}
	for _, line := range lines {
		resp, body, err := rawRequest(addr, line, nil)
		where := clip([]byte(line))
		switch {
		case err != nil:
			t.Errorf("%q: %v", where, err)
		case resp.StatusCode < 400 || resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(body):
			t.Errorf("%q: %d %q (id %q) %s", where, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-Request-Id"), clip(body))
		}
	}
	t.Logf("%d raw requests, each answered in JSON", len(lines))
}

// TestBodyOverTheLimitIsReadable: a client that writes a whole 8 MB body
// before it reads (with a length or chunked) can write it all and then read
// the JSON 413 SIZE_LIMIT_EXCEEDED, instead of a reset connection.
func TestBodyOverTheLimitIsReadable(t *testing.T) {
	addr := strings.TrimPrefix(startServer(t, nil), "http://")
	body := []byte(`{"args":{"name":"` + strings.Repeat("a", 8<<20) + `"}}`)
	// The code in each route's vocabulary: the task API calls it VALIDATION_ERROR.
	codes := map[string]string{"/v1/tools/hello": "SIZE_LIMIT_EXCEEDED", "/mcp/tool/hello": "VALIDATION_ERROR", "/mcp": "SIZE_LIMIT_EXCEEDED"}
	for path, code := range codes {
		for _, framing := range []string{fmt.Sprintf("Content-Length: %d", len(body)), "Transfer-Encoding: chunked"} {
			head := "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
				"Accept: application/json, text/event-stream\r\n" + framing + "\r\n\r\n"
			resp, answer, err := rawRequest(addr, head, body)
			if err != nil {
				t.Errorf("%s, %s: %v", path, framing, err)
				continue
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(answer, []byte(`"`+code+`"`)) ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s, %s: %d %s", path, framing, resp.StatusCode, clip(answer))
			}
		}
	}
}

// rawRequest writes head and then body (chunked when head says so) to a
// new connection to addr, all of it, before reading the answer.
func rawRequest(addr, head string, body []byte) (*http.Response, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	w := bufio.NewWriter(conn)
	w.WriteString(head)
	if strings.Contains(head, "chunked") {
		cw := httputil.NewChunkedWriter(w)
		cw.Write(body)
		cw.Close()
		w.WriteString("\r\n")
	} else {
		w.Write(body)
	}
	if err := w.Flush(); err != nil {
		return nil, nil, fmt.Errorf("writing the request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp, answer, err
}
