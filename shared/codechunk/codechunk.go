// Package codechunk cuts source files into the chunks context_search
// indexes: a file shared/symbols reads (Go, TypeScript, JavaScript,
// Python, Java, Rust, C, C++, C#, Ruby, PHP, Kotlin) at its declarations,
// from the symbols one parse of it found (symbols.File: no second parse
// here), one chunk per declaration with its doc comment, kind and name (a
// long class into its header and its members); Markdown into one chunk
// per heading; anything else into blocks of about 40 lines cut at blank
// lines or where indentation returns to the left margin. A chunk knows its
// file, line range, kind and name.
package codechunk

import (
	"fmt"
	"path"
	"strings"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/symbols"
)

// Kinds of chunk besides the kinds of symbol (shared/symbols: function,
// method, class, ...) of declarations.
const (
	KindSection = "section" // a Markdown heading and its text
	KindBlock   = "block"   // a block of lines
)

// Size limits.
const (
	// targetLines is the block length the line splitter aims for.
	targetLines = 40
	// maxLines is the longest block it makes; longer declarations and
	// Markdown sections are cut into blocks too.
	maxLines = 120
	// MaxChunkBytes cuts a chunk's text (very long lines, generated data).
	MaxChunkBytes = 32 << 10
)

// Chunk is one piece of a file.
type Chunk struct {
	Path       string // slash-separated, relative to the repository root
	Start, End int    // first and last line, from 1
	Kind       string
	Name       string // the declaration ("method Server.Serve") or heading; "" for blocks
	// Text is the chunk's lines as the file has them (without the last
	// line's newline), cut at MaxChunkBytes: Text == text[From:From+len(Text)]
	// of the text Split was given, and shares its memory.
	Text string
	From int // byte offset of Text in the file
}

// ID names the chunk by file and line range: "net/http/server.go:120-168".
func (c Chunk) ID() string { return fmt.Sprintf("%s:%d-%d", c.Path, c.Start, c.End) }

// Module is the module of a file: its folder ("net/http" for
// "net/http/server.go"), "" at the root.
func Module(p string) string {
	if d := path.Dir(p); d != "." && d != "/" {
		return d
	}
	return ""
}

// Split cuts the file at p, whose content is text, into chunks: at the
// declarations of f, what symbols.Parse found in text (nil when
// shared/symbols does not read the file), else Markdown at its headings,
// else into blocks. Files that are empty or only whitespace give no
// chunks. The chunks' Text are substrings of text: nothing is copied.
func Split(p, text string, f *symbols.File) []Chunk {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	ls := newLines(text)
	var chunks []Chunk
	switch {
	case f != nil:
		chunks = splitDeclarations(ls, f)
	case language.Of(p) == "markdown":
		chunks = splitMarkdown(ls)
	default:
		chunks = splitLines(ls, 0, ls.n(), KindBlock, "")
	}
	for i := range chunks {
		chunks[i].Path = p
		chunks[i].Text = Cut(chunks[i].Text, MaxChunkBytes)
	}
	return chunks
}

// lines are the lines of a text, by where each starts; a line ends before
// its "\n".
type lines struct {
	text   string
	starts []int
}

func newLines(text string) lines {
	ls := lines{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' && i+1 < len(text) {
			ls.starts = append(ls.starts, i+1)
		}
	}
	return ls
}

// n is the number of lines.
func (ls lines) n() int { return len(ls.starts) }

// end is the byte offset where line i (0-based) ends, before its newline
// (and a carriage return before it).
func (ls lines) end(i int) int {
	e := len(ls.text)
	switch {
	case i+1 < len(ls.starts):
		e = ls.starts[i+1] - 1
	case e > ls.starts[i] && ls.text[e-1] == '\n':
		e--
	}
	if e > ls.starts[i] && ls.text[e-1] == '\r' {
		e--
	}
	return e
}

// line is line i, without its line end.
func (ls lines) line(i int) string { return ls.text[ls.starts[i]:ls.end(i)] }

// blank reports whether line i holds only white space.
func (ls lines) blank(i int) bool { return strings.TrimSpace(ls.line(i)) == "" }

// chunk is lines [from, to) (0-based) as a chunk.
func (ls lines) chunk(from, to int, kind, name string) Chunk {
	return Chunk{Start: from + 1, End: to, Kind: kind, Name: name, Text: ls.text[ls.starts[from]:ls.end(to-1)], From: ls.starts[from]}
}

// splitLines cuts lines [from, to) into blocks of about targetLines and at
// most maxLines, each cut where the next line follows a blank line or
// starts at the left margin after an indented line. Blank lines at either
// end of a block are dropped, and blank blocks skipped.
func splitLines(ls lines, from, to int, kind, name string) []Chunk {
	var out []Chunk
	emit := func(a, b int) { // [a, b)
		for a < b && ls.blank(a) {
			a++
		}
		for b > a && ls.blank(b-1) {
			b--
		}
		if a < b {
			out = append(out, ls.chunk(a, b, kind, name))
		}
	}
	start := from
	for i := from + 1; i < to; i++ {
		n := i - start
		if n >= maxLines || (n >= targetLines*3/4 && goodCut(ls, i)) {
			emit(start, i)
			start = i
		}
	}
	emit(start, to)
	return out
}

// goodCut reports whether a block may end before line i.
func goodCut(ls lines, i int) bool {
	if ls.blank(i-1) && !ls.blank(i) {
		return true
	}
	return indent(ls.line(i)) == 0 && !ls.blank(i) && indent(ls.line(i-1)) > 0
}

func indent(l string) int {
	return len(l) - len(strings.TrimLeft(l, " \t"))
}

// Cut returns at most n bytes of s without splitting a UTF-8 character.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
