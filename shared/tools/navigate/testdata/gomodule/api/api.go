// Package api answers requests from a store.
package api

import (
	"fmt"
	"strings"

	"example.com/nav/store"
)

// Lookup answers the value of key in s, or "none".
func Lookup(s *store.Map, key string) string {
	if v, ok := s.Get(key); ok {
		return v
	}
	return "none"
}

// Both answers the values of two keys.
func Both(s *store.Map, a, b string) string {
	x, _ := s.Get(a)
	y, _ := s.Get(b)
	return strings.Join([]string{x, y}, ",")
}

// Any answers from any Getter.
func Any(g store.Getter, key string) string {
	v, _ := g.Get(key)
	return fmt.Sprint(v)
}
