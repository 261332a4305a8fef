// Package cache counts the hits of a store.Getter.
package cache

import "example.com/nav/store"

// Cached is a Getter that counts its hits.
type Cached struct {
	store.Getter
	Hits int
}

// Get is the Getter's Get, counted.
func (c *Cached) Get(key string) (string, bool) {
	v, ok := c.Getter.Get(key)
	if ok {
		c.Hits++
	}
	return v, ok
}

// Lookup returns the values of keys g has, each after an arrow.
func Lookup(g store.Getter, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if v, ok := g.Get(k); ok {
			out = append(out, "→"+v) // a multi-byte rune before v: columns are bytes
		}
	}
	return out
}

// Flipped swaps a pair of the store's.
func Flipped(p store.Pair[string, int]) store.Pair[int, string] {
	return store.Swap(p)
}
