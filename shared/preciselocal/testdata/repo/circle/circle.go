// Package circle is the round shape.
package circle

import "example.com/shapes"

// Circle is a shape of a radius.
type Circle struct{ R float64 }

// Area is about πr².
func (c Circle) Area() float64 { return 3 * c.R * c.R }

var _ shapes.Shape = Circle{}
