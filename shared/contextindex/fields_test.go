package contextindex

import (
	"slices"
	"strings"
	"testing"
)

func TestNameTerms(t *testing.T) {
	tests := []struct {
		name, module string
		want         []string
	}{
		{"function Is", "errors", []string{"errors.is"}}, // "is" is a stop word, errors.is is not
		{"method Decoder.Decode", "encoding/json", []string{"decoder", "decod", "decoder.decode", "json.decoder"}},
		{"method MIMEHeader.Get", "net/textproto", []string{"mime", "header", "mimeheader", "get", "mimeheader.get", "textproto.mimeheader"}},
		{"class Reader", "net/textproto", []string{"reader", "textproto.reader"}},
		{"constant DefaultMaxHeaderBytes", "net/http", []string{"default", "max", "header", "byte", "defaultmaxheaderbyt", "http.defaultmaxheaderbytes"}},
		{"module textproto", "net/textproto", []string{"textproto"}},
		{"function main", "", []string{"main"}},
		{"method JSONDecoder.raw_decode", "json", []string{"json", "decoder", "jsondecoder", "raw", "decod", "jsondecoder.raw_decode", "json.jsondecoder"}},
		{"function spool", "tempfile", []string{"spool", "tempfile.spool"}},
		{"Installing", "", []string{"install"}}, // a Markdown heading
		{"", "x", nil},
	}
	for _, tt := range tests {
		if got := nameTerms(tt.name, tt.module); !slices.Equal(got, tt.want) {
			t.Errorf("nameTerms(%q, %q) = %q, want %q", tt.name, tt.module, got, tt.want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"how does errors.Is walk a chain", []string{"error", "walk", "chain", "errors.is"}},
		{"json.Decoder.Decode", []string{"json", "decoder", "decod", "json.decoder", "decoder.decode"}},
		{"see net/http.", []string{"see", "net", "http"}},
		{"a.", []string{}},
	}
	for _, tt := range tests {
		if got := QueryTerms(tt.in); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTermsFitAWord: no term is longer than a word may be (the lexicon's
// decoder refuses longer ones), however long the names.
func TestTermsFitAWord(t *testing.T) {
	long := strings.Repeat("Long", maxTokenBytes/4)
	check := func(what string, terms []string) {
		for _, term := range terms {
			if len(term) > maxTokenBytes {
				t.Errorf("%s: term %q is %d bytes", what, term, len(term))
			}
		}
	}
	check("name", nameTerms("method "+long+"."+long, "pkg/"+long))
	check("query", QueryTerms(long+"."+long+".x x."+long))
	fits := strings.Repeat("l", maxTokenBytes-2)
	if !slices.Contains(nameTerms("method "+fits+".M", "p"), fits+".m") {
		t.Errorf("a qualified name of exactly %d bytes was left out", maxTokenBytes)
	}
}

func TestEachComment(t *testing.T) {
	text := "// Sign signs a token.\n//\n// It never fails.\nfunc Sign() {\n\t# not go, but a comment\n\tx := 1 // trailing: not a comment line\n\t/* block\n\t * more\n\t */\n}\n-- SQL comment\n"
	want := " Sign signs a token.\n\n It never fails.\n not go, but a comment\n block\n more\n/\n SQL comment\n"
	var b strings.Builder
	eachComment(text, func(c string) { b.WriteString(c) })
	if got := b.String(); got != want {
		t.Errorf("eachComment gave %q, want %q", got, want)
	}
}

func TestIsTest(t *testing.T) {
	for p, want := range map[string]bool{
		"net/http/server.go":                    false,
		"net/http/server_test.go":               true,
		"net/http/testdata/file":                true,
		"test/fixedbugs/issue1.go":              true,
		"src/app.test.ts":                       true,
		"src/app.spec.js":                       true,
		"pkg/test_client.py":                    true,
		"pkg/client_test.py":                    true,
		"src/__tests__/a.js":                    true,
		"cmd/go/internal/test/test.go":          true, // a folder named test
		"internal/testenv/testenv.go":           false,
		"testing/testing.go":                    false,
		"contest/latest.go":                     false,
		"docs/testing-guide.md":                 false,
		"spec/fixtures/x.json":                  true,
		"runtime/testdata/testprog/gc.go":       true,
		"cmd/compile/internal/test/inl_test.go": true,
		"cmd/compile/internal/types2/api.go":    false,
		"x/tests.go":                            false,
		"x/attest.go":                           false,
	} {
		if got := isTest(p); got != want {
			t.Errorf("isTest(%q) = %t, want %t", p, got, want)
		}
	}
}
