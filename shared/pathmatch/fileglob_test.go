package pathmatch

import "testing"

func TestFileGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*.ts", "a.ts", true},
		{"*.ts", "src/deep/a.ts", true},
		{"*.ts", "src/a.tsx", false},
		{"Dockerfile", "deploy/Dockerfile", true},
		{"src/**/*.ts", "src/server/auth/a.ts", true},
		{"src/**/*.ts", "lib/src/a.ts", false},
		{"./src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/x/a.ts", false},
		{"*_test.go", "net/http/server_test.go", true},
		{"{a,b}.md", "docs/b.md", true},
		{"net", "net/http/server.go", false}, // files only, never a folder above
	}
	for _, tt := range tests {
		g, err := NewFileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("NewFileGlob(%q): %v", tt.pattern, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("%q matches %q: %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
	for _, bad := range []string{"", "/abs/*.go", "a/", "[", "a/***"} {
		if _, err := NewFileGlob(bad); err == nil {
			t.Errorf("NewFileGlob(%q) accepted", bad)
		}
	}
}
