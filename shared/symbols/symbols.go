// Package symbols finds the definitions of source files — functions,
// methods, classes, interfaces, types, enums, constants, variables,
// fields, modules and macros — each with its name, kind, line and byte
// range, container (a method's receiver or class) and doc comment: one
// parse per file feeding the symbol table (Table), the outline of a file,
// references' definition marks and context_search's chunks
// (shared/codechunk cuts a file at File.Symbols: declarations with names
// and byte and line ranges, their doc comments apart).
//
// Which parser reads a file is shared/language's table's to say. Go files
// are read with go/parser (exact: every top-level declaration, struct
// fields and interface methods). TypeScript, JavaScript, Python, Java,
// Rust, C, C++, C#, Ruby, PHP and Kotlin are read with tree-sitter and tag
// queries (queries/*.scm): the grammars' own tags.scm, widened to fields,
// constants and variables (Kotlin's grammar has none: its query is ours).
// Tree-sitter is C, linked through cgo; a build without cgo
// (CGO_ENABLED=0) reads Go files only (see notreesitter.go and Missing).
// Unread says why a file has no symbols; a table counts the files of code
// it has none of (State.Unread), so that an answer can say what it did not
// read.
//
// A query captures a definition as @definition.<kind> with its name as
// @name (and, where the syntax says it, its container as @container); a
// @scope with a @name is a container that is not itself a symbol (a Rust
// impl block). The rules that are not the grammar's are the same for
// every language and live here:
//
//   - a symbol's container is the nearest symbol or scope whose range holds
//     it; a function whose container is a class, interface, type, enum or
//     scope is a method;
//   - a variable, constant or field inside a function or method is a local
//     and left out;
//   - its doc is the comments right above it (no blank line between;
//     attributes may stand between), or a Python docstring;
//   - when two patterns capture the same definition, the first one wins.
package symbols

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/repo"
)

// Kind is what a symbol defines.
type Kind string

// The kinds of symbol.
const (
	Function  Kind = "function"
	Method    Kind = "method"    // a function of a class, type, interface or impl; a Go function with a receiver
	Class     Kind = "class"     // classes, structs and unions
	Interface Kind = "interface" // interfaces, traits, annotation types
	Type      Kind = "type"      // other named types: aliases, typedefs, Go's non-struct types
	Enum      Kind = "enum"
	Constant  Kind = "constant"
	Variable  Kind = "variable"
	Field     Kind = "field" // a member of a class, struct, interface or enum
	Module    Kind = "module"
	Macro     Kind = "macro"
)

// Kinds lists every kind.
var Kinds = []Kind{Function, Method, Class, Interface, Type, Enum, Constant, Variable, Field, Module, Macro}

// Symbol is one definition in a file. Byte offsets index the file's text.
type Symbol struct {
	Name string // as written
	Kind Kind
	// Container is the name of the class, type, interface, impl or
	// function the symbol is defined in, or a Go method's receiver type;
	// "" at the top level.
	Container string
	// Parent is the index in File.Symbols of the symbol this one is
	// nested in, or -1: the outline's nesting. A Go method's receiver is
	// its Container, not its Parent.
	Parent int
	// Start and End are its first and last line, from 1.
	Start, End int
	// From and To are its bytes, doc comment excluded: text[From:To].
	From, To int
	// NameAt is the byte offset of the name; its line is the signature.
	NameAt int
	// DocFrom and DocTo are the bytes of its doc comment (or Python
	// docstring), markers included; equal when it has none.
	DocFrom, DocTo int
}

// File is what one parse found in one file.
type File struct {
	Path     string // slash separated, as given to Parse
	Language string // from shared/language
	// Symbols are in order of their start, a container before what it
	// holds. They index the text (Text).
	Symbols []Symbol

	text string     // the text parsed, when the File holds it
	src  *repo.File // else the repository file parsed (see detach)
}

// Text returns the text parsed. A table's File reads it again from its
// repository file at each call (see WithText).
func (f *File) Text() string {
	if f.src != nil {
		return f.src.Text()
	}
	return f.text
}

// Of reports whether f is what a parse of src's content found: the same
// content, told by its hash when f is a table's File (no text read).
func (f *File) Of(src *repo.File) bool {
	if f.src != nil {
		return f.src == src || f.src.Hash() == src.Hash()
	}
	return f.text == src.Text()
}

