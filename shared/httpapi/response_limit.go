package httpapi

import (
	"bytes"
	"net/http"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// bufferedWriter holds a response until the handler is done, so that its
// size can be checked before anything is sent.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// serveLimited runs the routes with the response held back; a response
// whose body, encoded the way the Lambda runtime sends it, would exceed
// MaxResponse is replaced by SIZE_LIMIT_EXCEEDED in the route's envelope.
func (s *server) serveLimited(w http.ResponseWriter, r *http.Request) {
	buf := &bufferedWriter{header: http.Header{}}
	for k, v := range w.Header() {
		buf.header[k] = v
	}
	s.mux.ServeHTTP(buf, r)
	if n := EncodedLen(buf.body.Bytes()); n > s.cfg.MaxResponse {
		s.fail(w, r, http.StatusRequestEntityTooLarge, toolerr.New(toolerr.SizeLimitExceeded,
			"the response would be %d bytes; a Lambda function answers at most %d: ask for less", n, s.cfg.MaxResponse).
			With("bytes", n).With("limitBytes", s.cfg.MaxResponse))
		return
	}
	h := w.Header()
	for k, v := range buf.header {
		h[k] = v
	}
	if buf.status == 0 {
		buf.status = http.StatusOK
	}
	w.WriteHeader(buf.status)
	w.Write(buf.body.Bytes())
}

// EncodedLen is the length of b once encoded as a JSON string the way
// encoding/json does it (HTML characters escaped, invalid UTF-8 replaced):
// how much room a response body takes in an API Gateway proxy response, or
// a result in a direct invocation's answer.
func EncodedLen(b []byte) int {
	n := 2 // the quotes
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
