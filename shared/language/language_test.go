package language

import "testing"

func TestOf(t *testing.T) {
	tests := []struct{ path, want string }{
		{"main.go", "go"},
		{"src/App.TSX", "typescript"},
		{"lib/x.mjs", "javascript"},
		{"Makefile", "makefile"},
		{"build/rules.mk", "makefile"},
		{"Dockerfile", "dockerfile"},
		{"deploy/Dockerfile.prod", "dockerfile"},
		{"go.mod", "go-module"},
		{"README", Text},
		{"notes.weird", Text},
		{".gitignore", Text},
	}
	for _, tt := range tests {
		if got := Of(tt.path); got != tt.want {
			t.Errorf("Of(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	if !IsCode("go") || IsCode("markdown") || IsCode(Text) {
		t.Error("IsCode: go is code, markdown and text are not")
	}
}

func TestMIMEType(t *testing.T) {
	tests := []struct{ lang, want string }{
		{"go", "text/x-go"},
		{"markdown", "text/markdown"},
		{"json", "application/json"},
		{"jsonl", "application/jsonl"},
		{"typescript", "text/x-typescript"},
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
