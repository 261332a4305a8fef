package contextindex

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// Tokens splits text the way code and notes are written and returns the
// index terms: words are split at anything that is not a letter or digit,
// at snake_case underscores and at camelCase humps ("parseHTTPHeader" →
// parse, http, header, plus the whole "parsehttpheader"), lower-cased,
// stripped of stop words and lightly stemmed (Stem).
func Tokens(text string) []string {
	var out []string
	emit := func(w string) {
		if len(w) > maxTokenBytes || stopWords[w] {
			return
		}
		out = append(out, Stem(w))
	}
	for len(text) > 0 {
		// Skip to the start of a word.
		i := strings.IndexFunc(text, isWordRune)
		if i < 0 {
			break
		}
		text = text[i:]
		end := strings.IndexFunc(text, func(r rune) bool { return !isWordRune(r) })
		if end < 0 {
			end = len(text)
		}
		word := text[:end]
		text = text[end:]
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

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

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
func Stem(w string) string {
	n := len(w)
	if n <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return trimE(w[:n-1])
	case strings.HasSuffix(w, "ing") && n > 5:
		return undouble(w[:n-3])
	case strings.HasSuffix(w, "ed") && n > 4:
		return undouble(w[:n-2])
	}
	return trimE(w)
}

// trimE drops a final "e" from words longer than four letters ("cache" →
// "cach", to meet "caching" and "cached").
func trimE(w string) string {
	if len(w) > 4 && w[len(w)-1] == 'e' {
		return w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from "running") into "run"; l, s and z stay
// doubled ("call", "pass", "buzz").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return trimE(w)
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
