//go:build !linux

package lambdatest

import "syscall"

// procAttr puts the bootstrap in a process group of its own (what a
// freeze without a cgroup stops). Dying with the parent has no portable
// equivalent outside Linux: Stop ends the bootstrap.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
