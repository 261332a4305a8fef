package secretscan

import (
	"fmt"
	"io"
)

// Found is the error of a Reader whose stream holds a secret.
type Found struct {
	Rule *ContentRule
}

func (f *Found) Error() string { return "it " + f.Reason() }

// Reason says what was found, naming the rule: "holds a private key block
// (rule private-key)".
func (f *Found) Reason() string { return fmt.Sprintf("holds %s (rule %s)", f.Rule.What, f.Rule.ID) }

// readChunk is how much a Reader reads from its source at a time.
const readChunk = 32 << 10

// Reader passes on the bytes of a stream once they are checked: a byte
// is passed on only when no content rule matches at or before it, which
// it knows once it has read maxMatch bytes past it (or the end). When a
// rule matches, Read fails with a *Found, and nothing from the match on
// has been passed on. What it holds back is at most maxMatch plus one
// read; it passes on the stream exactly when Find would find nothing in
// the whole of it.
type Reader struct {
	r    io.Reader
	buf  []byte // the last byte passed on (context for the next check), then what is not passed on yet
	from int    // where the bytes not passed on start in buf
	safe int    // buf[from:safe] is checked
	err  error  // r's error (io.EOF at its end: the rest is checked at once; after another, nothing more is passed on), or a *Found
}

// NewReader returns the Reader of r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

func (c *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for c.safe == c.from {
		if c.err != nil {
			return 0, c.err
		}
		c.fill()
	}
	n := copy(p, c.buf[c.from:c.safe])
	c.from += n
	return n, nil
}

// fill reads on, and checks what it can.
func (c *Reader) fill() {
	if keep := max(c.from-1, 0); keep > 0 { // drop what was passed on, but its last byte
		c.buf = append(c.buf[:0], c.buf[keep:]...)
		c.from, c.safe = c.from-keep, c.safe-keep
	}
	n := len(c.buf)
	if cap(c.buf)-n < readChunk {
		c.buf = append(c.buf, make([]byte, readChunk)...)[:n]
	}
	m, err := c.r.Read(c.buf[n : n+readChunk])
	c.buf = c.buf[:n+m]
	if err != nil {
		c.err = err
	}
	to := len(c.buf) - maxMatch // a match starting before it is decided
	if c.err == io.EOF {
		to = len(c.buf) // and at the end, every match is
	}
	if to <= c.safe {
		return
	}
	if rule := find(c.buf, c.safe, to); rule != nil {
		c.err, c.safe = &Found{Rule: rule}, c.from
		return
	}
	c.safe = to
}
