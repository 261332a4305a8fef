package pathmatch

import (
	"strings"
	"testing"
)

func TestLiteral(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"**/.env*", ".env"},
		{"**/*.pem", ".pem"},
		{"**/.aws/credentials", ".aws/credentials"},
		{"**/.*_history", "_history"},
		{"docs/**", "docs"},
		{"**/a/**/bcd", "bcd"},
		{"{a,b/c}/*", ""},
		{`x\*y`, "x"},
		{"ab[c]defg", "ab"},
		{"**", ""},
	}
	for _, tt := range tests {
		if got := literal(tt.pattern); got != tt.want {
			t.Errorf("literal(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

// FuzzLiteral: passing a path that lacks a rule's literal never changes
// what Match answers.
func FuzzLiteral(f *testing.F) {
	for _, p := range []string{"**/.env*", "docs/*", "{a,b/c}/*", `x\*`, "[a-c]?/d", "**/a/**/b", "**/.aws/credentials", "a*/b", "a**b", "**/.*_history"} {
		for _, name := range []string{".env", "a/.ENV.d/x", "docs/a/b.md", "b/c/d", "x*", "a/q/b", ".aws/credentials/x", "ax/b", "a/b", "h/.bash_history"} {
			f.Add(p, name)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		for _, c := range []Case{CaseSensitive, IgnoreCase} {
			s, err := New([]string{pattern}, c)
			if err != nil {
				return
			}
			plain := &Set{rules: []rule{s.rules[0]}, fold: s.fold}
			plain.rules[0].literal = ""
			m, ok := s.Match(name)
			want, wantOK := plain.Match(name)
			if ok != wantOK || m != want {
				t.Fatalf("Match(%q) in %q (literal %q) = %+v, %t; without the literal %+v, %t",
					name, pattern, strings.ToLower(s.rules[0].literal), m, ok, want, wantOK)
			}
		}
	})
}
