// Package codespans finds the comments and string literals of a source
// file, so that a search for an identifier can leave them out (what
// find_references' excludeComments and excludeStrings do). Go files are
// read with go/scanner, exactly; files of the other languages it knows are
// read with a small lexer that knows their comment and quote syntax (line
// and block comments, quotes with backslash escapes, Python's triple
// quotes, character literals), which is right for ordinary code and
// cheap enough to run over every file a search touches. What a string
// holds as code is code: the `${…}` of a JavaScript or TypeScript template
// literal and the {…} of a Python f-string are lexed as code, the string's
// text around them being spans of their own; and in JavaScript and
// TypeScript an apostrophe of JSX text ("Don't") starts no string.
// Language names are shared/language's.
package codespans

import (
	"bytes"
	"go/scanner"
	"go/token"
	"slices"
	"strings"
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
	// template: a string of ` holds code between "${" and its "}"
	// (JavaScript's template literals).
	template bool
	// fstrings: a string with an f (or t) prefix holds code between "{"
	// and its "}", "{{" being a brace (Python's f-strings).
	fstrings bool
	// jsx: a ' after a word, or one no quote closes on its line, is an
	// apostrophe of JSX text, not a quote.
	jsx bool
}

var (
	cLike      = syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: `"'`, char: true}
	hashes     = syntax{line: []string{"#"}, quotes: `"'`}
	ecmaScript = syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`", multi: "`", template: true, jsx: true}
)

// syntaxes are the languages the lexer reads, by shared/language's names.
var syntaxes = map[string]syntax{
	"typescript": ecmaScript, "javascript": ecmaScript,
	"java": cLike, "c": cLike, "cpp": cLike, "csharp": cLike, "rust": cLike,
	"kotlin": cLike, "scala": cLike, "swift": cLike,
	"php":    {line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}, quotes: `"'`},
	"python": {line: []string{"#"}, quotes: `"'`, triple: true, fstrings: true},
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

// maxNesting bounds how deep interpolations nest (`${`${…}`}`): deeper
// ones are string, so that no text makes the lexer recurse without end.
const maxNesting = 32

// lexer finds the spans of one text.
type lexer struct {
	syntax
	src   []byte
	out   []Span
	depth int // interpolations the lexer is in
}

// spans lexes src.
func (s syntax) spans(src []byte) []Span {
	l := lexer{syntax: s, src: src}
	l.code(0, false)
	return l.out
}

// code lexes code from i to the end of the text or, when inner, to the
// "}" that closes the interpolation it is in (braces it opens are closed
// first), and returns where it stopped: at that "}", or the end.
func (l *lexer) code(i int, inner bool) int {
	depth := 0
	for i < len(l.src) {
		if end, ok := l.token(i); ok {
			i = end
			continue
		}
		switch c := l.src[i]; {
		case !inner:
		case c == '{':
			depth++
		case c == '}' && depth == 0:
			return i
		case c == '}':
			depth--
		}
		i++
	}
	return i
}

// token lexes the comment or string that starts at i, if one does, adding
// its spans; it returns where it ends.
func (l *lexer) token(i int) (int, bool) {
	rest := l.src[i:]
	for _, start := range l.line {
		if bytes.HasPrefix(rest, []byte(start)) {
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			return l.add(i, i+end, Comment), true
		}
	}
	for _, b := range l.block {
		if bytes.HasPrefix(rest, []byte(b[0])) {
			end := bytes.Index(rest[len(b[0]):], []byte(b[1]))
			if end < 0 {
				return l.add(i, len(l.src), Comment), true
			}
			return l.add(i, i+len(b[0])+end+len(b[1]), Comment), true
		}
	}
	q := rest[0]
	switch {
	case bytes.IndexByte([]byte(l.quotes), q) < 0:
		return 0, false
	case l.char && q == '\'':
		end, ok := charLiteral(rest)
		return l.add(i, i+end, String), ok
	case l.jsx && q == '\'' && apostrophe(l.src, i):
		return 0, false
	}
	delim := []byte{q}
	if l.triple && bytes.HasPrefix(rest, []byte{q, q, q}) {
		delim = []byte{q, q, q}
	}
	open := ""
	switch {
	case l.template && q == '`':
		open = "${"
	case l.fstrings && fPrefixed(l.src, i):
		open = "{"
	}
	return l.str(i, delim, open, len(delim) == 3 || bytes.IndexByte([]byte(l.multi), q) >= 0), true
}

// str lexes the string whose delimiter delim starts at i: through its
// closing delimiter, a backslash escaping the byte after it; unclosed, to
// the end of its line (or of the text, when multi). When open is not "",
// the string holds code from each open to its "}" (a doubled "{" is a
// brace): the string's text around each is a span of its own, delimiters
// included ("`a ${", "} b`"). It returns where the string ends.
func (l *lexer) str(i int, delim []byte, open string, multi bool) int {
	from := i
	for j := i + len(delim); j < len(l.src); j++ {
		switch rest := l.src[j:]; {
		case rest[0] == '\\':
			j++
		case bytes.HasPrefix(rest, delim):
			return l.add(from, j+len(delim), String)
		case rest[0] == '\n' && !multi:
			return l.add(from, j, String)
		case open == "":
		case open == "{" && bytes.HasPrefix(rest, []byte("{{")):
			j++
		case bytes.HasPrefix(rest, []byte(open)) && l.depth < maxNesting:
			l.add(from, j+len(open), String)
			l.depth++
			from = l.code(j+len(open), true)
			l.depth--
			j = from
		}
	}
	return l.add(from, len(l.src), String)
}

// add adds the span [from, to) of kind k, unless it is empty, and returns
// to.
func (l *lexer) add(from, to int, k Kind) int {
	if from < to {
		l.out = append(l.out, Span{from, to, k})
	}
	return to
}

// fPrefixed reports whether the quote at i starts a Python f-string (or
// t-string): the word right before it is a prefix with an f or t, and
// perhaps an r (f"", rf”, Fr""", t"").
func fPrefixed(src []byte, i int) bool {
	from := i
	for from > 0 && isWord(src[from-1]) {
		from--
	}
	switch strings.ToLower(string(src[from:i])) {
	case "f", "t", "rf", "fr", "rt", "tr":
		return true
	}
	return false
}

// expressionKeywords are the JavaScript words a string may follow with no
// space between (return'x', case'y').
var expressionKeywords = map[string]bool{
	"return": true, "typeof": true, "case": true, "in": true, "of": true, "instanceof": true, "void": true,
	"delete": true, "yield": true, "await": true, "else": true, "do": true, "throw": true, "new": true,
	"import": true, "from": true, "export": true,
}

// apostrophe reports whether the ' at i in JavaScript or TypeScript is an
// apostrophe of JSX text (<p>Don't {x}</p>), not a quote: it follows a
// word that is not a keyword (no string can), or it is not closed on its
// line (no string of ' can span lines).
func apostrophe(src []byte, i int) bool {
	from := i
	for from > 0 && isWord(src[from-1]) {
		from--
	}
	if from < i && !expressionKeywords[string(src[from:i])] {
		return true
	}
	_, closed := closing(src[i:], '\'', false)
	return !closed
}

// isWord reports whether c may be part of an identifier or a number (any
// byte of a multi-byte character counts).
func isWord(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
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
