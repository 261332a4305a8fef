// Package store keeps values by key.
package store

import "sync"

// Getter is anything values can be read from.
type Getter interface {
	Get(key string) (string, bool)
}

// Map is a Getter over a map, safe for concurrent use.
type Map struct {
	mu   sync.Mutex
	data map[string]string
}

// New returns an empty Map.
func New() *Map { return &Map{data: map[string]string{}} }

// Get returns the value of key.
func (m *Map) Get(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[key]
	return v, ok
}

// Set stores value under key.
func (m *Map) Set(key, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[key] = value
}

// Pair is two values.
type Pair[K comparable, V any] struct {
	Key   K
	Value V
}

// Swap returns p with its halves swapped.
func Swap[K, V comparable](p Pair[K, V]) Pair[V, K] {
	return Pair[V, K]{Key: p.Value, Value: p.Key}
}
