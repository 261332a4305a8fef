//go:build !unix

package githistory

// freeBytes does not know the free space on this system: the copy is not
// checked against it.
func freeBytes(string) (int64, bool) { return 0, false }
