package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/secretscan"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// gitFolder is git's own folder, which no repository tool reads.
const gitFolder = "**/.git"

// builtinPattern is a pattern every policy denies, and the secret
// scanners' rule it comes from (nil for gitFolder).
type builtinPattern struct {
	pattern string
	rule    *secretscan.PathRule
}

// builtin are the patterns every policy denies: gitFolder, then those of
// secretscan.PathRules. Configured patterns only add to them.
var builtin = func() []builtinPattern {
	out := []builtinPattern{{pattern: gitFolder}}
	for i := range secretscan.PathRules {
		r := &secretscan.PathRules[i]
		for _, pat := range r.Patterns {
			out = append(out, builtinPattern{pattern: pat, rule: r})
		}
	}
	return out
}()

// DefaultDeny are the paths no repository tool ever reads, searches or
// indexes, in any folder: git's own folder, and the files secret scanners
// flag by name (secretscan.PathRules: keys, credential stores, .env
// files). Deployments add patterns with TOOLSHED_REPO_DENY, and cannot
// remove these.
var DefaultDeny = func() []string {
	out := make([]string, len(builtin))
	for i, b := range builtin {
		out[i] = b.pattern
	}
	return out
}()

// Policy says which paths of a repository the repository tools may see.
// Every View applies it: a path it refuses is never listed, searched or
// indexed, and reading it fails with PATH_NOT_ALLOWED, whether or not the
// file exists. It refuses, the path itself or any folder above it,
// without regard to case (shared/pathmatch):
//
//   - the server's own data directory (its store and every tenant's
//     workspace) when it lies inside the repository;
//   - what the deny patterns match (DefaultDeny and the configured ones).
//
// A View also refuses a file whose content holds a secret
// (secretscan.ContentRules), whatever its path: see content.go.
type Policy struct {
	deny    *pathmatch.Set // the data directory (when inside), DefaultDeny, then the configured patterns
	dataDir string         // slash path of the data directory inside the repository, lower-cased; "" for none
}

// NewPolicy returns the policy of DefaultDeny and extra patterns (from
// TOOLSHED_REPO_DENY, see ParseDeny), with dataDir (a slash path relative
// to the repository root, "" when the data directory is elsewhere) kept
// out.
func NewPolicy(extra []string, dataDir string) (*Policy, error) {
	p := &Policy{dataDir: strings.ToLower(strings.Trim(dataDir, "/"))}
	var patterns []string
	if p.dataDir != "" {
		patterns = append(patterns, pathmatch.Literal(p.dataDir))
	}
	patterns = append(append(patterns, DefaultDeny...), extra...)
	deny, err := pathmatch.New(patterns, pathmatch.IgnoreCase)
	if err != nil {
		return nil, fmt.Errorf("deny pattern: %w", err)
	}
	p.deny = deny
	return p, nil
}

// ParseDeny reads the patterns of TOOLSHED_REPO_DENY (the setting is
// comma-separated), as .gitignore reads them: a pattern without "/" matches a name in any folder
// ("*.sqlite", "private"), one with "/" the path from the repository root
// ("config/prod/*"); a trailing "/" is dropped (a folder is refused with
// everything in it). Unlike .gitignore, a pattern starting with "!" is
// refused: the configured patterns add to DefaultDeny, and nothing
// configured lets the tools read what it denies.
func ParseDeny(patterns []string) ([]string, error) {
	var out []string
	for _, pat := range patterns {
		pat = strings.TrimSuffix(strings.TrimSpace(pat), "/")
		if pat == "" {
			continue
		}
		if strings.HasPrefix(pat, "!") {
			return nil, fmt.Errorf("%s: %q starts with '!', but the deny list cannot be narrowed: its patterns only add to the built-in ones (secrets, keys, .git/), which the repository tools never read", config.RepoDeny.Name(), pat)
		}
		if strings.HasPrefix(pat, "/") {
			pat = strings.TrimPrefix(pat, "/")
		} else if !strings.Contains(pat, "/") {
			pat = "**/" + pat
		}
		if strings.Contains(pat, "\\") {
			return nil, fmt.Errorf("%s: %q has a backslash; use '/' between folders", config.RepoDeny.Name(), pat)
		}
		if err := pathmatch.Validate(pat); err != nil {
			return nil, fmt.Errorf("%s: %w", config.RepoDeny.Name(), err)
		}
		out = append(out, pat)
	}
	return out, nil
}

