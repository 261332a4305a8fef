//go:build linux || darwin || freebsd

package sysaudit

import (
	"fmt"
	"syscall"
)

// statfs returns the size and used bytes of the file system at path, as
// df counts them: used = (blocks - free blocks) * the unit blocks are
// counted in (blockUnit, which differs between systems).
func statfs(path string) (size, used uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	unit := blockUnit(&st)
	size = uint64(st.Blocks) * unit
	used = (uint64(st.Blocks) - uint64(st.Bfree)) * unit
	return size, used, nil
}
