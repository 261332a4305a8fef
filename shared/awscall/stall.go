package awscall

import (
	"context"
	"net"
	"time"
)

// stallDialer dials connections that fail when they make no progress for
// stall: the connection itself must be made within stall, and then every
// byte sent or received gives the attempt another stall. So a request or
// an answer that keeps moving, however slowly, is never cut, and one that
// stops is abandoned (and retried, by the SDK's retryer) after stall.
//
// The operating system's send buffer would hide a stall in sending (a
// write returns as soon as its bytes are buffered, and the buffer may hold
// seconds of a slow link), so the dialer also asks the system to hold
// little unsent data (limitUnsent): a write then returns about when its
// bytes leave, and the wait for the answer starts from there.
func stallDialer(stall time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: stall, KeepAlive: 30 * time.Second, Control: limitUnsent}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallConn{Conn: c, stall: stall}, nil
	}
}

// unsentBytes is how much sent data the system may hold before a write
// waits: a fraction of a second even on a slow link.
const unsentBytes = 64 << 10

// writeChunk is the most one write hands the connection at once, so a
// large write (a whole part of an upload) waits at most stall per chunk,
// not for all of it.
const writeChunk = 64 << 10

// stallConn is a connection whose reads and writes fail after stall
// without progress. Reading and writing both push the read deadline on:
// the transport reads (waiting for the answer) while the request is
// still being sent, and the answer is due within stall of the request's
// last byte.
type stallConn struct {
	net.Conn
	stall time.Duration
}

// Read waits at most stall for the next bytes.
func (c *stallConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.stall)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// Write sends p in chunks, each of which may wait at most stall.
func (c *stallConn) Write(p []byte) (int, error) {
	sent := 0
	for sent < len(p) {
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.stall)); err != nil {
			return sent, err
		}
		n, err := c.Conn.Write(p[sent:min(len(p), sent+writeChunk)])
		sent += n
		if err != nil {
			return sent, err
		}
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.stall)); err != nil {
			return sent, err
		}
	}
	return sent, nil
}
