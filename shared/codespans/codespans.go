// Package codespans finds the comments and string literals of a source
// file, so that a search for an identifier can leave them out (what
// find_references' excludeComments and excludeStrings do). Go files are
// read with go/scanner, exactly; files of the other languages it knows are
// read with a small lexer that knows their comment and quote syntax (line
// and block comments, quotes with backslash escapes, Python's triple
// quotes, character literals), which is right for ordinary code and
// cheap enough to run over every file a search touches. Language names are
// shared/language's.
package codespans

import (
	"bytes"
	"go/scanner"
	"go/token"
	"slices"
	"unicode/utf8"
)

// Kind is what a span is.
type Kind uint8

// The kinds of span.
const (
	Comment Kind = iota + 1
	String
)

// Span is a comment or a string literal: the bytes [Start, End) of the
// file, delimiters included.
type Span struct {
	Start, End int
	Kind       Kind
}

// Knows reports whether Of finds spans in files of language lang.
func Knows(lang string) bool {
	_, ok := syntaxes[lang]
	return ok || lang == "go"
}

// Of returns the spans of src, a file in language lang, in order and not
// overlapping; nil for a language it does not know (see Knows).
func Of(lang string, src []byte) []Span {
	if lang == "go" {
		return goSpans(src)
	}
	if s, ok := syntaxes[lang]; ok {
		return s.spans(src)
	}
	return nil
}

// At returns the kind of the span of spans (as Of returns them) that holds
// the byte at offset i, or 0 when none does.
func At(spans []Span, i int) Kind {
	j, _ := slices.BinarySearchFunc(spans, i, func(s Span, i int) int {
		switch {
		case s.End <= i:
			return -1
		case s.Start > i:
			return 1
		}
		return 0
	})
	if j < len(spans) && spans[j].Start <= i && i < spans[j].End {
		return spans[j].Kind
	}
	return 0
}

// goSpans reads Go with go/scanner: comments, and string and rune literals.
func goSpans(src []byte) []Span {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	var out []Span
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		kind := Kind(0)
		switch tok {
		case token.COMMENT:
			kind = Comment
		case token.STRING, token.CHAR:
			kind = String
		}
		if kind == 0 {
			continue
		}
		start := file.Offset(pos)
		end := start + len(lit)
		if kind == Comment && bytes.HasPrefix(src[start:], []byte("//")) {
			// The scanner drops a line comment's "\r"; its span ends at the line's end.
			if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
				end = start + i
			} else {
				end = len(src)
			}
		}
		out = append(out, Span{Start: start, End: min(end, len(src)), Kind: kind})
	}
}

// syntax is how a language writes comments and strings.
type syntax struct {
	line   []string    // starts of line comments ("//", "#")
	block  [][2]string // block comment delimiters
	quotes string      // characters that delimit strings
	multi  string      // quotes whose strings may span lines (JavaScript's template literals)
	triple bool        // Python's """ and ''' strings
	char   bool        // ' delimits one character (C, Java, Rust), and is not a quote otherwise (Rust's lifetimes)
}

var (
	cLike  = syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: `"'`, char: true}
	hashes = syntax{line: []string{"#"}, quotes: `"'`}
)

// syntaxes are the languages the lexer reads, by shared/language's names.
var syntaxes = map[string]syntax{
	"typescript": {line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`", multi: "`"},
	"javascript": {line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`", multi: "`"},
	"java":       cLike, "c": cLike, "cpp": cLike, "csharp": cLike, "rust": cLike,
	"kotlin": cLike, "scala": cLike, "swift": cLike,
	"php":    {line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}, quotes: `"'`},
	"python": {line: []string{"#"}, quotes: `"'`, triple: true},
	"shell":  hashes, "ruby": hashes, "yaml": hashes, "toml": hashes, "makefile": hashes, "dockerfile": hashes,
	"sql": {line: []string{"--"}, block: [][2]string{{"/*", "*/"}}, quotes: `"'`},
}

// maxCharLiteral bounds an escaped character literal ('\n', '\u{1F600}').
const maxCharLiteral = 12

// charLiteral returns the length of the character literal rest starts
// with: one character, or a backslash escape, between single quotes. A '
// that starts none (a Rust lifetime, 'a) is no literal.
func charLiteral(rest []byte) (int, bool) {
	if len(rest) > 1 && rest[1] == '\\' {
		end, closed := closing(rest, '\'', false)
		return end, closed && end <= maxCharLiteral
	}
	_, size := utf8.DecodeRune(rest[1:])
	if n := 1 + size; len(rest) > n && rest[n] == '\'' && rest[1] != '\'' {
		return n + 1, true
	}
	return 0, false
}

// spans lexes src.
func (s syntax) spans(src []byte) []Span {
	var out []Span
	for i := 0; i < len(src); {
		if span, ok := s.at(src, i); ok {
			out = append(out, span)
			i = span.End
			continue
		}
		i++
	}
	return out
}

// at returns the span that starts at offset i, if one does.
func (s syntax) at(src []byte, i int) (Span, bool) {
	rest := src[i:]
	for _, start := range s.line {
		if bytes.HasPrefix(rest, []byte(start)) {
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			return Span{i, i + end, Comment}, true
		}
	}
	for _, b := range s.block {
		if bytes.HasPrefix(rest, []byte(b[0])) {
			end := bytes.Index(rest[len(b[0]):], []byte(b[1]))
			if end < 0 {
				return Span{i, len(src), Comment}, true
			}
			return Span{i, i + len(b[0]) + end + len(b[1]), Comment}, true
		}
	}
	q := rest[0]
	switch {
	case bytes.IndexByte([]byte(s.quotes), q) < 0:
		return Span{}, false
	case s.triple && bytes.HasPrefix(rest, []byte{q, q, q}):
		end := bytes.Index(rest[3:], []byte{q, q, q})
		if end < 0 {
			return Span{i, len(src), String}, true
		}
		return Span{i, i + 3 + end + 3, String}, true
	case s.char && q == '\'':
		if end, ok := charLiteral(rest); ok {
			return Span{i, i + end, String}, true
		}
		return Span{}, false
	}
	end, _ := closing(rest, q, bytes.IndexByte([]byte(s.multi), q) >= 0)
	return Span{i, i + end, String}, true
}

// closing returns the length of the string literal rest starts with (its
// first byte the quote q) and whether it is closed: through its closing
// quote, a backslash escaping the byte after it; unclosed, to the end of
// its line (or of the text, for a multi-line literal).
func closing(rest []byte, q byte, multi bool) (int, bool) {
	for j := 1; j < len(rest); j++ {
		switch rest[j] {
		case '\\':
			j++
		case q:
			return j + 1, true
		case '\n':
			if !multi {
				return j, false
			}
		}
	}
	return len(rest), false
}
