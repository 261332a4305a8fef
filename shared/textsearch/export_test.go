package textsearch

// Window returns the size of q's windows.
func Window(q *Query) int { return q.window }

// SetWindow sets the size of q's windows, to test windowing with small
// ones.
func SetWindow(q *Query, n int) { q.window = n }

// OnWindow has f told the size of every window searched from now until
// the returned function is called. Not safe during a Search.
func OnWindow(f func(n int)) (restore func()) {
	windowSearched = f
	return func() { windowSearched = nil }
}
