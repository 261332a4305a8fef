package pathmatch

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// FileGlob is a glob that picks files, as ripgrep's --glob and .gitignore
// read one: a pattern without "/" matches a file's name at any depth
// ("*.ts", "Dockerfile"), a pattern with "/" the file's whole path
// ("src/**/*.ts"; a leading "./" is dropped). It matches files only, never
// the folders above them.
type FileGlob struct {
	pattern  string
	nameOnly bool
}

// NewFileGlob checks pattern (Validate) and returns its FileGlob.
func NewFileGlob(pattern string) (FileGlob, error) {
	pattern = strings.TrimPrefix(pattern, "./")
	if err := Validate(pattern); err != nil {
		return FileGlob{}, err
	}
	return FileGlob{pattern: pattern, nameOnly: !strings.Contains(pattern, "/")}, nil
}

// Match reports whether the file at p (a slash path) matches.
func (g FileGlob) Match(p string) bool {
	if g.nameOnly {
		p = p[strings.LastIndexByte(p, '/')+1:]
	}
	return doublestar.MatchUnvalidated(g.pattern, p)
}
