// Package language is the one table of the languages of repository files:
// which files are in which language (by name), whether that language is
// code, the MIME type its MCP resources carry, and which parser finds its
// symbols. Every tool that reports or filters by language (read_file's
// metadata, list_files' entries, find_symbols, find_references), the
// symbol parsers (shared/symbols), context_search's chunker
// (shared/codechunk) and the contract test of find_symbols' language enum
// read this table and nothing else.
package language

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// Text is the language of a file whose name says nothing more.
const Text = "text"

// Go is the parser of Go files (go/parser); every other parser a Language
// names is a tree-sitter grammar of shared/symbols.
const Go = "go"

// Language is one row of the table.
type Language struct {
	Name       string   // as tools report and filter it: "go", "typescript", "cpp"
	Extensions []string // lower-cased, with the dot: ".ts"
	Files      []string // whole file names: "Makefile"
	Prefixes   []string // starts of file names: "Dockerfile."
	Code       bool     // a programming language: its files are a module's source
	// MIMEType is its registered or customary MIME type; "" for
	// text/x-<name> when it is code, text/plain otherwise.
	MIMEType string
	// Parser is what shared/symbols reads its files with: Go, a
	// tree-sitter grammar ("typescript", "cpp"), or "" when nothing does.
	Parser string
	// Dialects are extensions read with another parser of the same
	// language: ".tsx" with the TSX grammar.
	Dialects map[string]string
}

// table is the one table. A C or C++ header (.h) is cpp: the C++ grammar
// reads C headers too, and one in a C++ project holds classes (as ctags
// decides).
var table = []Language{
	{Name: Go, Extensions: []string{".go"}, Code: true, Parser: Go},
	{Name: "typescript", Extensions: []string{".ts", ".tsx", ".mts", ".cts"}, Code: true,
		Parser: "typescript", Dialects: map[string]string{".tsx": "tsx"}},
	{Name: "javascript", Extensions: []string{".js", ".jsx", ".mjs", ".cjs"}, Code: true, MIMEType: "text/javascript", Parser: "javascript"},
	{Name: "python", Extensions: []string{".py", ".pyi"}, Code: true, Parser: "python"},
	{Name: "java", Extensions: []string{".java"}, Code: true, Parser: "java"},
	{Name: "rust", Extensions: []string{".rs"}, Code: true, Parser: "rust"},
	{Name: "c", Extensions: []string{".c"}, Code: true, Parser: "c"},
	{Name: "cpp", Extensions: []string{".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"}, Code: true, Parser: "cpp"},
	{Name: "csharp", Extensions: []string{".cs"}, Code: true, Parser: "csharp"},
	{Name: "ruby", Extensions: []string{".rb"}, Files: []string{"Rakefile", "Gemfile"}, Code: true, Parser: "ruby"},
	{Name: "php", Extensions: []string{".php"}, Code: true, Parser: "php"},
	{Name: "kotlin", Extensions: []string{".kt", ".kts"}, Code: true, Parser: "kotlin"},
	{Name: "swift", Extensions: []string{".swift"}, Code: true},
	{Name: "scala", Extensions: []string{".scala"}, Code: true},
	{Name: "vue", Extensions: []string{".vue"}, Code: true},
	{Name: "svelte", Extensions: []string{".svelte"}, Code: true},
	{Name: "assembly", Extensions: []string{".s"}, Code: true},
	{Name: "sql", Extensions: []string{".sql"}, Code: true, MIMEType: "application/sql"},
	{Name: "shell", Extensions: []string{".sh", ".bash", ".zsh"}, MIMEType: "text/x-shellscript"},
	{Name: "makefile", Extensions: []string{".mk"}, Files: []string{"Makefile"}},
	{Name: "dockerfile", Files: []string{"Dockerfile"}, Prefixes: []string{"Dockerfile."}},
	{Name: "markdown", Extensions: []string{".md", ".mdx", ".markdown"}, MIMEType: "text/markdown"},
	{Name: "restructuredtext", Extensions: []string{".rst"}, MIMEType: "text/x-rst"},
	{Name: "json", Extensions: []string{".json"}, MIMEType: "application/json"},
	{Name: "jsonl", Extensions: []string{".jsonl"}, MIMEType: "application/jsonl"},
	{Name: "yaml", Extensions: []string{".yaml", ".yml"}, MIMEType: "application/yaml"},
	{Name: "toml", Extensions: []string{".toml"}, MIMEType: "application/toml"},
	{Name: "ini", Extensions: []string{".ini"}},
	{Name: "xml", Extensions: []string{".xml"}, MIMEType: "application/xml"},
	{Name: "html", Extensions: []string{".html", ".htm"}, MIMEType: "text/html"},
	{Name: "css", Extensions: []string{".css"}, MIMEType: "text/css"},
	{Name: "scss", Extensions: []string{".scss"}},
	{Name: "protobuf", Extensions: []string{".proto"}},
	{Name: "terraform", Extensions: []string{".tf"}},
	{Name: "graphql", Extensions: []string{".graphql"}, MIMEType: "application/graphql"},
	{Name: "go-module", Extensions: []string{".mod"}},
	{Name: Text, Extensions: []string{".txt", ".sum"}},
}

