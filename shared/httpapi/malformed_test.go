package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

// FuzzRefusalAnswer: whatever a refused request's bytes (head, as the
// connection kept them) and the status net/http gave it, the answer that
// replaces net/http's is one complete HTTP response: a JSON body of the
// length it announces, a request id, the connection closing, and a
// message that says what is wrong in at most maxProblem bytes.
func FuzzRefusalAnswer(f *testing.F) {
	for _, seed := range []string{
		"POST /v1/tools/%zz HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /v1/tools/hello HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
		"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
		"POST /mcp/tool/hello HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n",
		"POST /mcp/tool/hello HTTP/1.1\r\n X: y\r\n\r\n",
		"P@ST /mcp HTTP/1.1\r\nHost: x\r\n\r\n",
		"HELLO\r\n\r\n",
		"GET /v1/tools/he\x7fllo HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: x\r\nX: \xff\xfe" + string(bytes.Repeat([]byte("é"), 200)) + "\r\n\r\n",
		"",
	} {
		f.Add([]byte(seed), uint8(0))
	}
	statuses := []int{http.StatusBadRequest, http.StatusRequestHeaderFieldsTooLarge, http.StatusNotImplemented, http.StatusHTTPVersionNotSupported}
	set, err := schema.Load(contracts.FS)
	if err != nil {
		f.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{})
	if err != nil {
		f.Fatal(err)
	}
	local, remote := net.Pipe()
	f.Cleanup(func() { local.Close(); remote.Close() })
	c := &jsonConn{Conn: local, h: New(Config{Invoker: p, Auth: anyone{}})}

	f.Fuzz(func(t *testing.T, head []byte, pick uint8) {
		status := statuses[int(pick)%len(statuses)]
		text := http.StatusText(status) // net/http's bare answer: the problem comes from head
		if len(head) > headLimit {
			head = head[:headLimit]
		}
		out := c.answer(head, status, text)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
		if err != nil {
			t.Fatalf("answer is not an HTTP response: %v\n%q", err, out)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.ContentLength != int64(len(body)) || !resp.Close || resp.StatusCode != status ||
			resp.Header.Get("X-Request-Id") == "" || !json.Valid(body) {
			t.Fatalf("incomplete or wrong answer (%v): %q", err, out)
		}
		if msg := problem(head, status, text); msg == "" || len(msg) > maxProblem+len("…") {
			t.Fatalf("problem of %q: %q", head, msg)
		}
	})
}

// anyone lets every request through as tenant t1 (shared/auth imports this
// package).
type anyone struct{}

func (anyone) Authenticate(*http.Request) (caller.Grant, error) {
	return caller.Grant{Tenant: "t1"}, nil
}
