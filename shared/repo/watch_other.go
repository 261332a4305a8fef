//go:build !linux

package repo

// unwatchable says why file-system events cannot follow dir, or "": on
// this system every file system is taken to report its changes.
func unwatchable(dir string) string { return "" }
