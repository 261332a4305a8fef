package githistory

import "testing"

func TestAttributesLine(t *testing.T) {
	tests := []struct {
		dir, line, want string
		ok              bool
	}{
		{".", "*.perl eol=lf diff=perl", "*.perl eol=lf diff=perl", true},
		{".", "[attr]binary -diff -merge -text", "[attr]binary -diff -merge -text", true},
		{".", "  # a comment", "", false},
		{"t", "", "", false},
		{"t", "*.sh\tdiff=bash", "t/**/*.sh diff=bash", true},
		{"t", "/lib-*.sh whitespace=-indent", "t/lib-*.sh whitespace=-indent", true},
		{"po/sub", "x/*.po diff=po", "po/sub/x/*.po diff=po", true},
		{"t", "[attr]mine -diff", "", false},
		{"t", `"a b" -diff`, "", false},
	}
	for _, tt := range tests {
		got, ok := attributesLine(tt.dir, tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("attributesLine(%q, %q) = %q, %v; want %q, %v", tt.dir, tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestByDepth(t *testing.T) {
	got := byDepth([]treeFile{{name: "a/b/.gitattributes"}, {name: ".gitattributes"}, {name: "z/.gitattributes"}, {name: "a/.gitattributes"}})
	want := []string{".gitattributes", "z/.gitattributes", "a/.gitattributes", "a/b/.gitattributes"}
	for i, f := range got {
		if f.name != want[i] {
			t.Fatalf("byDepth: %v, want %v", got, want)
		}
	}
}
