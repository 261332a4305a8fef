// Package app uses the vendored package example.com/dep/text.
package app

import "example.com/dep/text"

// Greeting builds a greeting with the vendored Builder.
func Greeting() int {
	var b *text.Builder = text.New()
	return b.Add("hello").Add("world").Len()
}
