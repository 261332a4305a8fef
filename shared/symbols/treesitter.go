//go:build cgo

package symbols

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unsafe"

	tskotlin "github.com/tree-sitter-grammars/tree-sitter-kotlin/bindings/go"
	ts "github.com/tree-sitter/go-tree-sitter"
	tscsharp "github.com/tree-sitter/tree-sitter-c-sharp/bindings/go"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
	tscpp "github.com/tree-sitter/tree-sitter-cpp/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tsphp "github.com/tree-sitter/tree-sitter-php/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsruby "github.com/tree-sitter/tree-sitter-ruby/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// queryFiles are the tag queries, one or more per grammar.
//
//go:embed queries/*.scm
var queryFiles embed.FS

// hasTreeSitter: this build has the grammars.
const hasTreeSitter = true

// grammars are the tree-sitter grammars by the parser names of
// shared/language's table (every one it names but language.Go;
// TestGrammars checks), each with its query files.
var grammars = map[string]*grammar{
	"typescript": newGrammar(tsts.LanguageTypescript(), "ecmascript", "typescript"),
	"tsx":        newGrammar(tsts.LanguageTSX(), "ecmascript", "typescript"),
	"javascript": newGrammar(tsjs.Language(), "ecmascript", "javascript"),
	"python":     newGrammar(tspython.Language(), "python"),
	"java":       newGrammar(tsjava.Language(), "java"),
	"rust":       newGrammar(tsrust.Language(), "rust"),
	"c":          newGrammar(tsc.Language(), "c"),
	"cpp":        newGrammar(tscpp.Language(), "c", "cpp"),
	"csharp":     newGrammar(tscsharp.Language(), "csharp"),
	"ruby":       newGrammar(tsruby.Language(), "ruby"),
	"php":        newGrammar(tsphp.LanguagePHP(), "php"),
	"kotlin":     newGrammar(tskotlin.Language(), "kotlin"),
}

// grammarOf returns the grammar named parser, or nil.
func grammarOf(parser string) *grammar { return grammars[parser] }

// wrappers are the nodes that wrap a definition with what belongs to it
// (export, decorators, template parameters, the statement around a
// declarator): its doc comment stands above the wrapper.
var wrappers = map[string]bool{
	"export_statement": true, "lexical_declaration": true, "variable_declaration": true,
	"expression_statement": true, "ambient_declaration": true, "decorated_definition": true,
	"template_declaration": true,
}

// pythonDefinitions are the nodes whose body may start with a docstring.
var pythonDefinitions = map[string]bool{"function_definition": true, "class_definition": true}

// grammar is a tree-sitter language with its tag query, compiled on
// first use.
type grammar struct {
	language *ts.Language
	files    []string // under queries/, without .scm
	compile  func() *compiled
}

// compiled is a grammar's query with its capture names and the kind each
// stands for (see captureKind).
type compiled struct {
	query    *ts.Query
	captures []string
	kinds    []Kind
}

func newGrammar(lang unsafe.Pointer, files ...string) *grammar {
	g := &grammar{language: ts.NewLanguage(lang), files: files}
	g.compile = sync.OnceValue(func() *compiled {
		c, err := g.newQuery()
		if err != nil {
			panic(err) // the queries are part of the program: TestFixtures compiles each
		}
		return c
	})
	return g
}

// newQuery compiles the grammar's query files.
func (g *grammar) newQuery() (*compiled, error) {
	var src strings.Builder
	for _, name := range g.files {
		b, err := queryFiles.ReadFile("queries/" + name + ".scm")
		if err != nil {
			return nil, err
		}
		src.Write(b)
	}
	q, qerr := ts.NewQuery(g.language, src.String())
	if qerr != nil {
		return nil, fmt.Errorf("symbols: query %v: %w", g.files, qerr)
	}
	c := &compiled{query: q, captures: q.CaptureNames()}
	for _, name := range c.captures {
		kind, err := captureKind(name)
		if err != nil {
			return nil, fmt.Errorf("symbols: query %v: %w", g.files, err)
		}
		c.kinds = append(c.kinds, kind)
	}
	return c, nil
}

// captureKind returns the kind a capture name stands for: the kind of a
// @definition.<kind>, scope or local, or "" for @name and @container.
func captureKind(name string) (Kind, error) {
	switch name {
	case "name", "container":
		return "", nil
	case "scope":
		return scope, nil
	case "local":
		return local, nil
	}
	k, ok := strings.CutPrefix(name, "definition.")
	if !ok || !slices.Contains(Kinds, Kind(k)) {
		return "", fmt.Errorf("unknown capture @%s", name)
	}
	return Kind(k), nil
}

