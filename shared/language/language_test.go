package language

import (
	"slices"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct{ path, want string }{
		{"main.go", "go"},
		{"src/App.TSX", "typescript"},
		{"lib/x.mjs", "javascript"},
		{"inc/vector.h", "cpp"},
		{"src/Main.kt", "kotlin"},
		{"app/models/user.rb", "ruby"},
		{"Rakefile", "ruby"},
		{"src/Program.cs", "csharp"},
		{"Makefile", "makefile"},
		{"build/rules.mk", "makefile"},
		{"Dockerfile", "dockerfile"},
		{"deploy/Dockerfile.prod", "dockerfile"},
		{"go.mod", "go-module"},
		{"docs/a.markdown", "markdown"},
		{"README", Text},
		{"notes.weird", Text},
		{".gitignore", Text},
	}
	for _, tt := range tests {
		if got := Of(tt.path); got != tt.want {
			t.Errorf("Of(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	if !IsCode("go") || !IsCode("swift") || IsCode("markdown") || IsCode(Text) || IsCode("nonsense") {
		t.Error("IsCode: go and swift are code, markdown, text and unknown names are not")
	}
}

func TestParserOf(t *testing.T) {
	tests := []struct{ path, want string }{
		{"main.go", Go},
		{"src/app.ts", "typescript"},
		{"src/App.tsx", "tsx"},
		{"inc/vector.h", "cpp"},
		{"src/Main.kt", "kotlin"},
		{"src/App.swift", ""},
		{"README.md", ""},
		{"notes.weird", ""},
	}
	for _, tt := range tests {
		if got := ParserOf(tt.path); got != tt.want {
			t.Errorf("ParserOf(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestTable: every extension, file name and language name is in one row
// only; a file's parser is its own language's or a dialect of it (so a
// file is never read as one language and labelled another).
func TestTable(t *testing.T) {
	seen := map[string]string{}
	once := func(key, row string) {
		if other, dup := seen[key]; dup {
			t.Errorf("%s is in rows %s and %s", key, other, row)
		}
		seen[key] = row
	}
	for _, l := range Table() {
		once("name "+l.Name, l.Name)
		for _, e := range l.Extensions {
			if e != strings.ToLower(e) || !strings.HasPrefix(e, ".") {
				t.Errorf("%s: extension %q is not a lower-case .ext", l.Name, e)
			}
			once("extension "+e, l.Name)
		}
		for _, f := range l.Files {
			once("file "+f, l.Name)
		}
		for ext := range l.Dialects {
			if !slices.Contains(l.Extensions, ext) {
				t.Errorf("%s: dialect %s is not one of its extensions", l.Name, ext)
			}
		}
		if l.Parser != "" && !l.Code {
			t.Errorf("%s has a parser but is not code", l.Name)
		}
	}
	if got := Parsers(); !slices.Contains(got, "tsx") || !slices.Contains(got, Go) || slices.Contains(got, "") {
		t.Errorf("Parsers() = %v", got)
	}
}

func TestMIMEType(t *testing.T) {
	tests := []struct{ lang, want string }{
		{"go", "text/x-go"},
		{"markdown", "text/markdown"},
		{"json", "application/json"},
		{"jsonl", "application/jsonl"},
		{"typescript", "text/x-typescript"},
		{"javascript", "text/javascript"},
		{"shell", "text/x-shellscript"},
		{"makefile", "text/plain"},
		{Text, "text/plain"},
		{"", "text/plain"},
	}
	for _, tt := range tests {
		if got := MIMEType(tt.lang); got != tt.want {
			t.Errorf("MIMEType(%q) = %q, want %q", tt.lang, got, tt.want)
		}
	}
}
