package codechunk

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/symbols"
)

// split cuts a file at the declarations symbols.Parse finds, as the
// context index does.
func split(p, text string) []Chunk { return Split(p, text, symbols.Parse(p, text)) }

// summary renders chunks as "kind name start-end" lines for comparison.
func summary(chunks []Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "%s|%s|%d-%d\n", c.Kind, c.Name, c.Start, c.End)
	}
	return b.String()
}

func TestSplitGo(t *testing.T) {
	src := `// Copyright header, not the package doc.

// Package auth signs and checks tokens.
package auth

import (
	"errors"
	"time"
)

// ErrExpired is returned for an expired token.
var ErrExpired = errors.New("expired")

const (
	a = 1
	b = 2
)

// Token is a signed claim.
type Token struct {
	Subject string
	Expires time.Time
}

// Valid reports whether t has not expired.
func (t *Token) Valid(now time.Time) bool {
	return now.Before(t.Expires)
}

func Sign(subject string) Token { return Token{Subject: subject} }
`
	got := summary(split("src/auth/token.go", src))
	// The package's doc is a declaration (a module), imports and the
	// copyright are left out; a const group's constants share a chunk; a
	// method is named by its receiver's type.
	want := `module|module auth|3-4
variable|variable ErrExpired|11-12
constant|constant a|14-16
class|class Token|19-23
method|method Token.Valid|25-28
function|function Sign|30-30
`
	if got != want {
		t.Errorf("chunks:\n%s\nwant:\n%s", got, want)
	}
	chunks := split("src/auth/token.go", src)
	if c := chunks[4]; c.ID() != "src/auth/token.go:25-28" || !strings.HasPrefix(c.Text, "// Valid reports") || !strings.HasSuffix(c.Text, "}") {
		t.Errorf("method chunk: id %s text %q", c.ID(), c.Text)
	}
}

// TestSplitGoThatDoesNotParse: what go/parser could read of a file is
// cut at its declarations.
func TestSplitGoThatDoesNotParse(t *testing.T) {
	src := "package x\n\nfunc broken( {\n"
	if got, want := summary(split("x/broken.go", src)), "function|function broken|3-3\n"; got != want {
		t.Errorf("chunks:\n%s\nwant:\n%s", got, want)
	}
}

// TestSplitFromTheParse: Split cuts at the declarations of the parse it is
// given, and parses nothing itself; without one, a source file is blocks.
func TestSplitFromTheParse(t *testing.T) {
	src := "package a\n\nfunc One() {}\n\nfunc Two() {}\n"
	f := symbols.Parse("a.go", src)
	f.Symbols = f.Symbols[1:] // as if the parse had found Two only
	if got, want := summary(Split("a.go", src, f)), "function|function Two|5-5\n"; got != want {
		t.Errorf("chunks of the parse given:\n%s\nwant:\n%s", got, want)
	}
	if got, want := summary(Split("a.go", src, nil)), "block||1-5\n"; got != want {
		t.Errorf("chunks without a parse:\n%s\nwant:\n%s", got, want)
	}
}

func TestSplitMarkdown(t *testing.T) {
	src := "Intro line.\n\n# Title\n\nText.\n\n```sh\n# not a heading\n```\n\n## Usage ##\nRun it.\n#hashtag is text\n"
	got := summary(split("docs/README.md", src))
	want := "section||1-1\nsection|Title|3-9\nsection|Usage|11-13\n"
	if got != want {
		t.Errorf("chunks:\n%s\nwant:\n%s", got, want)
	}
}

func TestSplitLines(t *testing.T) {
	var b strings.Builder
	// Three 30-line paragraphs separated by blank lines: the cut falls on
	// a blank line once a block has 30 lines (three quarters of 40).
	for p := range 3 {
		for i := range 30 {
			fmt.Fprintf(&b, "p%d line %d\n", p, i)
		}
		b.WriteString("\n")
	}
	got := summary(split("notes.txt", b.String()))
	want := "block||1-30\nblock||32-61\nblock||63-92\n"
	if got != want {
		t.Errorf("chunks:\n%s\nwant:\n%s", got, want)
	}
	// No good cut at all: blocks of maxLines.
	long := strings.Repeat("    x\n", 300)
	got = summary(split("a.py", long))
	want = "block||1-120\nblock||121-240\nblock||241-300\n"
	if got != want {
		t.Errorf("uncuttable text:\n%s\nwant:\n%s", got, want)
	}
	// Indentation back to the margin is a cut.
	py := strings.Repeat("def f():\n"+strings.Repeat("    pass\n", 9), 8)
	for _, c := range split("m.py", py) {
		if !strings.HasPrefix(c.Text, "def f():") {
			t.Errorf("block %d-%d does not start at a def: %q", c.Start, c.End, c.Text[:20])
		}
	}
}

func TestSplitEmptyAndHuge(t *testing.T) {
	if c := split("a.txt", " \n\t\n"); len(c) != 0 {
		t.Errorf("blank file: %s", summary(c))
	}
	huge := strings.Repeat("é", MaxChunkBytes) // 2 bytes each, one line
	c := split("min.js", huge)
	if len(c) != 1 || len(c[0].Text) > MaxChunkBytes || !strings.HasSuffix(c[0].Text, "é") {
		t.Errorf("huge line: %d chunks, text of %d bytes", len(c), len(c[0].Text))
	}
}