// parse finds the symbols of text.
func (g *grammar) parse(text string) []Symbol {
	c := g.compile()
	parser := ts.NewParser()
	defer parser.Close()
	if err := parser.SetLanguage(g.language); err != nil {
		panic(err) // a grammar built for another tree-sitter version: the build is wrong
	}
	// Tree-sitter only reads the text: no copy of it is needed.
	src := unsafe.Slice(unsafe.StringData(text), len(text))
	tree := parser.Parse(src, nil)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	cursor := ts.NewQueryCursor()
	defer cursor.Close()

	// A definition two patterns capture is the first pattern's.
	type key struct{ from, to, name int }
	found := map[key]int{} // → index in syms
	var syms []Symbol
	var patterns []uint // of each symbol
	matches := cursor.Matches(c.query, tree.RootNode(), src)
	for m := matches.Next(); m != nil; m = matches.Next() {
		s, def, ok := g.symbol(c, m, text)
		if !ok {
			continue
		}
		k := key{s.From, s.To, s.NameAt}
		if i, dup := found[k]; dup {
			if m.PatternIndex < patterns[i] {
				syms[i], patterns[i] = s, m.PatternIndex
			}
			continue
		}
		if s.Kind != scope && s.Kind != local {
			s.DocFrom, s.DocTo = docRange(def, text)
		}
		found[k] = len(syms)
		syms = append(syms, s)
		patterns = append(patterns, m.PatternIndex)
	}
	return finish(text, syms)
}

// symbol reads one match: the symbol, scope or local region it captures
// and its definition node. ok is false for a match without a definition,
// or a definition without a name (or with an empty one).
func (g *grammar) symbol(c *compiled, m *ts.QueryMatch, text string) (s Symbol, def ts.Node, ok bool) {
	var name, container *ts.Node
	found := false
	for _, capture := range m.Captures {
		switch c.captures[capture.Index] {
		case "name":
			name = &capture.Node
		case "container":
			container = &capture.Node
		default:
			def, s.Kind, found = capture.Node, c.kinds[capture.Index], true
		}
	}
	if !found || name == nil && s.Kind != local {
		return Symbol{}, def, false
	}
	s.From, s.To = int(def.StartByte()), int(def.EndByte())
	s.NameAt = s.From
	if name != nil {
		s.Name, s.NameAt = text[name.StartByte():name.EndByte()], int(name.StartByte())
		if s.Name == "" {
			return Symbol{}, def, false // a name the parser made up to recover from an error
		}
	}
	if container != nil {
		s.Container = text[container.StartByte():container.EndByte()]
	}
	return s, def, true
}

// docRange returns the bytes of def's doc: a Python docstring (the string
// its body starts with), or the comments right above it (or above the
// wrapper it is in), with no blank line between; attributes may stand
// between. A comment about the enclosing module (//!) is no item's doc. from == to when it has none.
func docRange(def ts.Node, text string) (from, to int) {
	if body := def.ChildByFieldName("body"); body != nil && pythonDefinitions[def.Kind()] {
		if first := body.NamedChild(0); first != nil && first.Kind() == "expression_statement" && first.NamedChildCount() == 1 {
			if str := first.NamedChild(0); str.Kind() == "string" {
				return int(str.StartByte()), int(str.EndByte())
			}
		}
	}
	n := &def
	for parent := n.Parent(); parent != nil && wrappers[parent.Kind()]; parent = n.Parent() {
		n = parent
	}
	from, to = -1, -1
	start := int(n.StartByte())
	for prev := n.PrevSibling(); prev != nil; prev = prev.PrevSibling() {
		kind := prev.Kind()
		if kind == "attribute_item" {
			start = int(prev.StartByte())
			continue
		}
		if !strings.Contains(kind, "comment") || inner(text[prev.StartByte():]) ||
			!adjacent(text, int(prev.StartByte()), int(prev.EndByte()), start) {
			break
		}
		if to < 0 {
			to = int(prev.EndByte())
		}
		from, start = int(prev.StartByte()), int(prev.StartByte())
	}
	if from < 0 {
		return 0, 0
	}
	return from, from + len(strings.TrimRight(text[from:to], "\n"))
}

// inner reports whether a comment documents what it is in, not what
// follows it (Rust's //! and /*!).
func inner(comment string) bool {
	return strings.HasPrefix(comment, "//!") || strings.HasPrefix(comment, "/*!")
}

// adjacent reports whether the comment text[from:to] stands on lines of
// its own right above start: code before it on its line, or a blank line
// between, make it another line's comment. (A Rust line comment ends with
// its newline.)
func adjacent(text string, from, to, start int) bool {
	lineStart := strings.LastIndexByte(text[:from], '\n') + 1
	if strings.TrimSpace(text[lineStart:from]) != "" {
		return false
	}
	gap := text[to:start]
	newlines := strings.Count(gap, "\n")
	if strings.HasSuffix(text[from:to], "\n") {
		newlines++
	}
	return strings.TrimSpace(gap) == "" && newlines <= 1
}

// treeSitterVersion writes what this build's tree-sitter parses depend on
// (see parsersVersion): the versions of the tree-sitter modules it is
// built with, from its module list, and the tag queries.
func treeSitterVersion(w io.Writer) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			if strings.HasPrefix(m.Path, "github.com/tree-sitter") {
				fmt.Fprintln(w, m.Path, m.Version, m.Sum)
			}
		}
	}
	names, _ := fs.Glob(queryFiles, "queries/*.scm") // the pattern is valid
	for _, n := range names {
		b, _ := queryFiles.ReadFile(n) // embedded: it is there
		fmt.Fprintf(w, "%s %d\n", n, len(b))
		w.Write(b)
	}
}
