//go:build !linux

package lambdatest

import "syscall"

// dieWithParent has no portable equivalent outside Linux: Stop ends the
// bootstrap.
func dieWithParent() *syscall.SysProcAttr { return nil }
