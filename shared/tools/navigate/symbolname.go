package navigate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the tools read of a SCIP symbol string
// (https://github.com/sourcegraph/scip, scip.proto's Symbol grammar):
// "<scheme> <package> <descriptors>", each descriptor a name and a suffix
// — namespace/, type#, term., meta:, macro!, method(disambiguator).,
// [type-parameter], (parameter) — names plain or between backticks (a
// backtick in them doubled); or "local <id>" (with its document, as
// package precise gives it). The tools read the last names of a symbol
// and whether it is a method, without linking SCIP's own parser into the
// tool functions.

// symbolName returns the name of a symbol's last descriptor ("" for a
// local symbol, or a string that is not a symbol).
func symbolName(symbol string) string {
	_, name := splitLast(symbol)
	return name
}

// ownerName returns the name of the descriptor before a symbol's last
// one: a method's type, a type's package ("" when there is none).
func ownerName(symbol string) string {
	owner, _ := splitLast(symbol)
	return symbolName(owner)
}

// splitLast splits a symbol before its last descriptor, returning what
// comes before it and its name ("" and "" for a local symbol, or a string
// that is not a symbol).
func splitLast(symbol string) (before, name string) {
	if strings.HasPrefix(symbol, "local ") {
		return "", ""
	}
	s := symbol
	switch {
	case strings.HasSuffix(s, ")."): // a method, with its disambiguator
		i := strings.LastIndexByte(s[:len(s)-2], '(')
		if i < 0 {
			return "", ""
		}
		s = s[:i]
	case s != "" && strings.ContainsRune("/#.:!])", rune(s[len(s)-1])):
		s = s[:len(s)-1]
	default:
		return "", ""
	}
	i, ok := lastNameAt(s)
	if !ok {
		return "", ""
	}
	name = s[i:]
	if strings.HasSuffix(name, "`") {
		name = strings.ReplaceAll(name[1:len(name)-1], "``", "`")
	}
	return strings.TrimRight(s[:i], "[("), name
}

// lastNameAt returns where the name s ends with starts: an escaped one
// (between backticks, a backtick in it doubled) or a plain one.
func lastNameAt(s string) (int, bool) {
	if strings.HasSuffix(s, "`") {
		for i := len(s) - 2; i >= 0; i-- {
			if s[i] != '`' {
				continue
			}
			if i > 0 && s[i-1] == '`' {
				i-- // an escaped backtick
				continue
			}
			return i, true
		}
		return 0, false
	}
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if r != '_' && r != '+' && r != '-' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i -= size
	}
	return i, true
}

// isCallable reports whether a symbol is a function or method (SCIP's
// method descriptor, which indexers give functions too).
func isCallable(symbol string) bool {
	return !strings.HasPrefix(symbol, "local ") && strings.HasSuffix(symbol, ").")
}

// kindName is how answers give a SCIP kind: "Method" as "method",
// "TypeAlias" as "typeAlias".
func kindName(kind string) string {
	if kind == "" {
		return ""
	}
	return strings.ToLower(kind[:1]) + kind[1:]
}
