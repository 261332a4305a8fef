package contextindex

import (
	"path"
	"strings"
)

// The fields BM25F scores, each with its own weight and length
// normalisation. A code chunk's name (its declaration or heading) and doc
// comment say what it is about, so a word there counts more than one in
// its body; a note's module is a label its author chose. The path counts
// least: it is shared by every chunk of a file.
const (
	fieldContent = iota // the text, comments and code alike
	fieldName           // code: the declared name, pkg.Name and Type.Method (see nameTerms)
	fieldDoc            // code: the comment lines (see eachComment)
	fieldModule         // the module: a note's label and type, a chunk's folder
	fieldPath           // code: the file's path
	numFields
)

// The fields' weights and length normalisation (BM25's b), tuned on
// contextbench's tuning half: a word of a declaration's name counts four
// times one of its body, and a long body is normalised nearly in full.
var (
	fieldWeight = [numFields]float64{1.0, 4.0, 1.5, 3.0, 0.5}
	fieldB      = [numFields]float64{0.9, 0.3, 0.6, 0.3, 0.5}
)

// addDoc counts the terms of each field of d.
func (b *lexiconBuilder) addDoc(d *Doc) {
	b.text(fieldContent, d.Content)
	if d.Source != SourceCode {
		// A note is also labelled by its type: "the MIME header size
		// decision" names a decision.
		b.text(fieldModule, d.Module+" "+d.Type)
		b.endDoc()
		return
	}
	b.terms(fieldName, nameTerms(d.Name, d.Module))
	eachComment(d.Content, func(c string) { b.text(fieldDoc, c) })
	b.shared(fieldPath, d.Path)
	b.shared(fieldModule, d.Module)
	b.endDoc()
}

// nameTerms are the terms of a chunk's name (its kind of symbol and its
// name, "method Decoder.Decode" in encoding/json): the words of the name
// without its kind (decoder, decode) and the qualified names an agent
// writes, lower-cased, as single terms: package.Name (json.decoder for a
// method's type, json.decode for a function) and Type.Method
// (decoder.decode). QueryTerms finds the same in a question ("what does
// json.Decoder.Decode do").
func nameTerms(name, module string) []string {
	kind, rest, ok := strings.Cut(name, " ")
	if !ok {
		return Tokens(name)
	}
	terms := Tokens(rest)
	pkg := ""
	if module != "" {
		pkg = path.Base(module)
	}
	ident := lastIdent(rest)
	switch {
	case kind == "module": // a package or namespace: already its own name
	case strings.Contains(rest, "."):
		// A member named with its container ("method Reader.read").
		container := lastIdent(rest[:strings.LastIndexByte(rest, '.')])
		terms = appendQualified(terms, container, ident)
		terms = appendQualified(terms, pkg, container)
	default:
		terms = appendQualified(terms, pkg, ident)
	}
	return terms
}

// appendQualified appends the term "a.b", lower-cased, unless a or b is
// empty or the term is longer than a word may be (maxTokenBytes).
func appendQualified(terms []string, a, b string) []string {
	if a == "" || b == "" || len(a)+1+len(b) > maxTokenBytes {
		return terms
	}
	return append(terms, strings.ToLower(a+"."+b))
}

// lastIdent is the last identifier in s ("Decode" of "(*Decoder) Decode",
// "Decoder" of "(dec *Decoder)").
func lastIdent(s string) string {
	end := len(s)
	for end > 0 && !isIdentByte(s[end-1]) {
		end--
	}
	start := end
	for start > 0 && isIdentByte(s[start-1]) {
		start--
	}
	return s[start:end]
}

func isIdentByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// eachComment calls fn with the comment lines of a chunk, those that
// start, after indentation, with //, /*, *, # or --, without that mark.
func eachComment(text string, fn func(comment string)) {
	for line := range strings.Lines(text) {
		t := strings.TrimLeft(line, " \t")
		for _, p := range commentMarks {
			if strings.HasPrefix(t, p) {
				fn(t[len(p):])
				break
			}
		}
	}
}

// commentMarks start comment lines (see eachComment).
var commentMarks = []string{"//", "/*", "*", "#", "--"}

// QueryTerms returns the terms of a question: its Tokens, and the
// qualified names it writes (errors.Is, json.Decoder.Decode) as the
// single terms nameTerms makes (errors.is; json.decoder, decoder.decode),
// so "errors.Is" finds the function Is of package errors though "is" is a
// stop word.
func QueryTerms(text string) []string {
	terms := Tokens(text)
	for _, field := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '.' || r == '_' || r >= 0x80 || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) {
		parts := strings.Split(field, ".")
		for i := 0; i+1 < len(parts); i++ {
			terms = appendQualified(terms, parts[i], parts[i+1])
		}
	}
	return terms
}

// testPrior scales the scores of code in tests and test data: an agent
// asking how something works wants the code that does it first, and the
// tests that exercise it next.
const testPrior = 0.6

// isTest reports whether a file is a test or test data, by the
// conventions of common languages: a testdata, test, tests, __tests__,
// spec or fixtures folder, or a name like x_test.go, x.test.ts,
// x.spec.js, test_x.py or x_test.py.
func isTest(p string) bool {
	dir, name := path.Split(p)
	for seg := range strings.SplitSeq(strings.Trim(dir, "/"), "/") {
		switch seg {
		case "testdata", "test", "tests", "__tests__", "spec", "fixtures":
			return true
		}
	}
	stem := strings.TrimSuffix(name, path.Ext(name))
	return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		strings.HasPrefix(stem, "test_")
}