// WithText returns f holding its text: what to call Signature and Doc on
// for many symbols of a table's File.
func (f *File) WithText() *File {
	if f.src == nil {
		return f
	}
	held := *f
	held.text, held.src = f.src.Text(), nil
	return &held
}

// detach makes f, parsed from src's text, let go of that text: a table
// keeps the symbols of every file, not a copy of each file's text. When
// src holds it compressed (the text parsed was a copy), names and
// containers get their own copies, one per distinct string; otherwise they
// point into src's content, which src holds anyway (tree-sitter's), or are
// strings of their own already (go/ast's). The text is read again from src
// when asked for.
func (f *File) detach(src *repo.File) {
	f.text, f.src = "", src
	if !src.Compressed() {
		return
	}
	own := map[string]string{}
	owned := func(s string) string {
		if c, ok := own[s]; ok || s == "" {
			return c
		}
		own[s] = strings.Clone(s)
		return own[s]
	}
	for i := range f.Symbols {
		s := &f.Symbols[i]
		s.Name, s.Container = owned(s.Name), owned(s.Container)
	}
}

// Reason says why a file has no symbols.
type Reason string

// The reasons a file has no symbols (Unread).
const (
	// NoParser: its language has no parser (shared/language's table
	// names none), or the file is not code.
	NoParser Reason = "no-parser"
	// NoTreeSitter: its language is read with tree-sitter, which this
	// build lacks (it was built without cgo).
	NoTreeSitter Reason = "no-tree-sitter"
)

// Unread says why this build finds no symbols in the file at p (by its
// name), or "" when it finds them.
func Unread(p string) Reason {
	switch parser := language.ParserOf(p); {
	case parser == language.Go || grammarOf(parser) != nil:
		return ""
	case parser == "":
		return NoParser
	}
	return NoTreeSitter
}

// Supports reports whether this build finds symbols in the file at p
// (by its name).
func Supports(p string) bool { return Unread(p) == "" }

// Parse finds the symbols of the file at p with content text, or returns
// nil when Supports(p) is false. A file that does not parse yields what
// could be read of it.
func Parse(p, text string) *File {
	f := &File{Path: p, Language: language.Of(p), text: text}
	switch parser := language.ParserOf(p); {
	case parser == language.Go:
		f.Symbols = parseGo(text)
	case grammarOf(parser) != nil:
		f.Symbols = grammarOf(parser).parse(text)
	default:
		return nil
	}
	return f
}

// Languages lists the languages (shared/language's names) this build
// finds symbols in.
func Languages() []string {
	missing := Missing()
	return slices.DeleteFunc(language.WithParser(), func(l string) bool { return slices.Contains(missing, l) })
}

// Missing lists the languages a build with cgo finds symbols in and this
// one does not (none when built with cgo): those tree-sitter reads.
func Missing() []string {
	if hasTreeSitter {
		return nil
	}
	return slices.DeleteFunc(language.WithParser(), func(l string) bool { return l == language.Go })
}

// Signature returns the line of s's name, trimmed, without a trailing
// opening brace, cut to maxSignature bytes.
func (f *File) Signature(s Symbol) string {
	text := f.Text()
	start := strings.LastIndexByte(text[:s.NameAt], '\n') + 1
	end := strings.IndexByte(text[s.NameAt:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += s.NameAt
	}
	line := strings.TrimSpace(text[start:end])
	line = strings.TrimSpace(strings.TrimSuffix(line, "{"))
	return cut(line, maxSignature)
}

// Doc returns the first sentence of s's doc comment, or "".
func (f *File) Doc(s Symbol) string {
	if s.DocFrom == s.DocTo {
		return ""
	}
	return firstSentence(commentText(f.Text()[s.DocFrom:s.DocTo]))
}

// Limits of what Signature and Doc return.
const (
	maxSignature = 200
	maxDoc       = 300
)

// xmlDocTags are the tags of a C# XML doc comment that wrap its text.
var xmlDocTags = strings.NewReplacer("<summary>", "", "</summary>", "")

// commentText strips comment markers from a doc comment or docstring:
// "//", "///", "//!", "#", "/*", "/**", "*/", a leading "*" on each line,
// a docstring's quotes, and C#'s <summary> tags.
func commentText(raw string) string {
	raw = strings.TrimLeft(raw, "rRuUbB") // a Python string's prefix
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(raw, q) && strings.HasSuffix(raw, q) && len(raw) >= 2*len(q) {
			return raw[len(q) : len(raw)-len(q)]
		}
	}
	var b strings.Builder
	for line := range strings.Lines(raw) {
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(line, "*/")
		for _, marker := range []string{"///", "//!", "//", "/**", "/*!", "/*", "*", "#"} {
			if rest, ok := strings.CutPrefix(line, marker); ok {
				line = rest
				break
			}
		}
		b.WriteString(strings.TrimSpace(xmlDocTags.Replace(line)))
		b.WriteByte('\n')
	}
	return b.String()
}

