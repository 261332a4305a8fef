package sysaudit

import "syscall"

// blockUnit is the size of the blocks st counts: its fragment size
// (f_frsize); f_bsize is only the preferred I/O size, which differs on
// NFS for example.
func blockUnit(st *syscall.Statfs_t) uint64 {
	if st.Frsize == 0 {
		return uint64(st.Bsize)
	}
	return uint64(st.Frsize)
}
