package repo

import (
	"os"

	"golang.org/x/sys/unix"
)

// noLinks reports whether the kernel walks name inside dir without passing
// a symbolic link: one openat2 call (Linux 5.6 and later) with
// RESOLVE_NO_SYMLINKS answers what following name element by element
// would. A walk that stops at a missing element or a file passed no link
// either. It returns false when a link is on the way, and when the kernel
// cannot tell (an older kernel, a system-call filter).
func noLinks(dir *os.File, name string) bool {
	conn, err := dir.SyscallConn()
	if err != nil {
		return false
	}
	free := false
	conn.Control(func(fd uintptr) { // holds dir open during the call
		f, err := unix.Openat2(int(fd), name, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
		})
		if err == nil {
			unix.Close(f)
		}
		free = err == nil || err == unix.ENOENT || err == unix.ENOTDIR
	})
	return free
}
