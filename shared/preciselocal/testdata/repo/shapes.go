// Package shapes measures shapes.
package shapes

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Total adds the areas of shapes.
func Total(shapes ...Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}
