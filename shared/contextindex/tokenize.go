package contextindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// maxTokenBytes drops longer "words" (base64 blobs, hashes, minified
// code): they never match a query and would bloat the dictionary.
const maxTokenBytes = 40

// stopWords are English words too common to tell documents apart. They
// are dropped from documents and queries alike.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "did": true, "do": true, "does": true, "for": true, "from": true, "had": true,
	"has": true, "have": true, "how": true, "i": true, "in": true, "into": true, "is": true, "it": true,
	"its": true, "of": true, "on": true, "or": true, "our": true, "so": true, "than": true, "that": true,
	"the": true, "their": true, "then": true, "there": true, "these": true, "this": true, "to": true,
	"was": true, "we": true, "were": true, "what": true, "when": true, "where": true, "which": true,
	"who": true, "why": true, "will": true, "with": true, "you": true, "your": true,
}

// maxStopWord is the length of the longest stop word: longer words are
// not looked up.
var maxStopWord = func() int {
	n := 0
	for w := range stopWords {
		n = max(n, len(w))
	}
	return n
}()

// Tokens splits text the way code and notes are written and returns the
// index terms: words are split at anything that is not a letter or digit,
// at snake_case underscores and at camelCase humps ("parseHTTPHeader" →
// parse, http, header, plus the whole "parsehttpheader"), lower-cased,
// stripped of stop words and lightly stemmed (Stem).
func Tokens(text string) []string {
	var out []string
	var t tokenizer
	t.each(text, func(term string) { out = append(out, strings.Clone(term)) })
	return out
}

// tokenizer finds the terms of texts as Tokens describes. Building an
// index tokenizes every byte of the repository, so it works on bytes and
// reuses one buffer: a word of ASCII letters and digits (nearly every
// word of code) is split and lower-cased without allocating; other words
// go through the Unicode tables.
type tokenizer struct {
	buf []byte // the term being made
}

// each calls emit with every term of text, in order. The term is the
// tokenizer's buffer: it is valid only until emit returns.
func (t *tokenizer) each(text string, emit func(term string)) {
	for i := wordStart(text, 0); i < len(text); i = wordStart(text, i) {
		end, ascii := wordEnd(text, i)
		t.word(text[i:end], ascii, emit)
		i = end
	}
}

// isWordByte says which ASCII bytes are letters or digits.
var isWordByte = func() (w [utf8.RuneSelf]bool) {
	for c := range w {
		w[c] = isWordRune(rune(c))
	}
	return w
}()

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// wordStart returns the offset of the first letter or digit of text at or
// after i, or len(text).
func wordStart(text string, i int) int {
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf {
			if isWordByte[c] {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			return i
		}
		i += n
	}
	return i
}

// wordEnd returns where the word that starts at i ends, and whether it is
// all ASCII.
func wordEnd(text string, i int) (int, bool) {
	ascii := true
	for i < len(text) {
		if c := text[i]; c < utf8.RuneSelf {
			if !isWordByte[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			break
		}
		ascii = false
		i += n
	}
	return i, ascii
}

// word emits the terms of one word: its camelCase parts (see splitCamel)
// and, when there are several, the whole word.
func (t *tokenizer) word(word string, ascii bool, emit func(string)) {
	if !ascii {
		parts := splitCamel(word)
		for _, p := range parts {
			t.term(p, false, emit)
		}
		if len(parts) > 1 {
			t.term(word, false, emit)
		}
		return
	}
	start := 0
	for i := 1; i < len(word); i++ {
		if asciiHump(word, i) {
			t.term(word[start:i], true, emit)
			start = i
		}
	}
	t.term(word[start:], true, emit)
	if start > 0 {
		t.term(word, true, emit)
	}
}

// term emits a part of a word lower-cased and stemmed, unless it is too
// long or a stop word.
func (t *tokenizer) term(part string, ascii bool, emit func(string)) {
	if ascii {
		t.buf = append(t.buf[:0], part...)
		for i, c := range t.buf {
			if 'A' <= c && c <= 'Z' {
				t.buf[i] = c + 'a' - 'A'
			}
		}
	} else {
		t.buf = append(t.buf[:0], strings.ToLower(part)...)
	}
	if len(t.buf) > maxTokenBytes || len(t.buf) <= maxStopWord && stopWords[string(t.buf)] {
		return
	}
	t.buf = stem(t.buf)
	emit(unsafe.String(unsafe.SliceData(t.buf), len(t.buf)))
}

// asciiHump reports whether a part of an ASCII word starts at i > 0, by
// the rules of splitCamel.
func asciiHump(word string, i int) bool {
	c, prev := word[i], word[i-1]
	switch {
	case isDigit(c) != isDigit(prev):
		return true
	case isUpper(c) && isLower(prev):
		return true
	case isUpper(c) && isUpper(prev) && i+1 < len(word) && isLower(word[i+1]):
		return true
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// splitCamel splits one word (letters and digits only) at camelCase humps,
// acronym ends and letter/digit changes: "HTTPServer2Go" → HTTP, Server,
// 2, Go.
func splitCamel(word string) []string {
	var parts []string
	start := 0
	prev := rune(-1)
	for i, r := range word {
		if i > start {
			next, _ := utf8.DecodeRuneInString(word[i+utf8.RuneLen(r):])
			split := false
			switch {
			case unicode.IsDigit(r) != unicode.IsDigit(prev):
				split = true
			case unicode.IsUpper(r) && unicode.IsLower(prev):
				split = true // fooBar
			case unicode.IsUpper(r) && unicode.IsUpper(prev) && unicode.IsLower(next):
				split = true // HTTPServer: split before the S
			}
			if split {
				parts = append(parts, word[start:i])
				start = i
			}
		}
		prev = r
	}
	return append(parts, word[start:])
}

// Stem removes common English inflections, conservatively, so that
// "tokens", "locked", "locking" and "caches" meet "token", "lock" and
// "cache": plural -s/-es/-ies, -ing, -ed and a final -e. Words of three
// letters or fewer are left alone.
func Stem(w string) string { return string(stem([]byte(w))) }

// stem is Stem in place: it returns w shortened, or with its end
// replaced.
func stem(w []byte) []byte {
	n := len(w)
	if n <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && n > 4:
		return append(w[:n-3], 'y')
	case hasSuffix(w, "sses"):
		return w[:n-2]
	case hasSuffix(w, "ches") || hasSuffix(w, "shes") || hasSuffix(w, "xes"):
		return w[:n-2]
	case hasSuffix(w, "ss") || hasSuffix(w, "us") || hasSuffix(w, "is"):
		return w
	case hasSuffix(w, "s"):
		return trimE(w[:n-1])
	case hasSuffix(w, "ing") && n > 5:
		return undouble(w[:n-3])
	case hasSuffix(w, "ed") && n > 4:
		return undouble(w[:n-2])
	}
	return trimE(w)
}

func hasSuffix(w []byte, s string) bool { return len(w) >= len(s) && string(w[len(w)-len(s):]) == s }

// trimE drops a final "e" from words longer than four letters ("cache" →
// "cach", to meet "caching" and "cached").
func trimE(w []byte) []byte {
	if len(w) > 4 && w[len(w)-1] == 'e' {
		return w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from "running") into "run"; l, s and z stay
// doubled ("call", "pass", "buzz").
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return trimE(w)
}

func isASCIILower(w []byte) bool {
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
