// Package store keeps values by key.
package store

// Getter is anything that gets values by key.
type Getter interface {
	// Get returns the value of key.
	Get(key string) (string, bool)
}

// Map is a Getter over a map.
type Map struct{ m map[string]string }

// New makes an empty Map.
func New() *Map { return &Map{m: map[string]string{}} }

// Get returns the value of key in s.
func (s *Map) Get(key string) (string, bool) {
	v, ok := s.m[key]
	return v, ok
}

// Put sets key to value.
func (s *Map) Put(key, value string) { s.m[key] = value }

// Fixed answers the same value for every key.
type Fixed string

// Get returns f, whatever the key.
func (f Fixed) Get(string) (string, bool) { return string(f), true }
