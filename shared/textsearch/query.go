// Package textsearch is grep over files held in memory: a regular
// expression (RE2 syntax) is matched line by line, as ripgrep does with
// --line-number --column, and every matching line is counted.
//
// It is fast because most files are never read and the regular expression
// rarely runs. Compile takes from the parsed pattern (regexp/syntax) the
// literals a match must contain (an AND of ORs: "interface.*Context"
// needs both words, "TODO|FIXME" one of two). Search skips every file
// whose trigram filter (repo.File.Trigrams, a Bloom filter built on first
// use) lacks them, finds the literals in the other files by their rarest
// byte (bytes.IndexByte, vectorised in the Go runtime), and runs the
// regular expression only on the lines that hold one. A pattern that is
// just literals needs no regular expression at all. Case-insensitive
// searches look for lower-cased literals in text of any case (see finder). Files are searched by a worker per core.
//
// A pattern without such literals runs over many lines at once, with ^
// and $ at line ends, but rewritten so that nothing in it matches "\n"
// ("(?s)." becomes ".", classes such as [^a] lose "\n"): no match crosses
// a line, so the first match is in the first matching line, found in one
// pass however long the file (an unbounded "(?s).*" would run to the end
// of the file from every line). A pattern with \A or \z is matched line
// by line.
//
// Each file is searched in windows of whole lines, sized so that matching
// one costs about the same whatever the pattern (see windowBudget), and a
// worker looks at the context between windows: when it is done, Search
// stops within a window per worker and answers with what it found once
// every worker has returned, and how far it went in the order of the files
// (Result.Reached), where a search resumed with Options.After goes on. A single line is never split, so a line longer
// than a window is searched whole, however long it takes. Building a
// file's lower-cased copy and trigram filter (once per file, linear and
// fast) is not interrupted either.
//
// The filters only ever skip files that cannot match, so results are those
// of a plain line-by-line scan (FuzzSearch checks this). They are built in
// memory from the snapshot on first use rather than when it is published:
// that costs about what downloading the snapshot does (some 250 ms per
// 100 MB of text and core), adds nothing to fetch, and can never be stale.
//
// Lines end at "\n"; a "\r" before it is part of the line for matching
// (as in ripgrep without --crlf) and left out of the text shown.
package textsearch

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/repo"
)

// maxLiterals bounds the alternatives of a prefilter; a pattern that needs
// more is matched without one.
const maxLiterals = 32

// A file is searched in windows of whole lines, and the search stops
// between two windows once its context is done. A window holds about
// windowBudget divided by the size of the regular expression's program
// (its instructions): Go's regexp may step every instruction on every
// byte, at some 5 ns per step measured at worst, so a window costs up to
// some 20 ms. It is kept within [minWindow, maxWindow]: at least 4 KiB,
// so that starting a window (a regexp call, a look at the context) costs
// little next to searching it (past some 1,000 instructions a window may
// then cost more than the budget); at most 64 KiB, as short lines that
// all match cost some 300 ns each whatever the program. A window is never
// less than a line: a single longer line is searched whole.
const (
	windowBudget = 4 << 20 // bytes × instructions
	minWindow    = 4 << 10
	maxWindow    = 64 << 10
)

// windowFor is the window size for a regular expression.
func windowFor(re *syntax.Regexp) int {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return minWindow
	}
	return min(max(windowBudget/len(prog.Inst), minWindow), maxWindow)
}

// Query is a compiled pattern.
type Query struct {
	// line matches one line (no "\n" in it).
	line *regexp.Regexp
	// whole matches in a run of whole lines, with ^ and $ at line ends,
	// but never "\n" (see oneLine): a match lies within a line, and the
	// first match is in the first matching line. Used when there are no
	// literals to look for.
	whole *regexp.Regexp
	// window is how many bytes of a file are searched between two looks
	// at the context (see windowFor).
	window int
	// perLine: the pattern has \A or \z, which mean something else in a
	// whole file, so every line is matched on its own.
	perLine bool
	// finders are the prefilter, one per literal: every matching line
	// contains one of the literals. None: no prefilter.
	finders []finder
	// grams are, for each set of literals a match needs one of, the
	// trigrams of each literal, lower-cased: a file whose
	// repo.File.Trigrams lack, for some set, a trigram of each of its
	// literals is skipped.
	grams [][][][3]byte
	// fold: the literals are lower case and looked for in any case.
	fold bool
	// exact: a line matches if and only if it contains one of the
	// literals, and the match starts at the first of them.
	exact bool
}

// ErrInvalid wraps the parser's complaint about a pattern.
type ErrInvalid struct{ Err error }