func TestModule(t *testing.T) {
	for in, want := range map[string]string{"net/http/server.go": "net/http", "README.md": "", "a/b.md": "a"} {
		if got := Module(in); got != want {
			t.Errorf("Module(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSplitGoroot cuts a real file of the Go tree: every chunk's text is
// exactly its line range of the file, chunks do not overlap, and every
// exported function of the file starts a chunk with its doc comment.
func TestSplitGoroot(t *testing.T) {
	p := filepath.Join(runtime.GOROOT(), "src", "strings", "strings.go")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	ls := strings.Split(text, "\n")
	chunks := split("strings/strings.go", text)
	if len(chunks) < 40 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	end := 0
	names := map[string]bool{}
	for _, c := range chunks {
		if c.Start <= end {
			t.Errorf("chunk %s overlaps the previous one", c.ID())
		}
		end = c.End
		if want := strings.Join(ls[c.Start-1:c.End], "\n"); c.Text != want {
			t.Errorf("chunk %s text is not its lines", c.ID())
		}
		if c.Text != text[c.From:c.From+len(c.Text)] {
			t.Errorf("chunk %s is not the text at its offset %d", c.ID(), c.From)
		}
		names[c.Name] = true
	}
	for _, n := range []string{"function Index", "function Split", "function TrimSpace"} {
		if !names[n] {
			t.Errorf("no chunk for %s", n)
		}
	}
	trim := chunks[slices.IndexFunc(chunks, func(c Chunk) bool { return c.Name == "function TrimSpace" })]
	if !strings.HasPrefix(trim.Text, "// TrimSpace returns") {
		t.Errorf("TrimSpace's chunk does not start with its doc comment: %q", trim.Text)
	}
}

// FuzzSplit: any file content splits without panicking into chunks whose
// line ranges are ordered and within the file.
func FuzzSplit(f *testing.F) {
	f.Add("a.go", "package a\nfunc f() {}\n")
	f.Add("a.md", "# h\n```\n# x\n```\n## y\n")
	f.Add("a.txt", "x\n\n  y\nz\n")
	f.Fuzz(func(t *testing.T, name, content string) {
		n := newLines(content).n()
		last := 0
		for _, c := range split(name, content) {
			if c.Start < 1 || c.End < c.Start || c.End > n || c.Start <= last {
				t.Fatalf("bad chunk %d-%d of %d lines (%s)", c.Start, c.End, n, c.Kind)
			}
			if c.From < 0 || c.From+len(c.Text) > len(content) || content[c.From:c.From+len(c.Text)] != c.Text {
				t.Fatalf("chunk %d-%d is not the text at its offset %d", c.Start, c.End, c.From)
			}
			last = c.End
		}
	})
}

// TestSplitDeclarations cuts the languages shared/symbols reads with
// tree-sitter at their declarations, named, with their doc comments (one
// chunk up to maxLines lines); a long class into its header and methods;
// neighbouring constants into one chunk; lines no declaration holds into
// blocks, or into the declaration right below when they are one or two.
func TestSplitDeclarations(t *testing.T) {
	if len(symbols.Missing()) > 0 {
		t.Skip("built without tree-sitter (cgo): only Go is read at declarations")
	}
	longBody := strings.Repeat("        x = 1\n", 40)
	tests := []struct {
		path, src, want string
	}{
		{"pkg/spool.py", "import os\n\nMAX = 3\nMIN = 1\n\n# Copies data.\ndef spool(data):\n    return data\n\nclass Small:\n    def m(self):\n        pass\n\nif __name__ == '__main__':\n    spool(1)\n",
			"block||1-1\nconstant|constant MAX|3-4\nfunction|function spool|6-8\nclass|class Small|10-12\nblock||14-15\n"},
		{"pkg/big.py", "class Big:\n    \"\"\"A big class.\"\"\"\n    size = 1\n\n    def first(self):\n" + longBody + "\n    # The second.\n    def second(self):\n        pass\n",
			"class|class Big|1-3\nmethod|method Big.first|5-45\nmethod|method Big.second|47-49\n"},
		{"src/greet.ts", "/** Greets. */\nexport function greet(name: string): string {\n  return name;\n}\n\nexport interface Greeter {\n  greet(): void;\n}\n",
			"function|function greet|1-4\ninterface|interface Greeter|6-8\n"},
		{"src/shapes.rs", "/// A point.\npub struct Point { x: i32 }\n\nimpl Point {\n    /// Makes one.\n    pub fn new(x: i32) -> Self { Point { x } }\n}\n",
			"class|class Point|1-2\nmethod|method Point.new|4-6\n"},
		{"pkg/long.py", "def long():\n" + strings.Repeat("    x = 1\n\n", 30), "function|function long|1-60\n"},
		{"inc/limits.h", "#define A 1\n#define B 2\n\n/* Adds. */\nint add(int a, int b);\n",
			"macro|macro A|1-2\nfunction|function add|4-5\n"},
	}
	for _, tt := range tests {
		if got := summary(split(tt.path, tt.src)); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.path, got, tt.want)
		}
	}
}
