// Package codechunk cuts source files into the chunks context_search
// indexes: Go files into one chunk per top-level declaration with its doc
// comment (go/ast), Markdown into one chunk per heading, and anything else
// into blocks of about 40 lines cut at blank lines or where indentation
// returns to the left margin. A chunk knows its file and line range.
package codechunk

import (
	"fmt"
	"path"
	"strings"
)

// Kinds of chunk besides Go's declaration kinds (func, method, type,
// const, var).
const (
	KindPackage = "package" // a Go package clause with its doc comment
	KindSection = "section" // a Markdown heading and its text
	KindBlock   = "block"   // a block of lines
)

// Size limits.
const (
	// targetLines is the block length the line splitter aims for.
	targetLines = 40
	// maxLines is the longest block it makes; longer Go declarations and
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
	Name       string // the declaration ("func (s *Server) Serve") or heading; "" for blocks
	Text       string
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

// Split cuts one file into chunks, choosing the splitter by extension.
// Files that are empty or only whitespace give no chunks.
func Split(p string, content []byte) []Chunk {
	text := string(content)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var chunks []Chunk
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		chunks = splitGo(text)
	case ".md", ".markdown", ".mdx":
		chunks = splitMarkdown(text)
	default:
		chunks = splitLines(lines(text), 1, KindBlock, "")
	}
	for i := range chunks {
		chunks[i].Path = p
		chunks[i].Text = Cut(chunks[i].Text, MaxChunkBytes)
	}
	return chunks
}

// lines splits text into lines without their newlines.
func lines(text string) []string {
	ls := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// splitLines cuts ls (whose first line is line first of the file) into
// blocks of about targetLines and at most maxLines, each cut where the
// next line follows a blank line or starts at the left margin after an
// indented line. Blank lines at either end of a block are dropped, and
// blank blocks skipped.
func splitLines(ls []string, first int, kind, name string) []Chunk {
	var out []Chunk
	emit := func(from, to int) { // [from, to)
		for from < to && strings.TrimSpace(ls[from]) == "" {
			from++
		}
		for to > from && strings.TrimSpace(ls[to-1]) == "" {
			to--
		}
		if from < to {
			out = append(out, Chunk{Start: first + from, End: first + to - 1, Kind: kind, Name: name,
				Text: strings.Join(ls[from:to], "\n")})
		}
	}
	start := 0
	for i := 1; i < len(ls); i++ {
		n := i - start
		if n >= maxLines || (n >= targetLines*3/4 && goodCut(ls, i)) {
			emit(start, i)
			start = i
		}
	}
	emit(start, len(ls))
	return out
}

// goodCut reports whether a block may end before line i.
func goodCut(ls []string, i int) bool {
	if strings.TrimSpace(ls[i-1]) == "" && strings.TrimSpace(ls[i]) != "" {
		return true
	}
	return indent(ls[i]) == 0 && strings.TrimSpace(ls[i]) != "" && indent(ls[i-1]) > 0
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