func (e ErrInvalid) Error() string { return e.Err.Error() }

// Compile parses pattern (RE2 syntax, as Go's regexp) for a case-sensitive
// or case-insensitive search.
func Compile(pattern string, caseSensitive bool) (*Query, error) {
	flags := syntax.Perl
	prefix := ""
	if !caseSensitive {
		flags |= syntax.FoldCase
		prefix = "(?i)"
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, ErrInvalid{err}
	}
	line, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, ErrInvalid{err}
	}
	q := &Query{line: line, window: windowFor(re)}
	// Parsed in multi-line mode, ^ and $ are line anchors and only an
	// explicit \A or \z remains a text anchor.
	multi, err := syntax.Parse(pattern, flags&^syntax.OneLine)
	if err != nil || hasTextAnchor(multi) {
		q.perLine = true
		return q, nil
	}
	multi = oneLine(multi)
	whole, err := regexp.Compile(multi.String())
	if err != nil {
		// Not expected (the tree is printed to be parsed again); matching
		// every line on its own is right, only slower.
		q.perLine = true
		return q, nil
	}
	q.whole = whole
	q.window = min(q.window, windowFor(multi))
	re = re.Simplify()
	q.fold = !caseSensitive || hasFold(re)
	sets := conjuncts(re, q.fold)
	if lits := bestSet(sets); lits != nil {
		for _, l := range lits {
			q.finders = append(q.finders, newFinder(l, q.fold))
		}
		for _, set := range sets {
			if g := trigrams(set); g != nil {
				q.grams = append(q.grams, g)
			}
		}
		// A literal with a newline never matches a line: let the line
		// regexp say no.
		q.exact = isLiterals(re, q.fold) && !slices.ContainsFunc(lits, func(l []byte) bool { return bytes.IndexByte(l, '\n') >= 0 })
	}
	return q, nil
}

// hasTextAnchor reports whether re (parsed in multi-line mode) has \A or
// \z.
func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasTextAnchor)
}

// oneLine returns re rewritten so that no part of it matches "\n": any
// character becomes any character but "\n", classes lose "\n" (a class
// left empty matches nothing) and a literal holding "\n" matches nothing.
// As a line holds no "\n", the lines it matches in are those re matches,
// at the same columns; and no match crosses a line. re is not modified.
func oneLine(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpAnyChar:
		return &syntax.Regexp{Op: syntax.OpAnyCharNotNL, Flags: re.Flags &^ syntax.DotNL}
	case syntax.OpLiteral:
		// No character but "\n" itself folds to "\n", with or without
		// FoldCase.
		if slices.Contains(re.Rune, '\n') {
			return &syntax.Regexp{Op: syntax.OpNoMatch, Flags: re.Flags}
		}
		return re
	case syntax.OpCharClass:
		// Pairs of bounds; the parser has already added the case variants
		// of a FoldCase class.
		var ranges []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo > '\n' || hi < '\n' {
				ranges = append(ranges, lo, hi)
				continue
			}
			if lo < '\n' {
				ranges = append(ranges, lo, '\n'-1)
			}
			if hi > '\n' {
				ranges = append(ranges, '\n'+1, hi)
			}
		}
		if len(ranges) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch, Flags: re.Flags}
		}
		return &syntax.Regexp{Op: syntax.OpCharClass, Flags: re.Flags, Rune: ranges}
	}
	if len(re.Sub) == 0 {
		return re
	}
	out := *re
	out.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		out.Sub[i] = oneLine(s)
	}
	return &out
}

// hasFold reports whether any part of re ignores case ((?i) inside a
// case-sensitive pattern).
func hasFold(re *syntax.Regexp) bool {
	if re.Flags&syntax.FoldCase != 0 {
		return true
	}
	for _, s := range re.Sub {
		if hasFold(s) {
			return true
		}
	}
	return false
}

// conjuncts returns sets of literals such that every match of re
// contains one literal of each set (an AND of ORs), or nil when it cannot
// tell. With fold, the literals are lower-cased ASCII and hold only
// letters whose every case variant is ASCII (so a search of the folded
// text finds every variant).
func conjuncts(re *syntax.Regexp, fold bool) [][][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		if lit := literalBytes(re, fold); len(lit) > 0 {
			return [][][]byte{{lit}}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return conjuncts(re.Sub[0], fold)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return conjuncts(re.Sub[0], fold)
		}
	case syntax.OpConcat:
		var all [][][]byte
		for _, s := range re.Sub {
			all = append(all, conjuncts(s, fold)...)
		}
		return all
	case syntax.OpAlternate:
		// One set: for each branch, the literals of its best set.
		var union [][]byte
		for _, s := range re.Sub {
			best := bestSet(conjuncts(s, fold))
			if best == nil {
				return nil
			}
			union = append(union, best...)
		}
		if union = dedupe(union); len(union) <= maxLiterals {
			return [][][]byte{union}
		}
	}
	return nil
}