// firstSentence returns the first sentence of a comment's text: up to the
// first period followed by a space (or the end), the first blank line, or
// the first line that starts a tag ("@param"), with whitespace collapsed
// and cut to maxDoc bytes.
func firstSentence(text string) string {
	var words []string
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" && len(words) > 0 || strings.HasPrefix(line, "@") {
			break
		}
		words = append(words, strings.Fields(line)...)
	}
	for i, w := range words {
		if strings.HasSuffix(w, ".") && i+1 < len(words) && startsSentence(words[i+1]) {
			words = words[:i+1]
			break
		}
	}
	return cut(strings.Join(words, " "), maxDoc)
}

// startsSentence reports whether a word can start a sentence: not an
// abbreviation's continuation ("e.g. this") but a capital or a digit.
func startsSentence(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || !unicode.IsLetter(r)
}

// cut shortens s to at most n bytes, at a rune boundary, marking the cut
// with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Items a query captures that are not symbols.
const (
	scope Kind = "scope" // a container that is not a symbol (a Rust impl block)
	local Kind = "local" // a function without a name: what it defines is local
)

// finish completes symbols found in text in any order: it sorts them (a
// container before what it holds), sets their lines, parents and
// containers, makes functions in classes methods, and leaves out locals,
// scopes and local regions.
func finish(text string, syms []Symbol) []Symbol {
	slices.SortStableFunc(syms, func(a, b Symbol) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return b.To - a.To // the larger holds the smaller
	})
	lines := lineStarts(text)
	out := make([]Symbol, 0, len(syms))
	// open holds the items (indexes in syms) enclosing the one in hand;
	// kept says where each kept symbol went in out (-1: left out).
	var open []int
	kept := make([]int, len(syms))
	for i := range syms {
		s := &syms[i]
		for len(open) > 0 && !holds(syms[open[len(open)-1]], *s) {
			open = open[:len(open)-1]
		}
		s.Parent, kept[i] = -1, -1
		isLocal := false
		if len(open) > 0 {
			nearest := syms[open[len(open)-1]].Kind
			isLocal = nearest == Function || nearest == Method || nearest == local
		}
		for j := len(open) - 1; j >= 0; j-- {
			outer := syms[open[j]]
			if s.Container == "" && outer.Kind != local {
				s.Container = outer.Name
				if s.Kind == Function && slices.Contains([]Kind{scope, Class, Interface, Type, Enum}, outer.Kind) {
					s.Kind = Method
				}
			}
			if s.Parent < 0 {
				s.Parent = kept[open[j]]
			}
		}
		open = append(open, i)
		switch {
		case s.Kind == scope || s.Kind == local:
			continue
		case isLocal && (s.Kind == Variable || s.Kind == Constant || s.Kind == Field):
			continue
		}
		s.Start, s.End = lineOf(lines, s.From), lineOf(lines, max(s.From, s.To-1))
		kept[i] = len(out)
		out = append(out, *s)
	}
	return out
}

// holds reports whether outer's range holds s's (s starts no earlier: see
// finish's order); two names of one declaration ("x, y int") are siblings.
func holds(outer, s Symbol) bool {
	return s.From < outer.To && s.To <= outer.To && (outer.From != s.From || outer.To != s.To)
}

// lineStarts returns the byte offset where each line of text starts.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf returns the line (from 1) holding byte offset at.
func lineOf(starts []int, at int) int {
	i, found := slices.BinarySearch(starts, at)
	if found {
		return i + 1
	}
	return i
}
