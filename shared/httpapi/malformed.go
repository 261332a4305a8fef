package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// net/http refuses some requests before any handler sees them — a path
// with a bad escape (/v1/tools/%zz), a malformed request line or header,
// headers over the limit — and answers them itself in text/plain, most of
// them with a bare "400 Bad Request". Listener turns those answers into the
// JSON error of the route the request was aimed at, like every other
// refusal, saying what is wrong with the request (see problem).

// Listener returns ln whose connections have net/http's own refusals
// answered by h (a handler from New) in JSON: the status net/http chose,
// the envelope of the route named in the request line, an X-Request-Id.
func Listener(ln net.Listener, h http.Handler) net.Listener {
	return &jsonListener{Listener: ln, h: h}
}

type jsonListener struct {
	net.Listener
	h http.Handler
}

func (l *jsonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c, h: l.h}, nil
}

// refusalHeaders mark net/http's own refusals: the server writes them, with
// the status line before and a short text after, in one Write, and then
// closes the connection. No handler here answers in text/plain.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// headLimit bounds what a connection keeps of the request being read.
const headLimit = 4 << 10

// jsonConn keeps the start of the request being read (what came in since
// the last answer) to know where a request net/http refuses was aimed.
type jsonConn struct {
	net.Conn
	h    http.Handler
	mu   sync.Mutex
	head []byte
}

func (c *jsonConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	if keep := min(n, headLimit-len(c.head)); keep > 0 {
		c.head = append(c.head, p[:keep]...)
	}
	c.mu.Unlock()
	return n, err
}

// Write sends what the server writes, but for net/http's own refusal,
// which it replaces with the handler's answer. Either way the next request
// starts a new head.
func (c *jsonConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	head := c.head
	c.head = c.head[:0]
	status, text, refused := parseRefusal(p)
	if refused {
		head = bytes.Clone(head)
	}
	c.mu.Unlock()
	if !refused {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(c.answer(head, status, text)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxRefusal bounds the writes that may be a refusal of net/http (a status
// line, the refusalHeaders and a line of text), so that answers, however
// large, pass without being searched.
const maxRefusal = 512

// parseRefusal reads net/http's own refusal: its status and text.
func parseRefusal(p []byte) (status int, text string, ok bool) {
	if len(p) > maxRefusal || !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return 0, "", false
	}
	line, rest, found := bytes.Cut(p, []byte(refusalHeaders))
	code, _, _ := strings.Cut(strings.TrimPrefix(string(line), "HTTP/1.1 "), " ")
	status, err := strconv.Atoi(code)
	if !found || err != nil || status < 400 {
		return 0, "", false
	}
	return status, string(rest), true
}

// malformedKey marks a request stand-in for one net/http refused, carrying
// what ServeHTTP answers (a malformed).
type malformedKey struct{}

type malformed struct {
	status int
	err    *toolerr.Error
}

// answer is the whole HTTP response to a request net/http refused with
// status and text: the handler's answer to a stand-in with the method and
// path of the request line in head, with the connection closing after it.
func (c *jsonConn) answer(head []byte, status int, text string) []byte {
	method, path := requestLine(head)
	code := toolerr.InvalidInput
	if status == http.StatusRequestHeaderFieldsTooLarge {
		code = toolerr.SizeLimitExceeded
	}
	bad := malformed{status, toolerr.New(code, "malformed HTTP request: %s", problem(head, status, text))}
	r := &http.Request{Method: method, URL: &url.URL{Path: path}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, RemoteAddr: c.RemoteAddr().String()}
	r = r.WithContext(context.WithValue(context.Background(), malformedKey{}, bad))
	rec := &bufferedWriter{header: http.Header{}}
	c.h.ServeHTTP(rec, r)

	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\n", rec.status, http.StatusText(rec.status))
	rec.header.Set("Connection", "close")
	rec.header.Set("Content-Length", strconv.Itoa(rec.body.Len()))
	rec.header.Write(&out)
	out.WriteString("\r\n")
	out.Write(rec.body.Bytes())
	return out.Bytes()
}

// maxProblem bounds the description of a problem (net/http's errors quote
// the offending line, which may be long).
const maxProblem = 200

// problem says what is wrong with the request at the start of head, which
// net/http refused with status and text (what its answer said): the text's
// own words when they name the problem ("400 Bad Request: missing required
// Host header"), else the error of reading head again with
// http.ReadRequest — the parser net/http ran, which says which header or
// escape it could not read — and a general description when head is too
// short to tell (its request line and headers are over headLimit).
func problem(head []byte, status int, text string) string {
	if status == http.StatusRequestHeaderFieldsTooLarge {
		return "the request line and headers are larger than the server accepts"
	}
	if _, detail, ok := strings.Cut(strings.TrimSpace(text), ": "); ok {
		return detail
	}
	_, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the request line or a header cannot be read"
	}
	msg := strings.TrimPrefix(err.Error(), "http: ")
	if len(msg) > maxProblem {
		msg = strings.ToValidUTF8(msg[:maxProblem], "") + "…"
	}
	return msg
}

// requestLine reads the method and the path (undecoded, without the query)
// of the request line at the start of head; "GET /" when there is none.
func requestLine(head []byte) (method, path string) {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "/") {
		return http.MethodGet, "/"
	}
	path, _, _ = strings.Cut(fields[1], "?")
	return fields[0], path
}