// bestSet picks the set to scan for: fewer alternatives whose shortest is
// longer.
func bestSet(sets [][][]byte) [][]byte {
	var best [][]byte
	for _, s := range sets {
		if better(s, best) {
			best = s
		}
	}
	return best
}

// better prefers fewer alternatives whose shortest is longer.
func better(a, b [][]byte) bool {
	if b == nil {
		return true
	}
	if len(a) > maxLiterals {
		return false
	}
	return shortest(a)*len(b) > shortest(b)*len(a)
}

func shortest(lits [][]byte) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

func dedupe(lits [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lits {
		dup := false
		for _, o := range out {
			if bytes.Equal(o, l) {
				dup = true
			}
		}
		if !dup {
			out = append(out, l)
		}
	}
	return out
}

// literalBytes is a literal's bytes for the prefilter. Case-sensitive
// literals are exact (lower-cased when the search is folded). A
// case-folded literal gives its longest run of fold-safe ASCII characters.
func literalBytes(re *syntax.Regexp, fold bool) []byte {
	s := string(re.Rune)
	if re.Flags&syntax.FoldCase == 0 {
		if fold {
			return []byte(asciiLower(s))
		}
		return []byte(s)
	}
	var best, cur []byte
	for _, r := range re.Rune {
		if r < utf8.RuneSelf && foldSafe[r] {
			cur = append(cur, asciiLower(string(r))...)
			if len(cur) > len(best) {
				best = append(best[:0], cur...)
			}
			continue
		}
		cur = cur[:0]
	}
	return best
}

// isLiterals reports whether re is exactly one literal or an alternation
// of literals the prefilter holds whole, so a prefilter hit is a match.
func isLiterals(re *syntax.Regexp, fold bool) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			// Exact bytes; when the search folds, "Foo" would also find "foo".
			return !fold || asciiLower(string(re.Rune)) == string(re.Rune) && !hasUpper(re.Rune)
		}
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf || !foldSafe[r] {
				return false
			}
		}
		return true
	case syntax.OpCapture:
		return isLiterals(re.Sub[0], fold)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !isLiterals(s, fold) {
				return false
			}
		}
		return true
	}
	return false
}

func hasUpper(rs []rune) bool {
	for _, r := range rs {
		if unicode.IsUpper(r) || unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// foldSafe marks the ASCII characters all of whose case variants are
// ASCII: every one but k and s (K is also U+212A KELVIN SIGN, s also
// U+017F LATIN SMALL LETTER LONG S), computed from Unicode's folding.
var foldSafe = func() [utf8.RuneSelf]bool {
	var safe [utf8.RuneSelf]bool
	for r := rune(0); r < utf8.RuneSelf; r++ {
		safe[r] = true
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				safe[r] = false
			}
		}
	}
	return safe
}()

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// trigrams returns each literal's distinct trigrams, lower-cased, or nil
// when a literal is too short to have one.
func trigrams(lits [][]byte) [][][3]byte {
	out := make([][][3]byte, len(lits))
	for i, l := range lits {
		if len(l) < 3 {
			return nil
		}
		low := []byte(asciiLower(string(l)))
		for j := 0; j+3 <= len(low); j++ {
			g := [3]byte{low[j], low[j+1], low[j+2]}
			if !slices.Contains(out[i], g) {
				out[i] = append(out[i], g)
			}
		}
	}
	return out
}

// mayMatch reports whether f can hold a match, by its trigrams.
func (q *Query) mayMatch(f *repo.File) bool {
	if len(q.grams) == 0 {
		return true
	}
	t := f.Trigrams()
	for _, set := range q.grams {
		if !slices.ContainsFunc(set, func(lit [][3]byte) bool {
			for _, g := range lit {
				if !t.Has(g[0], g[1], g[2]) {
					return false
				}
			}
			return true
		}) {
			return false
		}
	}
	return true
}

// String describes the query's plan, for tests and logs.
func (q *Query) String() string {
	switch {
	case q.perLine:
		return "every line"
	case q.finders == nil:
		return "whole file"
	}
	var parts []string
	for _, f := range q.finders {
		parts = append(parts, fmt.Sprintf("%q", f.lit))
	}
	return fmt.Sprintf("literals %s fold=%t exact=%t", strings.Join(parts, "|"), q.fold, q.exact)
}
