package lambdatest

import "syscall"

// procAttr puts the bootstrap in a process group of its own (what a
// freeze without a cgroup stops) and makes the kernel kill it if the test
// process dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
