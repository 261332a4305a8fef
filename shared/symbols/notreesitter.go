//go:build !cgo

package symbols

// Built without cgo (CGO_ENABLED=0, or no C compiler), this package has no
// tree-sitter: it finds symbols in Go files only, and TypeScript,
// JavaScript, Python, Java, Rust, C and C++ files have none. `make build`
// and `make run` build with cgo; see README, "Symbols and cgo".

// hasTreeSitter: this build reads none of treeSitterLanguages.
const hasTreeSitter = false

// grammar stands for a tree-sitter grammar, of which there are none.
type grammar struct{}

func (*grammar) parse(string) []Symbol { return nil }

// grammarOf returns nil: no file is read with tree-sitter.
func grammarOf(string, string) *grammar { return nil }

// parsersVersion names the parsers of this build (see storedFormat).
func parsersVersion() string { return "go" }
