// Package language names the language of a repository file from its name,
// the one rule every tool that reports or filters by language uses
// (read_file's metadata, list_files' entries), and the MIME type the MCP
// resources of those files carry.
package language

import (
	"path"
	"strings"
)

// Text is the language of a file whose name says nothing more.
const Text = "text"

// byExt maps file extensions (lower-cased) to language names.
var byExt = map[string]string{
	".go": "go", ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".py": "python", ".pyi": "python", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".rb": "ruby",
	".php": "php", ".cs": "csharp", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
	".swift": "swift", ".scala": "scala", ".sh": "shell", ".bash": "shell", ".zsh": "shell",
	".sql": "sql", ".md": "markdown", ".mdx": "markdown", ".rst": "restructuredtext", ".txt": Text,
	".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini",
	".xml": "xml", ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".vue": "vue",
	".svelte": "svelte", ".proto": "protobuf", ".tf": "terraform", ".graphql": "graphql", ".s": "assembly",
	".mod": "go-module", ".sum": Text,
}

// Of guesses the language of the file at p (a slash path) from its name:
// "go", "typescript", "markdown", ..., or Text.
func Of(p string) string {
	base := path.Base(p)
	switch {
	case base == "Makefile" || strings.HasSuffix(base, ".mk"):
		return "makefile"
	case base == "Dockerfile" || strings.HasPrefix(base, "Dockerfile."):
		return "dockerfile"
	}
	if l, ok := byExt[strings.ToLower(path.Ext(base))]; ok {
		return l
	}
	return Text
}

// code is the set of languages whose files are source code.
var code = map[string]bool{
	"go": true, "typescript": true, "javascript": true, "python": true, "rust": true, "java": true,
	"kotlin": true, "ruby": true, "php": true, "csharp": true, "c": true, "cpp": true, "swift": true,
	"scala": true, "vue": true, "svelte": true, "assembly": true, "sql": true,
}

// IsCode reports whether lang is a programming language (its files are a
// module's source), not documentation, configuration or data.
func IsCode(lang string) bool { return code[lang] }

// mimeTypes are the registered or customary MIME types of the languages
// that have one; other programming languages are text/x-<language>, and
// everything else text/plain (the files read_file serves are UTF-8 text).
var mimeTypes = map[string]string{
	"markdown": "text/markdown", "json": "application/json", "jsonl": "application/jsonl",
	"yaml": "application/yaml", "toml": "application/toml", "xml": "application/xml",
	"html": "text/html", "css": "text/css", "javascript": "text/javascript",
	"typescript": "text/x-typescript", "shell": "text/x-shellscript", "sql": "application/sql",
	"graphql": "application/graphql", "restructuredtext": "text/x-rst", Text: "text/plain",
}

// MIMEType returns the MIME type of a text file of language lang (as Of
// names it): "text/x-go", "text/markdown", "text/plain".
func MIMEType(lang string) string {
	if t, ok := mimeTypes[lang]; ok {
		return t
	}
	if IsCode(lang) {
		return "text/x-" + lang
	}
	return "text/plain"
}
