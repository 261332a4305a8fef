//go:build !cgo

package symbols

import "io"

// Built without cgo (CGO_ENABLED=0, or no C compiler), this package has no
// tree-sitter: it finds symbols in Go files only, and the files of every
// language a tree-sitter grammar reads have none (Unread says
// NoTreeSitter). `make build` and `make run` build with cgo; see
// docs/deploy.md#symbols-and-cgo.

// hasTreeSitter: this build has no grammars.
const hasTreeSitter = false

// grammar stands for a tree-sitter grammar, of which there are none.
type grammar struct{}

func (*grammar) parse(string) []Symbol { return nil }

// grammarOf returns nil: no file is read with tree-sitter.
func grammarOf(string) *grammar { return nil }

// treeSitterVersion writes nothing: there is no tree-sitter (see
// parsersVersion).
func treeSitterVersion(io.Writer) {}
