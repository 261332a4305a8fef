package sysaudit

import (
	"fmt"
	"syscall"
)

// statfs returns the size and used bytes of the file system at path, as
// df counts them: used = (blocks - free blocks) * fragment size.
func statfs(path string) (size, used uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	// Blocks are counted in fragments (f_frsize); f_bsize is only the
	// preferred I/O size, which differs on NFS for example.
	unit := uint64(st.Frsize)
	if unit == 0 {
		unit = uint64(st.Bsize)
	}
	size = uint64(st.Blocks) * unit
	used = (uint64(st.Blocks) - uint64(st.Bfree)) * unit
	return size, used, nil
}
