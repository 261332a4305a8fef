package store

// secretValue is in a file every repository view denies: no answer shows
// it, though the precise index was made with it.
func secretValue(m *Map) string {
	v, _ := m.Get("token")
	return v
}
