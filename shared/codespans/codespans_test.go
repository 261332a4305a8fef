package codespans

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/language"
)

// texts returns the text of each span, marked c: or s: by kind.
func texts(src string, spans []Span) []string {
	out := []string{}
	for _, s := range spans {
		mark := map[Kind]string{Comment: "c:", String: "s:"}[s.Kind]
		out = append(out, mark+src[s.Start:s.End])
	}
	return out
}

func TestOf(t *testing.T) {
	tests := []struct {
		lang, src string
		want      []string
	}{
		{"go", "package a // pkg\n/* block\n*/ var s = \"x // y\" + `raw\n` + 'c'\n", []string{"c:// pkg", "c:/* block\n*/", `s:"x // y"`, "s:`raw\n`", "s:'c'"}},
		{"go", "x := 1 // crlf\r\ny", []string{"c:// crlf\r"}},
		{"typescript", "const a = 'it\\'s'; // note\nconst t = `multi\n${x} line`;\n/* b */", []string{`s:'it\'s'`, "c:// note", "s:`multi\n${", "s:} line`", "c:/* b */"}},
		// Interpolations are code: strings and comments in them are
		// lexed as such, braces they open are theirs, templates nest.
		{"typescript", "`a ${f({k: 'v'})} b ${c /* n */} \\${d}`", []string{"s:`a ${", "s:'v'", "s:} b ${", "c:/* n */", "s:} \\${d}`"}},
		{"javascript", "`x${`y${z}`}`", []string{"s:`x${", "s:`y${", "s:}`", "s:}`"}},
		{"javascript", "`open ${x", []string{"s:`open ${"}},
		{"python", "f\"{name!r:>{width}} {{not}} {d['k']}\"", []string{`s:"{`, `s:} {{not}} {`, "s:'k'", `s:}"`}},
		{"python", "rf'''{x}\n''' + F\"{y}\" + b\"{z}\" + if\"{w}\"", []string{"s:'''{", "s:}\n'''", `s:"{`, `s:}"`, `s:"{z}"`, `s:"{w}"`}},
		// JSX text: an apostrophe after a word, or one its line does
		// not close, starts no string; a keyword may stand right before
		// a real one.
		{"typescript", "const v = <p>Don't {user.name}, it's {count}</p>;\nreturn'x'", []string{"s:'x'"}},
		{"javascript", "<p>'Tis {season}</p>\nlet s = 'ok'", []string{"s:'ok'"}},
		{"javascript", "f(\"unclosed\nnext)", []string{`s:"unclosed`}},
		{"python", "x = '''doc\n# not a comment'''  # comment\ny = \"a#b\"\n", []string{"s:'''doc\n# not a comment'''", "c:# comment", `s:"a#b"`}},
		{"rust", "fn f<'a>(x: &'a str) -> char { 'x' } // done\nlet s = \"q\";", []string{"s:'x'", "c:// done", `s:"q"`}},
		{"c", "char c = '\\n'; /* unclosed", []string{`s:'\n'`, "c:/* unclosed"}},
		{"shell", "echo \"$HOME\" # say where\n", []string{`s:"$HOME"`, "c:# say where"}},
		{"sql", "select '--x' -- why\n", []string{"s:'--x'", "c:-- why"}},
		{"markdown", "# not code", []string{}},
	}
	for _, tt := range tests {
		got := texts(tt.src, Of(tt.lang, []byte(tt.src)))
		if len(got) != len(tt.want) {
			t.Errorf("%s %q: %q, want %q", tt.lang, tt.src, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s %q: %q, want %q", tt.lang, tt.src, got, tt.want)
				break
			}
		}
	}
}

func TestAt(t *testing.T) {
	src := "a // b\nc \"d\" e"
	spans := Of("go", []byte(src))
	for i, want := range []Kind{0, 0, Comment, Comment, Comment, Comment, 0, 0, 0, String, String, String, 0, 0} {
		if got := At(spans, i); got != want {
			t.Errorf("At(%d) (%q) = %d, want %d", i, src[i], got, want)
		}
	}
}

// FuzzOf: for any text and language, spans are in order, within the
// text, not overlapping and not empty.
func FuzzOf(f *testing.F) {
	for _, seed := range []string{"a // b", "'''x", "\"\\", "`a\n", "/*", "'a' 'bc", "\"x\\\"y\"", "# c\n'"} {
		f.Add(seed)
	}
	for _, seed := range []string{"`a${b}`", "`${`", "f'{x}'", `f"{{"`, "<p>Don't {x}</p>", "rf'''{'''"} {
		f.Add(seed)
	}
	langs := []string{"go", "typescript", "javascript", "python", "rust", "c", "shell", "sql", "php"}
	f.Fuzz(func(t *testing.T, src string) {
		for _, lang := range langs {
			end := 0
			for _, s := range Of(lang, []byte(src)) {
				if s.Start < end || s.End <= s.Start || s.End > len(src) || (s.Kind != Comment && s.Kind != String) {
					t.Fatalf("%s %q: bad span %+v after %d", lang, src, s, end)
				}
				end = s.End
			}
		}
	})
}

// TestDeepInterpolations: interpolations nested past maxNesting are
// string; the spans stay in order, within the text.
func TestDeepInterpolations(t *testing.T) {
	src := strings.Repeat("`${", 100000) + "x"
	end := 0
	for _, s := range Of("javascript", []byte(src)) {
		if s.Start < end || s.End <= s.Start || s.End > len(src) {
			t.Fatalf("bad span %+v after %d", s, end)
		}
		end = s.End
	}
}

// TestSyntaxesAreLanguages: the lexer's languages are shared/language's.
func TestSyntaxesAreLanguages(t *testing.T) {
	for lang := range syntaxes {
		if !language.Known(lang) {
			t.Errorf("%q is not a language of shared/language's table", lang)
		}
	}
}
