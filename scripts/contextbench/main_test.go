package main

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestQuestions checks the labels of questions.json: enough questions of
// every class, each relevant file a Go source file of the tree that the
// repository view lists, and each question of the class it claims (see
// classProblem).
func TestQuestions(t *testing.T) {
	root := filepath.Join(goroot(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	qs, err := loadQuestions("questions.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 60 {
		t.Errorf("%d questions, want at least 60", len(qs))
	}
	perClass := map[string]int{}
	seen := map[string]bool{}
	for _, q := range qs {
		perClass[q.Class]++
		key := strings.ToLower(strings.TrimSpace(q.Question))
		if seen[key] {
			t.Errorf("duplicate question %q", q.Question)
		}
		seen[key] = true
		if strings.TrimSpace(q.Why) == "" {
			t.Errorf("%q: no why", q.Question)
		}
		var sources []string
		for _, rel := range q.Relevant {
			if problem := relevantProblem(root, rel); problem != "" {
				t.Errorf("%q: relevant %s: %s", q.Question, rel, problem)
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			sources = append(sources, string(data))
		}
		if len(sources) != len(q.Relevant) {
			continue
		}
		if problem := classProblem(q, sources); problem != "" {
			t.Errorf("%s %q: %s", q.Class, q.Question, problem)
		}
	}
	for _, c := range classes {
		if perClass[c] < 20 {
			t.Errorf("class %s: %d questions, want at least 20", c, perClass[c])
		}
	}
}

// relevantProblem says what is wrong with a relevant path, "" for
// nothing: it must be a regular file of the tree, under no folder the
// repository view skips (testdata is kept out of labels too), a Go file.
func relevantProblem(root, rel string) string {
	if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || strings.Contains(rel, "\\") {
		return "not a clean relative slash path"
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") || el == "testdata" || el == "node_modules" || el == "dist" || el == "build" {
			return "in a folder or file the view skips (or testdata)"
		}
	}
	if !strings.HasSuffix(rel, ".go") {
		return "not a Go file"
	}
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err.Error()
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file"
	}
	return ""
}

// classProblem checks that a question is of its class, against the
// sources of its relevant files:
//
//   - no-identifier: none of its content words (words as the baseline
//     takes them, and two-letter words) is, stemmed, a word of an
//     identifier of any relevant file once camelCase and snake_case are
//     split (or the whole identifier), nor of the file's path;
//   - plain-words: written in plain words (no camelCase, snake_case or
//     dotted names), at least two of its content words occur as words in
//     a relevant file (code or comments);
//   - named: it names (as written in the code) a function, method, type,
//     variable or constant declared in a relevant file.
func classProblem(q question, sources []string) string {
	switch q.Class {
	case classNoIdent:
		var clash []string
		for i, src := range sources {
			idents := identifierWords(q.Relevant[i], src)
			for _, w := range questionCheckWords(q.Question) {
				if idents[stem(w)] {
					clash = append(clash, w+" ("+path.Base(q.Relevant[i])+")")
				}
			}
		}
		if len(clash) > 0 {
			return "shares identifier words with its target: " + strings.Join(clash, ", ")
		}
	case classPlain:
		if codeLike.MatchString(q.Question) {
			return "names an identifier: " + codeLike.FindString(q.Question)
		}
		best := 0
		for _, src := range sources {
			n := 0
			for _, w := range uniq(contentWords(q.Question)) {
				if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`).MatchString(src) {
					n++
				}
			}
			best = max(best, n)
		}
		if best < 2 {
			return "fewer than two of its words occur in a relevant file"
		}
	case classNamed:
		for i, src := range sources {
			decl := declaredNames(q.Relevant[i], src)
			for _, name := range nameLike.FindAllString(q.Question, -1) {
				for _, part := range strings.Split(name, ".") {
					if decl[part] {
						return ""
					}
				}
			}
		}
		return "names nothing declared in its relevant files"
	default:
		return "unknown class"
	}
	return ""
}

var (
	// codeLike is a word written as code: camelCase, snake_case or a
	// dotted name.
	codeLike = regexp.MustCompile(`\b\w*([a-z][A-Z]|_)\w*\b|\b[A-Za-z]\w*\.[A-Za-z]\w*\b`)
	// nameLike is a word or dotted name that may be an identifier.
	nameLike = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*`)
)

// questionCheckWords are the words of a question that a no-identifier
// question must not share with its target: every word of two letters or
// more but a few function words (fewer than the baseline's stop words:
// "get", "make", "one" or "out" are parts of identifiers too).
func questionCheckWords(q string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(q), -1) {
		if len(w) >= 2 && !functionWords[w] {
			out = append(out, w)
		}
	}
	return uniq(out)
}

// functionWords are English words that carry no meaning of their own.
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be been by can could do does for from has have how
		if in into is it its of on or so such than that the their them then there these they this those
		to was we were what when where whether which while who why will with would you your`) {
		functionWords[w] = true
	}
}

// identifierWords returns the stemmed words of the identifiers of a Go
// source file (every identifier token, predeclared names included), each
// whole and split at camelCase humps, underscores and digits, and of the
// file's path.
func identifierWords(rel, src string) map[string]bool {
	words := map[string]bool{}
	add := func(ident string) {
		words[stem(strings.ToLower(strings.ReplaceAll(ident, "_", "")))] = true
		for _, p := range splitIdent(ident) {
			words[stem(strings.ToLower(p))] = true
		}
	}
	for _, el := range strings.Split(strings.TrimSuffix(rel, ".go"), "/") {
		add(el)
	}
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile(rel, -1, len(src)), []byte(src), nil, 0)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.IDENT {
			add(lit)
		}
	}
	return words
}

// splitIdent splits an identifier at underscores, digits and camelCase
// humps ("parseHTTPHeader_v2" → parse, HTTP, Header, v, 2).
func splitIdent(id string) []string {
	var parts []string
	for _, chunk := range strings.FieldsFunc(id, func(r rune) bool { return r == '_' }) {
		rs := []rune(chunk)
		start := 0
		for i := 1; i < len(rs); i++ {
			prev, r := rs[i-1], rs[i]
			next := rune(0)
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			if unicode.IsDigit(r) != unicode.IsDigit(prev) ||
				(unicode.IsUpper(r) && unicode.IsLower(prev)) ||
				(unicode.IsUpper(r) && unicode.IsUpper(prev) && unicode.IsLower(next)) {
				parts = append(parts, string(rs[start:i]))
				start = i
			}
		}
		parts = append(parts, string(rs[start:]))
	}
	return parts
}

// stem strips common English inflections, crudely and generously (a
// check that two words differ only by them is meant to catch them):
// -ies, -es, -s, -ing, -ed, -er and a final -e, as long as three letters
// are left, repeatedly ("headers" → "header" → "head").
func stem(w string) string {
	for {
		s := w
		for _, suf := range []string{"ies", "ing", "es", "ed", "er", "s", "e"} {
			if strings.HasSuffix(s, suf) && len(s)-len(suf) >= 3 {
				s = strings.TrimSuffix(s, suf)
				if suf == "ies" {
					s += "y"
				}
				break
			}
		}
		if n := len(s); n >= 4 && s[n-1] == s[n-2] && !strings.ContainsRune("aeiouls", rune(s[n-1])) {
			s = s[:n-1] // running → runn → run
		}
		if s == w {
			return w
		}
		w = s
	}
}

// declaredNames returns the names a Go file declares: functions,
// methods, types, variables, constants, struct fields and interface
// methods.
func declaredNames(rel, src string) map[string]bool {
	names := map[string]bool{}
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	if err != nil {
		return names
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			names[n.Name.Name] = true
		case *ast.TypeSpec:
			names[n.Name.Name] = true
		case *ast.ValueSpec:
			for _, id := range n.Names {
				names[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

// TestClassProblem checks the class checks on a made-up file.
func TestClassProblem(t *testing.T) {
	const src = `package textproto

// readHeader reads the header lines of a message, joining continued lines.
func readHeader(max int) (MIMEHeader, error) { return nil, nil }
`
	for _, c := range []struct {
		class, question string
		ok              bool
	}{
		{classNoIdent, "where are the key value pairs at the top of a mail message gathered", true},
		{classNoIdent, "where are the headers of a mail message gathered", false}, // header
		{classNoIdent, "where are mail lines read up to a maximum", false},        // read
		{classNoIdent, "which textproto helper gathers key value pairs", false},   // the package
		{classPlain, "where are header lines of a message read", true},
		{classPlain, "where are header lines joined", true},
		{classPlain, "what does readHeader do", false},
		{classPlain, "where is the mail gathered", false},
		{classNamed, "what does readHeader do with continued lines", true},
		{classNamed, "what does MIMEHeader hold", false}, // used, not declared here
		{classNamed, "where are header lines read", false},
	} {
		q := question{Class: c.class, Question: c.question, Relevant: []string{"net/textproto/reader.go"}}
		problem := classProblem(q, []string{src})
		if (problem == "") != c.ok {
			t.Errorf("%s %q: problem %q, want ok %v", c.class, c.question, problem, c.ok)
		}
	}
	if got := splitIdent("parseHTTPHeader_v2"); strings.Join(got, " ") != "parse HTTP Header v 2" {
		t.Errorf("splitIdent = %q", got)
	}
}
