// Command app looks a few keys up.
package main

import (
	"fmt"

	"example.com/nav/api"
	"example.com/nav/store"
)

func main() {
	s := store.New()
	s.Put("a", "1")
	fmt.Println(api.Lookup(s, "a"), api.Both(s, "a", "b"))
	fmt.Println(api.Any(store.Fixed("x"), "k"))
	v, _ := s.Get("a")
	fmt.Println(v)
}
