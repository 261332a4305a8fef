package contextindex

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"How does authentication work?", []string{"authentication", "work"}},
		{"parseHTTPHeader", []string{"pars", "http", "header", "parsehttpheader"}},
		{"snake_case_name", []string{"snak", "case", "name"}},
		{"AuthService.refreshToken()", []string{"auth", "servic", "authservic", "refresh", "token", "refreshtoken"}},
		{"Token refresh race condition fixed with mutex lock",
			[]string{"token", "refresh", "race", "condition", "fix", "mutex", "lock"}},
		{"utf8 HTTP2Server", []string{"utf", "8", "utf8", "http", "2", "server", "http2server"}},
		{"  ...  ", nil},
		{"Größe über", []string{"größe", "über"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"tokens": "token", "locks": "lock", "locked": "lock", "locking": "lock",
		"cache": "cach", "caches": "cach", "cached": "cach", "caching": "cach",
		"queries": "query", "query": "query", "running": "run", "status": "status",
		"analysis": "analysis", "processes": "process", "process": "process",
		"calling": "call", "auth": "auth", "go": "go", "use": "use",
		"conditions": "condition", "authentication": "authentication",
	}
	for in, want := range tests {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestModuleMatches(t *testing.T) {
	tests := []struct {
		module, filter string
		want           bool
	}{
		{"auth", "auth", true},
		{"Auth", "auth", true},
		{"src/server/auth", "auth", true},
		{"auth/jwt", "auth", true},
		{"net/http/httptest", "net/http", true},
		{"net/http", "http", true},
		{"authentication", "auth", false},
		{"src/oauth", "auth", false},
		{"", "auth", false},
		{"auth", "", false},
	}
	for _, tt := range tests {
		if got := ModuleMatches(tt.module, tt.filter); got != tt.want {
			t.Errorf("ModuleMatches(%q, %q) = %v, want %v", tt.module, tt.filter, got, tt.want)
		}
	}
}

// FuzzTokens: any query text tokenizes without panicking into lower-case,
// bounded, non-empty terms.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"how does authentication work", "parseHTTPHeader", "a_b-c.d", "\xff\xfe", "ǅungla ΣΑΣ", strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokens(s) {
			if tok == "" || len(tok) > maxTokenBytes {
				t.Fatalf("Tokens(%q) has term %q", s, tok)
			}
			if utf8.ValidString(s) && !utf8.ValidString(tok) {
				t.Fatalf("Tokens(%q) has invalid UTF-8 term %q", s, tok)
			}
		}
	})
}

// FuzzTokensAsDefined: Tokens (which splits ASCII words byte by byte)
// gives the terms of its definition, written rune by rune with the
// Unicode tables: split at non-letters and camelCase humps, lower-cased,
// stop words dropped, stemmed.
func FuzzTokensAsDefined(f *testing.F) {
	for _, s := range []string{"parseHTTPHeader utf8 HTTP2Server", "snake_case_NAME", "Größe überHTTP", "aB1cDE", "queries running caches",
		"\xff\xfeABCdef", strings.Repeat("Ab", 30), "the THE The", "ΣΑΣaB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Tokens(s), definedTokens(s); !slices.Equal(got, want) {
			t.Fatalf("Tokens(%q) = %q, want %q", s, got, want)
		}
	})
}

// definedTokens is Tokens as defined, in the plainest code.
func definedTokens(text string) []string {
	var out []string
	emit := func(w string) {
		if len(w) > maxTokenBytes || stopWords[w] {
			return
		}
		out = append(out, Stem(w))
	}
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) }) {
		parts := splitCamel(word)
		for _, p := range parts {
			emit(strings.ToLower(p))
		}
		if len(parts) > 1 {
			emit(strings.ToLower(word))
		}
	}
	return out
}
