package fromscip

import (
	"bufio"
	"fmt"
	"io"
)

// maxMessage bounds one message of the index (a document, the metadata,
// an external symbol): ParseStreaming holds each whole, so this is the
// most it allocates at once. A generated Go file of 100k lines makes a
// document of about 10 MB.
const maxMessage = 256 << 20

// The tags of scip.Index's three fields (numbers 1 to 3, each a
// length-delimited message): every top-level message starts with one.
const (
	tagMetadata = 1<<3 | 2
	tagDocument = 2<<3 | 2
	tagExternal = 3<<3 | 2
)

// guard passes a SCIP stream to ParseStreaming while reading its
// top-level framing (a tag byte, a length, the message) byte by byte
// itself, so that input that is not SCIP, is truncated, or declares a
// message larger than allowed is refused before ParseStreaming allocates
// for it (it would trust a length of any size).
type guard struct {
	r      *bufio.Reader
	max    int64 // 0: no bound
	n      int64 // bytes passed on
	header bool  // reading a message's length (after its tag)
	length uint64
	shift  uint
	body   uint64 // bytes of the current message left
	err    error
}

func newGuard(r io.Reader, max int64) *guard {
	return &guard{r: bufio.NewReaderSize(r, 1<<20), max: max}
}

// Read implements io.Reader: a tag or a length byte one at a time, a
// message's body up to its end.
func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if g.body > 0 {
		p = p[:min(uint64(len(p)), g.body)]
		n, err := g.r.Read(p)
		g.body -= uint64(n)
		g.n += int64(n)
		if err == io.EOF {
			err = g.fail(fmt.Errorf("%w: it ends in the middle of a message (at byte %d)", ErrNotSCIP, g.n))
		}
		return n, err
	}
	c, err := g.r.ReadByte()
	if err == io.EOF && g.header {
		err = fmt.Errorf("%w: it ends in the middle of a message (at byte %d)", ErrNotSCIP, g.n)
	}
	if err == nil && g.max > 0 && g.n >= g.max {
		err = fmt.Errorf("%w: over %d bytes", ErrTooLarge, g.max)
	}
	if err == nil {
		err = g.frame(c)
	}
	if err != nil {
		return 0, g.fail(err)
	}
	g.n++
	p[0] = c
	return 1, nil
}

func (g *guard) fail(err error) error {
	if err != io.EOF {
		g.err = err
	}
	return err
}

// frame reads a byte of a tag or of a length.
func (g *guard) frame(c byte) error {
	if !g.header {
		switch {
		case c == tagMetadata || c == tagDocument || c == tagExternal:
			g.header, g.length, g.shift = true, 0, 0
			return nil
		case g.n == 0 && c == 0x1f:
			return fmt.Errorf("%w: it is gzip-compressed (decompress it first)", ErrNotSCIP)
		}
		return fmt.Errorf("%w: byte %d (%#x) does not start an index field", ErrNotSCIP, g.n, c)
	}
	g.length |= uint64(c&0x7f) << g.shift
	g.shift += 7
	if c&0x80 != 0 {
		if g.shift > 63 { // ten bytes: the most a varint takes
			return fmt.Errorf("%w: a message length at byte %d does not end", ErrNotSCIP, g.n)
		}
		return nil
	}
	g.header = false
	switch {
	case g.length > maxMessage:
		return fmt.Errorf("%w: a message of %d bytes at byte %d (at most %d)", ErrTooLarge, g.length, g.n, maxMessage)
	case g.max > 0 && g.length > uint64(g.max-g.n-1):
		return fmt.Errorf("%w: over %d bytes", ErrTooLarge, g.max)
	}
	g.body = g.length
	return nil
}
