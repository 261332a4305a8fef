//go:build !(linux || darwin || freebsd)

package sysaudit

import (
	"errors"
	"runtime"
)

// statfs is not implemented on this system; disks are then reported as [].
func statfs(path string) (size, used uint64, err error) {
	return 0, 0, errors.New("statfs " + path + ": not supported on " + runtime.GOOS)
}
