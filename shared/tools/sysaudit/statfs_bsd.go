//go:build darwin || freebsd

package sysaudit

import "syscall"

// blockUnit is the size of the blocks st counts: its block size.
func blockUnit(st *syscall.Statfs_t) uint64 {
	return uint64(st.Bsize)
}
