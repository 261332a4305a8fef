// Package consumer uses the store of another repository.
package consumer

import "example.com/nav/store"

// Fetch gets key from a new store.
func Fetch(key string) string {
	v, _ := store.New().Get(key)
	return v
}
