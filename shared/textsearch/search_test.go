package textsearch_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/textsearch"
)

func TestPlans(t *testing.T) {
	tests := []struct {
		pattern       string
		caseSensitive bool
		plan          string
	}{
		{"func", true, `literals "func" fold=false exact=true`},
		{"func", false, `literals "func" fold=true exact=true`},
		{"interface.*Context", true, `literals "interface" fold=false exact=false`},
		{"TODO|FIXME|XXX", false, `literals "todo"|"fixme"|"xxx" fold=true exact=true`},
		{"(foo)+bar", true, `literals "foo" fold=false exact=false`},
		{"jwt.sign", false, `literals "jwt" fold=true exact=false`},
		// k and s have non-ASCII case variants (KELVIN SIGN, LONG S): the
		// prefilter keeps the longest run without them.
		{"kubernetes", false, `literals "ubernete" fold=true exact=false`},
		{"(?i:Foo)|bar", true, `literals "foo"|"bar" fold=true exact=false`},
		{"[A-Z]{3,}", true, "whole file"},
		{"x*", true, "whole file"},
		{`\Afoo`, true, "every line"},
		{`foo\z`, true, "every line"},
		{"^foo$", true, `literals "foo" fold=false exact=false`},
	}
	for _, tc := range tests {
		q, err := textsearch.Compile(tc.pattern, tc.caseSensitive)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := q.String(); got != tc.plan {
			t.Errorf("%s (case-sensitive %t): plan %s, want %s", tc.pattern, tc.caseSensitive, got, tc.plan)
		}
	}
	for _, bad := range []string{"[invalid(", "foo(?=bar)", "a{1001}"} {
		if _, err := textsearch.Compile(bad, true); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}

// scan is the definition Search must agree with: each line (split at
// "\n") matched on its own by the regular expression. As for ripgrep, an
// empty text has no lines, and a final "\n" ends the last line.
func scan(pattern string, caseSensitive bool, text string) []string {
	if !caseSensitive {
		pattern = "(?i)" + pattern
	}
	re := regexp.MustCompile(pattern)
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	var out []string
	for i, l := range lines {
		if loc := re.FindStringIndex(l); loc != nil {
			out = append(out, fmt.Sprintf("%d:%d", i+1, loc[0]+1))
		}
	}
	return out
}

// windows are the window sizes searchText tries besides the query's own:
// one line at a time, and a few short lines.
var windows = []int{1, 2, 7}

// searchText searches text as one file, with the query's window and with
// each of windows, and resumed after each of its lines, and returns the
// matches ("line:column") and the total when they all agree.
func searchText(t *testing.T, pattern string, caseSensitive bool, text string) ([]string, int) {
	t.Helper()
	q, err := textsearch.Compile(pattern, caseSensitive)
	if err != nil {
		t.Fatal(err)
	}
	search := func(after int) ([]string, int) {
		files := []*repo.File{repo.NewFile("f", []byte(text), time.Time{})}
		res := textsearch.Search(context.Background(), files, q, textsearch.Options{Limit: 1 << 20, After: textsearch.Position{Path: "f", Line: after}})
		if !res.Complete || res.FilesSearched != 1 {
			t.Fatalf("search without a deadline: complete %v, %d files searched", res.Complete, res.FilesSearched)
		}
		var out []string
		for _, m := range res.Matches {
			out = append(out, fmt.Sprintf("%d:%d", m.Line, m.Column))
		}
		return out, res.Total
	}
	out, total := search(0)
	// Resumed after each line, it finds the lines after that one.
	for after := 1; after <= strings.Count(text, "\n")+1; after++ {
		var want []string
		for _, m := range out {
			if line, _, _ := strings.Cut(m, ":"); atoi(line) > after {
				want = append(want, m)
			}
		}
		if got, n := search(after); strings.Join(got, " ") != strings.Join(want, " ") || n != len(want) {
			t.Fatalf("%q case-sensitive %t on %q after line %d: %v (total %d), want %v", pattern, caseSensitive, text, after, got, n, want)
		}
	}
	for _, w := range windows {
		textsearch.SetWindow(q, w)
		if got, n := search(0); strings.Join(got, " ") != strings.Join(out, " ") || n != total {
			t.Fatalf("%q case-sensitive %t on %q: window %d finds %v (total %d), the default window %v (total %d)",
				pattern, caseSensitive, text, w, got, n, out, total)
		}
	}
	return out, total
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestSearchAgreesWithScan(t *testing.T) {
	text := "func a() {}\nFUNC B\n\n  interface x Context\r\nKELVIN \u212a and \u017f\nstraße STRASSE\ntodo: xXx\nno newline at the end func"
	for _, p := range []string{"func", "FUNC", "interface.*Context", "Context$", `Context\r$`, "^$", "^\\s*$", "k", "s", "kelvin k",
		"ſ", "todo|xxx", "x{2,}", "[A-Z]{3,}", "a", `\Afunc`, `end func\z`, "(?i)b|(?-i:K)", ".", "nomatch",
		// Nothing matches "\n" in a line: not (?s)., classes or literals.
		"(?s).*", "(?s)func.*Context", "(?s)a.b", "(?s:.)", "(?s:.)$", "[^a]", "[^a]+$", `\s+\S`, `\n`, `a\nb`, `(?i)A\nb`,
		`\n|func`, `[\n]`, `[^\n]`, `[\n\r]`, `\r\n`, `(?m)^\s*$`, `\b\w+$`, `x*$`, `(\n)*`, `[^\n]*\n?`} {
		for _, cs := range []bool{true, false} {
			got, total := searchText(t, p, cs, text)
			want := scan(p, cs, text)
			if strings.Join(got, " ") != strings.Join(want, " ") || total != len(want) {
				t.Errorf("%q case-sensitive %t: got %v (total %d), want %v", p, cs, got, total, want)
			}
		}
	}
}

// FuzzSearch checks that whatever the prefilter, the trigram filter and
// the exact-literal shortcut decide, Search reports the lines a plain
// line-by-line regexp scan reports.
func FuzzSearch(f *testing.F) {
	f.Add("func", "func a\nb func\n", true)
	f.Add("TODO|FIXME", "x todo\nFIXME\n", false)
	f.Add("a.*b", "a\nb\naxb\r\n", true)
	f.Add("k", "\u212a\n", false)
	f.Add("^$", "\n\n", true)
	f.Add("(?i)s|x", "\u017f\n", true)
	f.Add("(?s).*", "a\n\nb\n", true)
	f.Add("(?s)a.*b", "a\nb\nab\r\n", true)
	f.Add("x(?s:.)y", "x\ny\nxzy", true)
	f.Add("[^a]", "a\n\naa\nab", true)
	f.Add("[^a]+$", "aa\nb a\n", false)
	f.Add("a\nb|c", "a\nb\nc\n", true)
	f.Add("(?i)A\nB", "a\nb\n", false)
	f.Add("\\s*\\n", "\n \n", true)
	f.Fuzz(func(t *testing.T, pattern, text string, caseSensitive bool) {
		prefix := ""
		if !caseSensitive {
			prefix = "(?i)"
		}
		// A text with a NUL is binary: no repository file holds it
		// (repo.NewFile makes none).
		if _, err := regexp.Compile(prefix + pattern); err != nil || len(pattern) > 50 || len(text) > 2000 || strings.Contains(text, "\x00") {
			return
		}
		got, total := searchText(t, pattern, caseSensitive, text)
		want := scan(pattern, caseSensitive, text)
		if strings.Join(got, " ") != strings.Join(want, " ") || total != len(want) {
			t.Fatalf("%q case-sensitive %t on %q: got %v (total %d), want %v", pattern, caseSensitive, text, got, total, want)
		}
	})
}
