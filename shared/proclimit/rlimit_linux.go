package proclimit

import "golang.org/x/sys/unix"

// GoReservedAddressSpace is added to the memory limit in RLIMIT_AS: Go's
// runtime reserves address space it touches little of (page summaries and
// the arena map when it starts, more as the heap grows). Measured with Go
// 1.26 on linux/amd64: a program under RLIMIT_AS of N holds about
// N - 1.2 GB of heap, and one under 800 MB does not start.
const GoReservedAddressSpace = 1280 << 20

// LimitAddressSpace holds the Go program of process pid to about
// memoryBytes of memory by RLIMIT_AS, for where no cgroup may be made:
// past it an allocation fails and the Go runtime exits ("fatal error:
// out of memory"), where a cgroup would have had it killed.
func LimitAddressSpace(pid int, memoryBytes int64) error {
	n := uint64(memoryBytes + GoReservedAddressSpace)
	return unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n}, nil)
}
