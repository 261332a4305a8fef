package cache

import (
	"testing"

	"example.com/nav/store"
)

// Its references to Lookup, store.New and Map.Set are in a test file:
// left out on both sides.
func TestLookup(t *testing.T) {
	m := store.New()
	m.Set("a", "1")
	if got := Lookup(&Cached{Getter: m}, "a"); len(got) != 1 {
		t.Fatal(got)
	}
}