// The table's rows by name, extension, file name; file name prefixes in
// order.
var (
	byName, byExt, byFile = index()
	prefixes              = prefixRows()
)

func index() (names, exts, files map[string]*Language) {
	names, exts, files = map[string]*Language{}, map[string]*Language{}, map[string]*Language{}
	for i := range table {
		l := &table[i]
		names[l.Name] = l
		for _, e := range l.Extensions {
			exts[e] = l
		}
		for _, f := range l.Files {
			files[f] = l
		}
	}
	return names, exts, files
}

func prefixRows() []*Language {
	var out []*Language
	for i := range table {
		if len(table[i].Prefixes) > 0 {
			out = append(out, &table[i])
		}
	}
	return out
}

// of returns the row of the file at p, or nil (Text).
func of(p string) *Language {
	base := path.Base(p)
	if l := byFile[base]; l != nil {
		return l
	}
	for _, l := range prefixes {
		if slices.ContainsFunc(l.Prefixes, func(pre string) bool { return strings.HasPrefix(base, pre) }) {
			return l
		}
	}
	return byExt[strings.ToLower(path.Ext(base))]
}

// Of names the language of the file at p (a slash path) from its name:
// "go", "typescript", "markdown", ..., or Text.
func Of(p string) string {
	if l := of(p); l != nil {
		return l.Name
	}
	return Text
}

// ParserOf names the parser of the file at p's symbols (Go, or a
// tree-sitter grammar: its language's, or its dialect's), or "" when its
// language has none.
func ParserOf(p string) string {
	l := of(p)
	if l == nil {
		return ""
	}
	if d, ok := l.Dialects[strings.ToLower(path.Ext(p))]; ok {
		return d
	}
	return l.Parser
}

// Table returns a copy of the table's rows, in order.
func Table() []Language { return slices.Clone(table) }

// Known reports whether lang is a language of the table.
func Known(lang string) bool { return byName[lang] != nil }

// WithParser lists the languages a parser reads, in the table's order:
// those find_symbols may find symbols in.
func WithParser() []string {
	var out []string
	for _, l := range table {
		if l.Parser != "" {
			out = append(out, l.Name)
		}
	}
	return out
}

// Parsers lists every parser the table names, dialects included, each once.
func Parsers() []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, l := range table {
		add(l.Parser)
		for _, d := range slices.Sorted(maps.Values(l.Dialects)) {
			add(d)
		}
	}
	return out
}

// IsCode reports whether lang is a programming language (its files are a
// module's source), not documentation, configuration or data.
func IsCode(lang string) bool {
	l := byName[lang]
	return l != nil && l.Code
}

// MIMEType returns the MIME type of a text file of language lang (as Of
// names it): "text/x-go", "text/markdown", "text/plain".
func MIMEType(lang string) string {
	l := byName[lang]
	switch {
	case l == nil:
		return "text/plain"
	case l.MIMEType != "":
		return l.MIMEType
	case l.Code:
		return "text/x-" + lang
	}
	return "text/plain"
}
