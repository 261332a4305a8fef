// Package text is a vendored dependency of the fixture: its files are in
// the module's vendor folder only, never in the module cache.
package text

// Builder joins strings.
type Builder struct {
	parts []string
}

// New is an empty Builder.
func New() *Builder { return &Builder{} }

// Add appends s.
func (b *Builder) Add(s string) *Builder {
	b.parts = append(b.parts, s)
	return b
}

// Len is the number of strings added.
func (b *Builder) Len() int { return len(b.parts) }
