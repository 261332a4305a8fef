// Package pathmatch matches slash paths against lists of doublestar globs
// ("docs/**", "**/*.pem", "{a,b}/*.md") the way the path rules of the
// repository tools read them: a pattern matches a path when it matches
// the path itself or any folder above it, so "**/.git" matches
// .git/config and "docs/*" matches docs/a/b.md (docs/a matches).
//
// It is the one matcher of the repository's deny policy (shared/repo) and
// of the file tools' allow and deny lists (shared/pathpolicy). A Set says
// which pattern matched, and whether it matched the path or a folder
// above it, so that a refusal can say why.
//
// Each pattern is matched against the whole path (never folder by
// folder), so a match takes time proportional to the path's length for
// the patterns the policies use, and ends for any input: a rooted, empty,
// unclean or invalid UTF-8 path is matched as the string it is (the views
// refuse such names before they ask, and the equivalence with matching
// folder by folder is only tested on valid paths).
package pathmatch

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Case says whether a Set tells upper from lower case.
type Case int

const (
	// CaseSensitive matches "README.md" only as written.
	CaseSensitive Case = iota
	// IgnoreCase matches without regard to case (Unicode lower case), so a
	// deny pattern ".env*" refuses ".ENV" as a case-insensitive file
	// system would open it.
	IgnoreCase
)

// Set is a checked list of patterns.
type Set struct {
	rules []rule
	fold  bool // IgnoreCase: patterns are lower-cased, and so is each path
}

// rule is one pattern, ready to match.
type rule struct {
	pattern string // as given to New
	self    string // matches the path itself
	inside  string // matches whatever lies in what self matches: self + "/**", or self when it ends so
	// literal is a piece of text every path self matches, or that lies in
	// one, holds ("" for none): a path without it is passed at once,
	// without the glob match (a deny list of dozens of patterns stays
	// cheap).
	literal string
}

// A Match says which pattern matched a path, and where.
type Match struct {
	// Index is the pattern's position in the list given to New.
	Index int
	// Pattern is the pattern as given to New.
	Pattern string
	// InFolder is true when the pattern matched a folder above the path
	// rather than the path itself.
	InFolder bool
}

// Validate returns nil when pattern is a valid relative doublestar glob.
// Two spellings doublestar reads differently at the end of a path than
// inside it are refused, so that a pattern means the same for a file and
// for a folder: a trailing "/" and three '*' in a row.
func Validate(pattern string) error {
	switch {
	case pattern == "":
		return errors.New("an empty pattern")
	case strings.HasPrefix(pattern, "/"):
		return fmt.Errorf("%q is absolute; patterns are relative to the root", pattern)
	case strings.HasSuffix(pattern, "/"):
		return fmt.Errorf("%q ends with '/'; drop it: a pattern matches what lies in the folders it matches", pattern)
	case strings.Contains(pattern, "***"):
		return fmt.Errorf("%q has three '*' in a row; use '*' within a name or '**' for any folders", pattern)
	case !doublestar.ValidatePattern(pattern):
		return fmt.Errorf("%q is not a valid glob", pattern)
	}
	return nil
}

// New checks the patterns (Validate) and returns their Set.
func New(patterns []string, c Case) (*Set, error) {
	s := &Set{fold: c == IgnoreCase}
	for _, p := range patterns {
		if err := Validate(p); err != nil {
			return nil, err
		}
		self := p
		if s.fold {
			self = strings.ToLower(p)
		}
		inside := self + "/**"
		if self == "**" || strings.HasSuffix(self, "/**") {
			inside = self // it matches what lies inside what it matches already
		}
		s.rules = append(s.rules, rule{pattern: p, self: self, inside: inside, literal: literal(self)})
	}
	return s, nil
}

// Match returns the first pattern, in the order given to New, that
// matches name or a folder above it.
func (s *Set) Match(name string) (Match, bool) {
	if s.fold {
		name = strings.ToLower(name)
	}
	// inside matches name + "/" exactly when self matches name or a
	// folder above it: one match per pattern finds the rule.
	folder := name + "/"
	for i, r := range s.rules {
		if r.literal != "" && !strings.Contains(folder, r.literal) {
			continue
		}
		if doublestar.MatchUnvalidated(r.inside, folder) {
			return Match{Index: i, Pattern: r.pattern, InFolder: !doublestar.MatchUnvalidated(r.self, name)}, true
		}
	}
	return Match{}, false
}

// literal returns the longest text every string the pattern matches
// holds: a run of plain characters before the pattern's first '[', '{' or
// '\\' (past which it does not look), between '*' and '?', without the
// '/' next to a "**" (which may match nothing, "/" included). It is ""
// for a run with U+FFFD or invalid UTF-8: the glob matcher reads every
// invalid byte as U+FFFD, so text without the run's bytes may match it.
func literal(pattern string) string {
	if i := strings.IndexAny(pattern, `[{\`); i >= 0 {
		pattern = pattern[:i]
	}
	best := ""
	for _, part := range strings.Split(pattern, "**") {
		for _, run := range strings.FieldsFunc(strings.Trim(part, "/"), func(r rune) bool { return r == '*' || r == '?' }) {
			if len(run) > len(best) {
				best = run
			}
		}
	}
	if !utf8.ValidString(best) || strings.ContainsRune(best, utf8.RuneError) {
		return ""
	}
	return best
}

// Literal returns the pattern that matches exactly the path p (its glob
// characters escaped), and so, in a Set, p and everything inside it.
func Literal(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ { // bytes: every glob character is ASCII
		if strings.IndexByte(`\*?[]{}`, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
