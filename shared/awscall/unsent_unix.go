//go:build linux || darwin

package awscall

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// limitUnsent asks the system to hold at most unsentBytes of data written
// to the connection and not yet sent (TCP_NOTSENT_LOWAT). A system that
// refuses (an old kernel) leaves the stall bound less precise, not broken.
func limitUnsent(network, address string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, unsentBytes)
	})
}