// LocalPolicy is the policy of a local repository: NewPolicy with the data
// directory located inside root when it lies there. It refuses a data
// directory that is the repository itself or holds it (the tools would
// then serve every tenant's files, or a tenant's workspace as everyone's
// repository).
func LocalPolicy(root, dataDir string, extra []string) (*Policy, error) {
	rel := ""
	if dataDir != "" {
		r, err := realPath(root)
		if err != nil {
			return nil, fmt.Errorf("repository directory %s: %w", root, err)
		}
		d, err := realPath(dataDir)
		if err != nil {
			return nil, fmt.Errorf("data directory %s: %w", dataDir, err)
		}
		switch rel, err = filepath.Rel(r, d); {
		case err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
			rel = "" // elsewhere
			if back, err := filepath.Rel(d, r); err == nil && back != ".." && !strings.HasPrefix(back, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("the repository %s lies inside the data directory %s: serve a repository outside it, or move the data directory (%s, -data)", r, d, config.DataDir.Name())
			}
		case rel == ".":
			return nil, fmt.Errorf("the data directory %s is the repository itself: give the server a data directory of its own (%s, -data)", d, config.DataDir.Name())
		}
		rel = filepath.ToSlash(rel)
	}
	return NewPolicy(extra, rel)
}

// realPath is the absolute path of p with symbolic links resolved; for a
// path that does not exist yet (a data directory created on first use),
// its nearest existing parent is resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", err
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}

// DataDir returns the slash path of the server's data directory inside the
// repository (lower-cased), or "" when it lies elsewhere.
func (p *Policy) DataDir() string { return p.dataDir }

// Check returns nil when the tools may see the slash path name (relative to
// the repository root), or the PATH_NOT_ALLOWED error saying why not.
func (p *Policy) Check(name string) error {
	if why := p.refusal(name); why != "" {
		return denied(name, "%s", why)
	}
	return nil
}

// refusal says why the policy refuses name, or returns "" when it does
// not.
func (p *Policy) refusal(name string) string {
	if p == nil {
		return ""
	}
	m, ok := p.deny.Match(name)
	if !ok {
		return ""
	}
	return p.why(m)
}

// why says in words why the policy refuses a path the rule m matched.
// The rules are, in order: the data directory (when inside), the built-in
// ones, then the configured patterns.
func (p *Policy) why(m pathmatch.Match) string {
	i := m.Index // in builtin
	if p.dataDir != "" {
		i--
	}
	what := strings.TrimPrefix(m.Pattern, "**/")
	where := "it matches"
	if m.InFolder {
		where = "it lies in a folder matching"
	}
	switch {
	case i < 0:
		return fmt.Sprintf("it is in the server's data directory (%s/), which holds every tenant's stored data and is never part of the repository", p.dataDir)
	case i >= len(builtin):
		return fmt.Sprintf("%s %q, which this deployment denies (%s)", where, what, config.RepoDeny.Name())
	case builtin[i].rule == nil:
		return "it is part of git's own folder (.git/), which the repository tools never read"
	}
	r := builtin[i].rule
	return fmt.Sprintf("%s %q (rule %s: %s), which the repository tools never read", where, what, r.ID, r.What)
}

// denied is the refusal of a path.
func denied(name, format string, args ...any) *toolerr.Error {
	return toolerr.New(toolerr.PathNotAllowed, "Permission denied: %s is not readable: %s", name, fmt.Sprintf(format, args...)).
		With("path", name)
}
