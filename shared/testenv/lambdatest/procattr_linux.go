package lambdatest

import "syscall"

// dieWithParent makes the kernel kill the bootstrap if the test process
// dies without stopping it.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
