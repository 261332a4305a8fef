//go:build !(linux || darwin)

package awscall

import "syscall"

// limitUnsent does nothing here: the system offers no TCP_NOTSENT_LOWAT,
// so the last buffered bytes of a request on a slow link count against
// the wait for its answer.
func limitUnsent(network, address string, c syscall.RawConn) error { return nil }
